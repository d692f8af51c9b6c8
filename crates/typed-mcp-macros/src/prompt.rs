//! `#[prompt]`: a function whose parameters are `String` or
//! `Option<String>` becomes a prompt with those arguments.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{LitStr, Type};

use crate::attr::{Reader, parse_args};
use crate::ctxt::Ctxt;
use crate::func::{
    Function, Kind, analyze, bind_this, call_args, call_expr, check_docs, decl_signature,
    emit_with_errors, handler_closure, opt_str, parse_item, tokens_text,
};

const KEYS: &[&str] = &["name", "title", "caps"];

#[derive(Default)]
struct PromptArgs {
    name: Option<LitStr>,
    title: Option<LitStr>,
    caps: Vec<(String, syn::Path)>,
}

impl PromptArgs {
    fn read(cx: &Ctxt, tokens: TokenStream) -> Self {
        let mut out = PromptArgs::default();
        let mut reader = Reader::new(cx, "#[prompt]", KEYS);
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
                "name" => out.name = value,
                "title" => out.title = value,
                _ => unreachable!("every valid key is handled"),
            }
        }
        out
    }
}

fn segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => segment(&g.elem),
        Type::Paren(p) => segment(&p.elem),
        _ => None,
    }
}

fn inner_type(segment: &syn::PathSegment) -> Option<&Type> {
    match &segment.arguments {
        syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => match &a.args[0] {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

/// `Option<T>`'s `T`, read from how the type is written.
pub(crate) fn option_inner(ty: &Type) -> Option<&Type> {
    segment(ty)
        .filter(|s| s.ident == "Option")
        .and_then(inner_type)
}

/// A type that is plainly not a string (a number, a flag, a collection).
fn plainly_not_string(ty: &Type) -> bool {
    const NOT_STRINGS: &[&str] = &[
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
        "f32", "f64", "bool", "char", "Vec", "HashMap", "BTreeMap", "HashSet", "BTreeSet",
    ];
    match ty {
        Type::Tuple(_) | Type::Array(_) | Type::Slice(_) => true,
        _ => segment(ty).is_some_and(|s| NOT_STRINGS.iter().any(|n| s.ident == n)),
    }
}

/// Expands `#[prompt(...)]`.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    let args = PromptArgs::read(&cx, attr);
    let Some(item_fn) = parse_item(&cx, Kind::Prompt, item.clone()) else {
        let errors = cx.check().expect_err("parse_item records its error");
        return quote!(#item #errors);
    };
    let function = analyze(&cx, Kind::Prompt, item_fn);
    check_docs(&cx, Kind::Prompt, &function);
    let mut plainly_wrong = Vec::new();
    for param in &function.params {
        let ty = option_inner(&param.ty).unwrap_or(&param.ty);
        if plainly_not_string(ty) {
            plainly_wrong.push(param.name.clone());
            cx.error_spanned_by(
                &param.ty,
                format!(
                    "prompt arguments are strings on the wire, so parameter `{}` must be `String` or `Option<String>`, not `{}`: take a string and parse it in the body",
                    param.name,
                    tokens_text(&param.ty)
                ),
            );
        }
    }
    let assertions = assertions(&function, &plainly_wrong);
    if let Err(errors) = cx.check() {
        return emit_with_errors(
            &function,
            quote!(::typed_mcp::__private::PromptDecl),
            assertions,
            errors,
        );
    }
    generate(&function, &args, assertions)
}

/// `assert_prompt_argument::<T>()` at each parameter type not reported
/// already: a type alias or a custom type that is not a string.
fn assertions(function: &Function, reported: &[String]) -> TokenStream {
    function
        .params
        .iter()
        .filter(|param| param.type_ok && !reported.contains(&param.name))
        .map(|param| {
            let ty = &param.ty;
            quote_spanned!(ty.span()=> ::typed_mcp::__private::assert_prompt_argument::<#ty>();)
        })
        .collect()
}

fn generate(function: &Function, args: &PromptArgs, assertions: TokenStream) -> TokenStream {
    let p = quote!(::typed_mcp::__private);
    let item = &function.item;
    let docs = &function.docs.docs;

    // Read the arguments before the future is made, so it owns only strings.
    let mut prelude = Vec::new();
    let reads = call_args(function, |param| {
        let name = &param.name;
        let local = quote::format_ident!("__typed_mcp_arg_{}", param.name);
        let value = quote!(__args.get(#name).cloned());
        prelude.push(if option_inner(&param.ty).is_some() {
            quote!(let #local = #value;)
        } else {
            quote!(let #local = ::core::option::Option::unwrap_or_default(#value);)
        });
        quote!(#local)
    });
    let body = call_expr(function, reads);
    let closure = handler_closure(
        function,
        quote!(__args),
        quote!(::std::collections::BTreeMap<::std::string::String, ::std::string::String>),
        quote!(#(#prelude)*),
        body,
    );

    let arguments = function.params.iter().map(|param| {
        let name = &param.name;
        let text = docs.entry(name).map(|e| e.text.clone()).unwrap_or_default();
        let required = option_inner(&param.ty).is_none();
        quote!((#name, #text, #required))
    });
    let name = args
        .name
        .as_ref()
        .map(LitStr::value)
        .unwrap_or_else(|| function.name.clone());
    let title = opt_str(args.title.as_ref());
    let description = docs.description.clone().unwrap_or_default();
    let constructor = if function.is_async {
        quote!(#p::prompt_async)
    } else {
        quote!(#p::prompt_blocking)
    };
    let caps = crate::tool::caps_expr(&args.caps);
    let signature = decl_signature(function, quote!(::typed_mcp::__private::PromptDecl));
    let bind = bind_this(function);

    quote! {
        #item

        #signature {
            #assertions
            #bind
            #constructor(
                #p::PromptAttrs {
                    name: #name,
                    title: #title,
                    description: #description,
                    arguments: &[#(#arguments),*],
                    caps: #caps,
                },
                #closure,
            )
        }
    }
}
