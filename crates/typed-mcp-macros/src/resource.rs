//! `#[resource(uri = "...")]`: a function becomes a resource, or a resource
//! template when its URI has `{variables}`, each filled into the parameter
//! of the same name.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::LitStr;

use crate::attr::{Reader, parse_args};
use crate::ctxt::Ctxt;
use crate::func::{
    Function, Kind, analyze, bind_this, call_args, call_expr, check_docs, decl_signature,
    emit_with_errors, handler_closure, opt_str, parse_item, tokens_text,
};

const KEYS: &[&str] = &["uri", "name", "title", "mime_type", "caps"];

#[derive(Default)]
struct ResourceArgs {
    uri: Option<LitStr>,
    name: Option<LitStr>,
    title: Option<LitStr>,
    mime_type: Option<LitStr>,
    caps: Vec<(String, syn::Path)>,
}

impl ResourceArgs {
    fn read(cx: &Ctxt, tokens: TokenStream) -> Self {
        let mut out = ResourceArgs::default();
        let mut reader = Reader::new(cx, "#[resource]", KEYS);
        for arg in parse_args(cx, tokens) {
            let Some(key) = reader.key(&arg) else {
                continue;
            };
            if key == "caps" {
                out.caps = crate::tool::read_caps(cx, &arg);
                continue;
            }
            let value = reader.string(&arg);
            match key.as_str() {
                "uri" => out.uri = value,
                "name" => out.name = value,
                "title" => out.title = value,
                "mime_type" => out.mime_type = value,
                _ => unreachable!("every valid key is handled"),
            }
        }
        out
    }
}

fn is_string(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "String" && s.arguments.is_none()),
        syn::Type::Group(g) => is_string(&g.elem),
        syn::Type::Paren(p) => is_string(&p.elem),
        _ => false,
    }
}

/// Expands `#[resource(...)]`.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    let args = ResourceArgs::read(&cx, attr);
    let Some(item_fn) = parse_item(&cx, Kind::Resource, item.clone()) else {
        let errors = cx.check().expect_err("parse_item records its error");
        return quote!(#item #errors);
    };
    let function = analyze(&cx, Kind::Resource, item_fn);
    check_docs(&cx, Kind::Resource, &function);
    let variables = match &args.uri {
        None => {
            cx.error_at(
                Span::call_site(),
                "#[resource] needs the resource's URI: write `#[resource(uri = \"scheme://path\")]`; a `{name}` in it makes a template whose variable fills the parameter `name`",
            );
            None
        }
        // The rules `Server::build` applies to a template declared at run time.
        Some(uri) => match typed_mcp_syntax::template_variables(&uri.value()) {
            Ok(variables) => Some(variables.into_iter().map(str::to_owned).collect::<Vec<_>>()),
            Err(message) => {
                cx.error_spanned_by(uri, format!("invalid URI template: {message}"));
                None
            }
        },
    };
    if let (Some(variables), Some(uri)) = (&variables, &args.uri) {
        check_variables(&cx, &function, variables, uri);
    }
    if let Err(errors) = cx.check() {
        return emit_with_errors(
            &function,
            quote!(::typed_mcp::__private::AnyResourceDecl),
            TokenStream::new(),
            errors,
        );
    }
    generate(
        &function,
        &args,
        args.uri.as_ref().expect("checked"),
        &variables.expect("checked"),
    )
}

fn check_variables(cx: &Ctxt, function: &Function, variables: &[String], uri: &LitStr) {
    let fn_name = &function.name;
    for variable in variables {
        if function.params.iter().any(|p| &p.name == variable) {
            continue;
        }
        let hint = if syn::parse_str::<syn::Ident>(variable).is_ok() {
            format!("add `{variable}: String` to the parameters of `{fn_name}`")
        } else {
            format!(
                "`{variable}` cannot name a Rust parameter, so rename the variable (e.g. `{{{}}}`) and add a parameter of that name",
                variable.replace('.', "_")
            )
        };
        cx.error_spanned_by(
            uri,
            format!("the URI template variable `{{{variable}}}` has no parameter: {hint}"),
        );
    }
    for param in &function.params {
        if !variables.contains(&param.name) {
            let what = if variables.is_empty() {
                format!("the URI {:?} has no variables", uri.value())
            } else {
                format!("it is not a variable of the URI template {:?}", uri.value())
            };
            cx.error_spanned_by(
                &param.tokens,
                format!(
                    "parameter `{0}` gets no value: {what}; the parameters of a #[resource] function are filled from the URI, so add `{{{0}}}` to the template or remove the parameter",
                    param.name
                ),
            );
        } else if !is_string(&param.ty) && !matches!(param.ty, syn::Type::Reference(_)) {
            cx.error_spanned_by(
                &param.ty,
                format!(
                    "parameter `{0}` receives the template variable `{{{0}}}`, which is text: declare it `{0}: String` (not `{1}`) and parse it in the body",
                    param.name,
                    tokens_text(&param.ty)
                ),
            );
        }
    }
}

fn generate(
    function: &Function,
    args: &ResourceArgs,
    uri: &LitStr,
    variables: &[String],
) -> TokenStream {
    let p = quote!(::typed_mcp::__private);
    let item = &function.item;
    let docs = &function.docs.docs;

    let mut prelude = Vec::new();
    let reads = call_args(function, |param| {
        let local = format_ident!("__typed_mcp_var_{}", param.name);
        let name = &param.name;
        prelude.push(quote! {
            let #local: ::std::string::String = ::std::borrow::ToOwned::to_owned(
                ::core::option::Option::unwrap_or_default(__request.variable(#name)),
            );
        });
        quote!(#local)
    });
    let body = call_expr(function, reads);
    let closure = handler_closure(
        function,
        quote!(__request),
        quote!(::typed_mcp::__private::ResourceRequest),
        quote!(#(#prelude)*),
        body,
    );

    let name = args
        .name
        .as_ref()
        .map(LitStr::value)
        .unwrap_or_else(|| function.name.clone());
    let title = opt_str(args.title.as_ref());
    let mime_type = opt_str(args.mime_type.as_ref());
    let description = docs.description.clone().unwrap_or_default();
    let parameters = variables.iter().map(|variable| {
        let text = docs
            .entry(variable)
            .map(|e| e.text.clone())
            .unwrap_or_default();
        quote!((#variable, #text))
    });
    let constructor = if function.is_async {
        quote!(#p::resource_async)
    } else {
        quote!(#p::resource_blocking)
    };
    let caps = crate::tool::caps_expr(&args.caps);
    let signature = decl_signature(function, quote!(#p::AnyResourceDecl));
    let bind = bind_this(function);

    quote! {
        #item

        #signature {
            #bind
            #constructor(
                #p::ResourceAttrs {
                    uri: #uri,
                    name: #name,
                    title: #title,
                    description: #description,
                    mime_type: #mime_type,
                    parameters: &[#(#parameters),*],
                    caps: #caps,
                },
                #closure,
            )
        }
    }
}
