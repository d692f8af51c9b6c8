//! `#[tool]`: a function (or `&self` method) becomes a tool declaration.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{LitStr, ReturnType, Type};

use crate::attr::{Reader, parse_args, parse_duration_ms, path_text};
use crate::ctxt::Ctxt;
use crate::func::{
    ArgDefault, Function, Kind, analyze, bind_this, call_args, call_expr, check_docs,
    decl_signature, emit_with_errors, handler_closure, opt_str, parse_item,
};

/// The keys `#[tool(...)]` accepts.
const KEYS: &[&str] = &[
    "name",
    "title",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "timeout",
    "timeout_ms",
    "caps",
    "task",
    "task_inline",
];

/// What `#[tool(...)]` says.
#[derive(Default)]
struct ToolArgs {
    name: Option<LitStr>,
    title: Option<LitStr>,
    read_only: bool,
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: Option<bool>,
    timeout_ms: Option<u64>,
    /// Each capability's name, and its path (referenced, so a misspelt
    /// constant fails to compile).
    caps: Vec<(String, syn::Path)>,
    /// `task` (optional) or `task = "required"`: whether a call may run as a
    /// task, and whether only a task will do.
    task: Option<bool>,
    /// `task_inline = "200ms"`: how long a task call runs inline first.
    task_inline_ms: Option<u64>,
}

impl ToolArgs {
    fn read(cx: &Ctxt, tokens: TokenStream) -> Self {
        let mut out = ToolArgs::default();
        let mut reader = Reader::new(cx, "#[tool]", KEYS);
        let mut read_only_span = None;
        let mut timeout_span: Option<Span> = None;
        let mut task_inline_span: Option<Span> = None;
        for arg in parse_args(cx, tokens) {
            let Some(key) = reader.key(&arg) else {
                continue;
            };
            match key.as_str() {
                "name" => out.name = reader.string(&arg),
                "title" => out.title = reader.string(&arg),
                "read_only" => {
                    out.read_only = reader.flag(&arg).unwrap_or(false);
                    read_only_span = Some(arg.key.span());
                }
                "destructive" => out.destructive = reader.flag(&arg),
                "idempotent" => out.idempotent = reader.flag(&arg),
                "open_world" => out.open_world = reader.flag(&arg),
                "timeout" | "timeout_ms" => {
                    if timeout_span.is_some() {
                        cx.error_spanned_by(
                            &arg.key,
                            "give either `timeout` or `timeout_ms`, not both",
                        );
                        continue;
                    }
                    timeout_span = Some(arg.key.span());
                    let ms = if key == "timeout" {
                        reader.string(&arg).and_then(|lit| {
                            let ms = parse_duration_ms(&lit.value());
                            if ms.is_none() {
                                cx.error_spanned_by(
                                    &lit,
                                    format!(
                                        "cannot read the duration {:?}: write a whole number and a unit, such as \"500ms\", \"30s\", \"2m\" or \"1h\"",
                                        lit.value()
                                    ),
                                );
                            }
                            ms
                        })
                    } else {
                        reader.integer(&arg)
                    };
                    if ms == Some(0) {
                        cx.error_spanned_by(
                            arg.value.as_ref(),
                            "a timeout of zero would fail every call; give a positive duration",
                        );
                    }
                    out.timeout_ms = ms.filter(|&ms| ms > 0);
                }
                "caps" => out.caps = read_caps(cx, &arg),
                "task" => {
                    out.task = match &arg.value {
                        Some(syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(s),
                            ..
                        })) => match s.value().as_str() {
                            "optional" => Some(false),
                            "required" => Some(true),
                            other => {
                                cx.error_spanned_by(
                                    s,
                                    format!(
                                        "`task` is \"optional\" or \"required\", found {other:?}: write `task` (a plain call or a task) or `task = \"required\"` (a task only)"
                                    ),
                                );
                                None
                            }
                        },
                        _ => reader.flag(&arg).and_then(|on| on.then_some(false)),
                    };
                }
                "task_inline" => {
                    task_inline_span = Some(arg.key.span());
                    out.task_inline_ms = reader.string(&arg).and_then(|lit| {
                        let ms = parse_duration_ms(&lit.value());
                        if ms.is_none() {
                            cx.error_spanned_by(
                                &lit,
                                format!(
                                    "cannot read the duration {:?}: write a whole number and a unit, such as \"200ms\" or \"2s\"",
                                    lit.value()
                                ),
                            );
                        }
                        ms
                    });
                }
                _ => unreachable!("every valid key is handled"),
            }
        }
        if let (Some(span), None) = (task_inline_span, out.task) {
            cx.error_at(
                span,
                "`task_inline` applies to a task-capable tool: add `task` (or `task = \"required\"`)",
            );
        }
        if out.read_only && out.destructive == Some(true) {
            cx.error_at(
                read_only_span.unwrap_or_else(Span::call_site),
                "a tool cannot be both `read_only` and `destructive`: `destructive` describes a tool that modifies its environment; remove one",
            );
        }
        out
    }
}

/// `caps = [A, path::B]` (or a single path): the capabilities' names.
pub(crate) fn read_caps(cx: &Ctxt, arg: &crate::attr::Arg) -> Vec<(String, syn::Path)> {
    let message = "`caps` takes a list of capability constants: write `caps = [DESK_WRITE]`";
    let exprs: Vec<&syn::Expr> = match &arg.value {
        Some(syn::Expr::Array(array)) => array.elems.iter().collect(),
        Some(path @ syn::Expr::Path(_)) => vec![path],
        Some(other) => {
            cx.error_spanned_by(other, message);
            return Vec::new();
        }
        None => {
            cx.error_spanned_by(&arg.key, message);
            return Vec::new();
        }
    };
    let mut caps = Vec::new();
    for expr in exprs {
        match expr {
            syn::Expr::Path(p) if p.qself.is_none() => {
                caps.push((path_text(&p.path), p.path.clone()))
            }
            other => cx.error_spanned_by(
                other,
                "name a capability constant here (a path such as `DESK_WRITE` or `caps::DESK_WRITE`)",
            ),
        }
    }
    caps
}

/// True for a wire name the spec allows: `[A-Za-z0-9_.-]{1,128}`, the rule
/// `Server::build` applies too.
pub(crate) use typed_mcp_syntax::is_valid_tool_name as valid_tool_name;

/// How the return value becomes a reply. The wrappers (`Result`, `Answer`,
/// `Option`, `()`) are read from how the return type is written; what is
/// inside them is classified by its type, not its name (see [`wrap`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shape {
    /// No return type, or `()`.
    Unit,
    /// Any other `T`: the library's content types (`ContentBlock`,
    /// `Vec<ContentBlock>`, `CallToolResult`) by trait, anything else
    /// structured content with an output schema.
    Value,
    /// `Option<T>`.
    Optional,
    /// `Result<T, E>` (or an alias `Result<T>`), with the shape of `T`.
    Fallible(Box<Shape>),
    /// `Answer<T>`: `T`'s shape, or a request for input first.
    Answer(Box<Shape>),
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

fn type_args(segment: &syn::PathSegment) -> Vec<&Type> {
    match &segment.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|arg| match arg {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn is_unit(ty: &Type) -> bool {
    match ty {
        Type::Tuple(t) => t.elems.is_empty(),
        Type::Group(g) => is_unit(&g.elem),
        Type::Paren(p) => is_unit(&p.elem),
        _ => false,
    }
}

/// The shape of a return type.
pub(crate) fn shape(output: &ReturnType) -> Shape {
    match output {
        ReturnType::Default => Shape::Unit,
        ReturnType::Type(_, ty) => shape_of(ty, Level::Top),
    }
}

/// Where a type sits: `Result` is read at the top only, `Answer` at the top
/// or inside a `Result`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Top,
    InResult,
    InAnswer,
}

fn shape_of(ty: &Type, level: Level) -> Shape {
    peel(ty, level).0
}

/// The shape of `ty` and the type of the value it replies with: the leaf
/// once the wrappers a call resolves (`Result`'s error, `Answer`'s request
/// for input) are peeled, `None` for `()`. One walk decides both, so the
/// typed call returns exactly what the reply encodes.
fn peel(ty: &Type, level: Level) -> (Shape, Option<&Type>) {
    if is_unit(ty) {
        return (Shape::Unit, None);
    }
    let Some(segment) = last_segment(ty) else {
        return (Shape::Value, Some(ty));
    };
    let args = type_args(segment);
    let ident = &segment.ident;
    if level == Level::Top && ident == "Result" && (1..=2).contains(&args.len()) {
        let (inner, leaf) = peel(args[0], Level::InResult);
        return (Shape::Fallible(Box::new(inner)), leaf);
    }
    if level != Level::InAnswer && ident == "Answer" && args.len() == 1 {
        let (inner, leaf) = peel(args[0], Level::InAnswer);
        return (Shape::Answer(Box::new(inner)), leaf);
    }
    if ident == "Option" && args.len() == 1 {
        return (Shape::Optional, Some(ty));
    }
    (Shape::Value, Some(ty))
}

/// The type a typed call of a function with this return type yields
/// (`None`: nothing, `()`).
pub(crate) fn called_type(output: &ReturnType) -> Option<&Type> {
    match output {
        ReturnType::Default => None,
        ReturnType::Type(_, ty) => peel(ty, Level::Top).1,
    }
}

/// `value` wrapped for its shape.
fn wrap(shape: &Shape, value: TokenStream) -> TokenStream {
    let p = quote!(::typed_mcp::__private);
    match shape {
        Shape::Unit => quote!({
            let () = #value;
            #p::Unit
        }),
        // Autoref dispatch: `LibraryOutput` is implemented for the library's
        // content types only and wins when it applies; any other type falls
        // through to `StructuredOutput`, so a user's own `Content` struct is
        // structured output.
        Shape::Value => quote!({
            use #p::{LibraryOutput as _, StructuredOutput as _};
            let __leaf = #value;
            (&#p::Leaf::of(&__leaf)).wrap(__leaf)
        }),
        Shape::Optional => quote!(#p::Optional(#value)),
        Shape::Fallible(inner) => {
            let inner = wrap(inner, quote!(__value));
            quote!(#p::Fallible(::core::result::Result::map(#value, |__value| #inner)))
        }
        Shape::Answer(inner) => {
            let inner = wrap(inner, quote!(__value));
            quote!(#p::Answered(::typed_mcp::__private::Answer::map(#value, |__value| #inner)))
        }
    }
}

/// Expands `#[tool(...)]`.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    let args = ToolArgs::read(&cx, attr);
    let Some(item_fn) = parse_item(&cx, Kind::Tool, item.clone()) else {
        let errors = cx.check().expect_err("parse_item records its error");
        return quote!(#item #errors);
    };
    let function = analyze(&cx, Kind::Tool, item_fn);
    check_docs(&cx, Kind::Tool, &function);
    let wire_name = match &args.name {
        Some(lit) => {
            if !valid_tool_name(&lit.value()) {
                cx.error_spanned_by(
                    lit,
                    format!(
                        "tool name {:?} is invalid: use 1 to 128 characters from A-Z a-z 0-9 _ . -",
                        lit.value()
                    ),
                );
            }
            lit.value()
        }
        None => {
            if !valid_tool_name(&function.name) {
                cx.error_spanned_by(
                    &function.ident,
                    format!(
                        "the tool name `{}` (the function's name) is invalid: use 1 to 128 characters from A-Z a-z 0-9 _ . -, or give one with `#[tool(name = \"...\")]`",
                        function.name
                    ),
                );
            }
            function.name.clone()
        }
    };
    if let Err(errors) = cx.check() {
        return emit_with_errors(
            &function,
            quote!(::typed_mcp::__private::ToolDecl),
            assertions(&function),
            errors,
        );
    }
    generate(&function, &args, &wire_name)
}

/// `assert_argument::<T>()` for each parameter type, at the type's span, so
/// a type with no JSON form is reported there with a readable message.
fn assertions(function: &Function) -> TokenStream {
    function
        .params
        .iter()
        .filter(|param| param.type_ok)
        .map(|param| {
            let ty = &param.ty;
            quote_spanned!(ty.span()=> ::typed_mcp::__private::assert_argument::<#ty>();)
        })
        .collect()
}

fn generate(function: &Function, args: &ToolArgs, wire_name: &str) -> TokenStream {
    let p = quote!(::typed_mcp::__private);
    let assertions = assertions(function);
    let item = &function.item;
    let docs = &function.docs.docs;
    let args_struct = format_ident!("__TypedMcpArgs_{}", function.name);

    let mut fields = Vec::new();
    let mut default_fns = Vec::new();
    for param in &function.params {
        let ident = &param.ident;
        let ty = &param.ty;
        let text = docs
            .entry(&param.name)
            .map(|e| e.text.clone())
            .unwrap_or_default();
        let forwarded = &param.forwarded;
        let default = match &param.default {
            None => TokenStream::new(),
            Some(ArgDefault::Trait) => quote!(#[serde(default)]),
            Some(ArgDefault::Expr(expr)) => {
                let helper = format_ident!("__typed_mcp_default_{}", param.name);
                let path = helper.to_string();
                default_fns.push(quote! {
                    #[allow(non_snake_case, clippy::all)]
                    fn #helper() -> #ty { #expr }
                });
                quote!(#[serde(default = #path)])
            }
        };
        fields.push(quote! {
            #[doc = #text]
            #default
            #(#forwarded)*
            #ident: #ty
        });
    }

    // The named validator of each parameter type that has one (autoref
    // dispatch: `GardeRules` when the type implements `garde::Validate`).
    let checks = function.params.iter().map(|param| {
        let ty = &param.ty;
        let name = &param.name;
        quote! {
            if let ::core::option::Option::Some(check) = (&&#p::Rules::<#ty>::new()).check() {
                checks.push(#p::ArgumentCheck { name: #name, check });
            }
        }
    });

    let reads = call_args(function, |param| {
        let ident = &param.ident;
        quote!(__args.#ident)
    });
    let body = wrap(&shape(&item.sig.output), call_expr(function, reads));
    let closure = handler_closure(
        function,
        quote!(__args),
        quote!(#args_struct),
        TokenStream::new(),
        body,
    );

    let name = wire_name;
    let title = opt_str(args.title.as_ref());
    let description = docs.description.clone().unwrap_or_default();
    let read_only = args.read_only;
    let opt_bool = |b: Option<bool>| match b {
        Some(b) => quote!(::core::option::Option::Some(#b)),
        None => quote!(::core::option::Option::None),
    };
    let destructive = opt_bool(args.destructive);
    let idempotent = opt_bool(args.idempotent);
    let open_world = opt_bool(args.open_world);
    let timeout_ms = match args.timeout_ms {
        Some(ms) => quote!(::core::option::Option::Some(#ms)),
        None => quote!(::core::option::Option::None),
    };
    let caps = caps_expr(&args.caps);
    let task = match args.task {
        None => quote!(::core::option::Option::None),
        Some(required) => {
            let support = if required {
                quote!(::typed_mcp::tasks::TaskSupport::required())
            } else {
                quote!(::typed_mcp::tasks::TaskSupport::optional())
            };
            let support = match args.task_inline_ms {
                Some(ms) => {
                    quote!(#support.inline_window(::core::time::Duration::from_millis(#ms)))
                }
                None => support,
            };
            quote!(::core::option::Option::Some(#support))
        }
    };
    let constructor = if function.is_async {
        quote!(#p::tool_async)
    } else {
        quote!(#p::tool_blocking)
    };
    let signature = decl_signature(function, quote!(::typed_mcp::__private::ToolDecl));
    let bind = bind_this(function);
    let typed_call = crate::call::generate(function, wire_name);

    quote! {
        #item

        #typed_call

        #signature {
            #[derive(#p::serde::Deserialize, #p::schemars::JsonSchema)]
            #[serde(crate = "::typed_mcp::__private::serde", deny_unknown_fields)]
            #[schemars(crate = "::typed_mcp::__private::schemars")]
            #[allow(non_camel_case_types)]
            struct #args_struct {
                #(#fields,)*
            }
            #(#default_fns)*
            #assertions
            #bind
            #constructor(
                #p::ToolAttrs {
                    name: #name,
                    title: #title,
                    description: #description,
                    read_only: #read_only,
                    destructive: #destructive,
                    idempotent: #idempotent,
                    open_world: #open_world,
                    timeout_ms: #timeout_ms,
                    caps: #caps,
                    task: #task,
                    checks: || {
                        #[allow(unused_imports)]
                        use #p::{GardeRules as _, NoRules as _};
                        #[allow(unused_mut)]
                        let mut checks = ::std::vec::Vec::new();
                        #(#checks)*
                        checks
                    },
                },
                #closure,
            )
        }
    }
}

/// The `&'static [Capability]` of `caps = [...]`: a const block, so each path
/// must name a `Capability` constant (a misspelt one fails to compile there).
pub(crate) fn caps_expr(caps: &[(String, syn::Path)]) -> TokenStream {
    let paths = caps.iter().map(|(_, path)| path);
    quote!(const { &[#(#paths),*] })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape_str(ty: &str) -> Shape {
        let output: ReturnType = syn::parse_str(&format!("-> {ty}")).unwrap();
        shape(&output)
    }

    #[test]
    fn shapes_follow_the_written_return_type() {
        assert_eq!(shape(&ReturnType::Default), Shape::Unit);
        assert_eq!(shape_str("()"), Shape::Unit);
        assert_eq!(shape_str("i64"), Shape::Value);
        assert_eq!(shape_str("Vec<Ticket>"), Shape::Value);
        // Content types are told apart by trait in the generated code.
        assert_eq!(shape_str("Content"), Shape::Value);
        assert_eq!(shape_str("typed_mcp::wire::ContentBlock"), Shape::Value);
        assert_eq!(shape_str("CallToolResult"), Shape::Value);
        assert_eq!(shape_str("Option<Ticket>"), Shape::Optional);
        assert_eq!(
            shape_str("Result<Ticket, DeskError>"),
            Shape::Fallible(Box::new(Shape::Value))
        );
        assert_eq!(
            shape_str("anyhow::Result<()>"),
            Shape::Fallible(Box::new(Shape::Unit))
        );
        assert_eq!(
            shape_str("Result<Vec<ContentBlock>, E>"),
            Shape::Fallible(Box::new(Shape::Value))
        );
        assert_eq!(
            shape_str("Result<Option<T>, E>"),
            Shape::Fallible(Box::new(Shape::Optional))
        );
        assert_eq!(
            shape_str("Answer<Ticket>"),
            Shape::Answer(Box::new(Shape::Value))
        );
        assert_eq!(
            shape_str("Result<Answer<Vec<Content>>, E>"),
            Shape::Fallible(Box::new(Shape::Answer(Box::new(Shape::Value))))
        );
        assert_eq!(
            shape_str("Answer<Answer<T>>"),
            Shape::Answer(Box::new(Shape::Value))
        );
        // A `Result` nested in a model is data.
        assert_eq!(
            shape_str("Result<Result<T, E>, E>"),
            Shape::Fallible(Box::new(Shape::Value))
        );
    }

    #[test]
    fn the_typed_call_returns_the_replied_value() {
        let called = |ty: &str| {
            let output: ReturnType = syn::parse_str(&format!("-> {ty}")).unwrap();
            called_type(&output).map(crate::func::tokens_text)
        };
        assert_eq!(called("()"), None);
        assert_eq!(called("Result<(), E>"), None);
        assert_eq!(called("Answer<()>"), None);
        assert_eq!(called("i64").as_deref(), Some("i64"));
        assert_eq!(
            called("Result<Vec<Ticket>, E>").as_deref(),
            Some("Vec<Ticket>")
        );
        assert_eq!(
            called("io::Result<Answer<String>>").as_deref(),
            Some("String")
        );
        assert_eq!(called("Option<Ticket>").as_deref(), Some("Option<Ticket>"));
        assert_eq!(called("Answer<Option<u8>>").as_deref(), Some("Option<u8>"));
        // The wrappers a reply does not read stay data, as in `shape`.
        assert_eq!(
            called("Result<Result<T, E>, E>").as_deref(),
            Some("Result<T, E>")
        );
        assert_eq!(called("Answer<Answer<T>>").as_deref(), Some("Answer<T>"));
    }

    #[test]
    fn tool_names() {
        assert!(valid_tool_name("add"));
        assert!(valid_tool_name("desk.close-ticket_2"));
        assert!(!valid_tool_name(""));
        assert!(!valid_tool_name("close ticket"));
        assert!(!valid_tool_name(&"a".repeat(129)));
    }
}
