//! The model of a decorated function, shared by `#[tool]`, `#[resource]` and
//! `#[prompt]`: its parameters, receiver, context parameter and doc comment,
//! read and checked before any code is generated.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote};
use syn::ext::IdentExt;
use syn::{Attribute, FnArg, Ident, Item, ItemFn, Pat, ReturnType, Type};

use crate::attr::{Reader, parse_args};
use crate::ctxt::Ctxt;
use crate::docs::DocComment;

/// Which attribute is being expanded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Resource,
    Prompt,
}

impl Kind {
    /// `#[tool]`.
    pub(crate) fn attribute(self) -> &'static str {
        match self {
            Kind::Tool => "#[tool]",
            Kind::Resource => "#[resource]",
            Kind::Prompt => "#[prompt]",
        }
    }

    /// `tool`.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Resource => "resource",
            Kind::Prompt => "prompt",
        }
    }

    /// What a parameter is called on the wire.
    fn parameter_noun(self) -> &'static str {
        match self {
            Kind::Tool => "the argument",
            Kind::Resource => "the template variable",
            Kind::Prompt => "the argument",
        }
    }
}

/// A `#[arg(default ...)]`.
pub(crate) enum ArgDefault {
    /// `#[arg(default)]`: `Default::default()`.
    Trait,
    /// `#[arg(default = expr)]`.
    Expr(syn::Expr),
}

/// A parameter the client supplies.
pub(crate) struct Param {
    /// The identifier as written (possibly raw, `r#type`).
    pub(crate) ident: Ident,
    /// Its wire name (`type` for `r#type`).
    pub(crate) name: String,
    pub(crate) ty: Type,
    /// The whole `name: Type`, for diagnostics.
    pub(crate) tokens: TokenStream,
    /// False when the type was already reported (a borrow, `impl Trait`),
    /// so no trait assertion is emitted for it.
    pub(crate) type_ok: bool,
    pub(crate) default: Option<ArgDefault>,
    /// `#[schemars(..)]`, `#[validate(..)]` and `#[garde(..)]` attributes,
    /// forwarded to the arguments struct's field.
    pub(crate) forwarded: Vec<Attribute>,
}

/// One argument of the call to the user's function, in signature order.
pub(crate) enum CallArg {
    /// The n-th [`Param`].
    Param(usize),
    /// The call's context, by value or by reference.
    Context { by_ref: bool },
}

/// A decorated function, read and checked.
pub(crate) struct Function {
    /// The function as it is emitted: unchanged but for the helper
    /// attributes removed from its parameters.
    pub(crate) item: ItemFn,
    pub(crate) ident: Ident,
    /// `ident` without `r#`.
    pub(crate) name: String,
    /// A `&self` method (any receiver; a wrong one has been reported).
    pub(crate) method: bool,
    pub(crate) is_async: bool,
    pub(crate) params: Vec<Param>,
    pub(crate) call: Vec<CallArg>,
    pub(crate) docs: DocComment,
    /// A parameter without a plain name was reported; entries cannot be
    /// matched against the parameters reliably.
    pub(crate) unnamed_params: bool,
}

/// Parses the item an attribute is on; records an error and returns `None`
/// unless it is a function with a body.
pub(crate) fn parse_item(cx: &Ctxt, kind: Kind, item: TokenStream) -> Option<ItemFn> {
    let parsed = match syn::parse2::<Item>(item.clone()) {
        Ok(parsed) => parsed,
        Err(_) => {
            cx.error_spanned_by(
                &item,
                format!(
                    "{} goes on a function or a `&self` method with a body",
                    kind.attribute()
                ),
            );
            return None;
        }
    };
    if let Item::Fn(f) = parsed {
        return Some(f);
    }
    let (what, head) = describe(&parsed);
    let hint = match &parsed {
        Item::Impl(_) => format!(
            "; put it on a method inside the impl block (`{} fn ...(&self, ...)`)",
            kind.attribute()
        ),
        _ => format!(
            "; put it on the function that implements the {}",
            kind.noun()
        ),
    };
    cx.error_spanned_by(
        head,
        format!(
            "{} goes on a function or a `&self` method, not on {what}{hint}",
            kind.attribute()
        ),
    );
    None
}

/// What an item is, and the tokens naming it (`struct Ticket`).
fn describe(item: &Item) -> (&'static str, TokenStream) {
    match item {
        Item::Struct(i) => ("a struct", pair(&i.struct_token, &i.ident)),
        Item::Enum(i) => ("an enum", pair(&i.enum_token, &i.ident)),
        Item::Union(i) => ("a union", pair(&i.union_token, &i.ident)),
        Item::Trait(i) => ("a trait", pair(&i.trait_token, &i.ident)),
        Item::Impl(i) => ("an impl block", pair(&i.impl_token, &i.self_ty)),
        Item::Mod(i) => ("a module", pair(&i.mod_token, &i.ident)),
        Item::Const(i) => ("a constant", pair(&i.const_token, &i.ident)),
        Item::Static(i) => ("a static", pair(&i.static_token, &i.ident)),
        Item::Type(i) => ("a type alias", pair(&i.type_token, &i.ident)),
        Item::Use(i) => ("a `use` declaration", i.to_token_stream()),
        Item::ExternCrate(i) => ("an `extern crate`", i.to_token_stream()),
        Item::ForeignMod(i) => ("an `extern` block", i.abi.to_token_stream()),
        Item::Macro(i) => ("a macro", i.mac.path.to_token_stream()),
        other => ("this item", other.to_token_stream()),
    }
}

fn pair(a: &impl ToTokens, b: &impl ToTokens) -> TokenStream {
    quote!(#a #b)
}

/// True for `ToolContext` (any path ending in it).
fn is_context(ty: &Type) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "ToolContext" && s.arguments.is_none()),
        Type::Group(g) => is_context(&g.elem),
        Type::Paren(p) => is_context(&p.elem),
        _ => false,
    }
}

/// The owned type to suggest for a borrowed one.
fn owned_suggestion(r: &syn::TypeReference) -> String {
    let elem = &r.elem;
    match &**elem {
        Type::Path(p) if p.path.is_ident("str") => "String".to_owned(),
        Type::Path(p) if p.path.is_ident("Path") => "PathBuf".to_owned(),
        Type::Slice(s) => format!("Vec<{}>", tokens_text(&s.elem)),
        other => tokens_text(other),
    }
}

/// Tokens as a user would write them (`Vec<String>`, not `Vec < String >`).
pub(crate) fn tokens_text(tokens: &impl ToTokens) -> String {
    let text = tokens.to_token_stream().to_string();
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1).copied();
            let tight = matches!(prev, Some('<' | '&' | ':' | '(' | '['))
                || matches!(next, Some('<' | '>' | ',' | ':' | ')' | ']'));
            if tight {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// Reads and checks a function's signature and docs. Errors are recorded in
/// `cx`; the returned model is complete enough to emit a stub.
pub(crate) fn analyze(cx: &Ctxt, kind: Kind, mut item: ItemFn) -> Function {
    let sig = &item.sig;
    let attribute = kind.attribute();
    if let Some(unsafety) = &sig.unsafety {
        cx.error_spanned_by(
            unsafety,
            format!(
                "a {attribute} function cannot be `unsafe`: it is called with whatever a client sends; make it safe and keep the `unsafe` block inside"
            ),
        );
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(
            abi,
            format!("a {attribute} function cannot have an `extern` ABI; remove it"),
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        let tokens = if sig.generics.params.is_empty() {
            sig.generics.where_clause.to_token_stream()
        } else {
            sig.generics.to_token_stream()
        };
        cx.error_spanned_by(
            tokens,
            format!(
                "a {attribute} function cannot be generic: its {} is derived from concrete parameter and return types; remove the generic parameters and use concrete types",
                if kind == Kind::Tool { "input schema" } else { "declaration" }
            ),
        );
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(
            variadic,
            format!("a {attribute} function cannot be variadic"),
        );
    }
    if let ReturnType::Type(_, ty) = &sig.output
        && contains_impl_trait(ty)
    {
        cx.error_spanned_by(
            ty,
            format!(
                "a {attribute} function must return a concrete type, not `impl Trait`: the reply is derived from the return type"
            ),
        );
    }

    let ident = sig.ident.clone();
    let name = ident.unraw().to_string();
    let is_async = sig.asyncness.is_some();
    let mut method = false;
    let mut params = Vec::new();
    let mut call = Vec::new();
    let mut context_seen = false;
    let mut unnamed_params = false;

    for input in item.sig.inputs.iter_mut() {
        match input {
            FnArg::Receiver(receiver) => {
                method = true;
                check_receiver(cx, kind, receiver);
            }
            FnArg::Typed(pat_type) => {
                let (helpers, kept): (Vec<Attribute>, Vec<Attribute>) =
                    std::mem::take(&mut pat_type.attrs)
                        .into_iter()
                        .partition(|a| {
                            ["arg", "schemars", "validate", "garde"]
                                .iter()
                                .any(|h| a.path().is_ident(h))
                        });
                pat_type.attrs = kept;
                let param_ident = match &*pat_type.pat {
                    Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                        Some(p.ident.clone())
                    }
                    other => {
                        cx.error_spanned_by(
                            other,
                            format!(
                                "give this parameter a plain name, like `point: Point`: the name is {} the client sends",
                                kind.parameter_noun()
                            ),
                        );
                        None
                    }
                };
                let ty = &*pat_type.ty;
                let (context, by_ref) = match ty {
                    Type::Reference(r) if is_context(&r.elem) => {
                        if let Some(m) = &r.mutability {
                            cx.error_spanned_by(
                                m,
                                "take the context as `&ToolContext` or `ToolContext`, not `&mut ToolContext`",
                            );
                        }
                        (true, true)
                    }
                    ty => (is_context(ty), false),
                };
                if context {
                    if context_seen {
                        cx.error_spanned_by(
                            &*pat_type,
                            "only one parameter can receive the `ToolContext`; remove this one",
                        );
                    }
                    context_seen = true;
                    for helper in &helpers {
                        cx.error_spanned_by(
                            helper,
                            "the `ToolContext` parameter is not an argument, so it takes no attributes; remove this one",
                        );
                    }
                    call.push(CallArg::Context { by_ref });
                    continue;
                }
                let type_ok = check_param_type(cx, kind, ty, param_ident.as_ref());
                let (default, forwarded) = read_helpers(cx, kind, helpers);
                let Some(param_ident) = param_ident else {
                    unnamed_params = true;
                    continue;
                };
                call.push(CallArg::Param(params.len()));
                params.push(Param {
                    name: param_ident.unraw().to_string(),
                    ident: param_ident,
                    ty: ty.clone(),
                    tokens: pat_type.to_token_stream(),
                    type_ok,
                    default,
                    forwarded,
                });
            }
        }
    }

    let docs = DocComment::from_attrs(&item.attrs);
    Function {
        item,
        ident,
        name,
        method,
        is_async,
        params,
        call,
        docs,
        unnamed_params,
    }
}

fn contains_impl_trait(ty: &Type) -> bool {
    match ty {
        Type::ImplTrait(_) => true,
        Type::Group(g) => contains_impl_trait(&g.elem),
        Type::Paren(p) => contains_impl_trait(&p.elem),
        Type::Reference(r) => contains_impl_trait(&r.elem),
        Type::Path(p) => p.path.segments.iter().any(|s| match &s.arguments {
            syn::PathArguments::AngleBracketed(a) => a.args.iter().any(|arg| match arg {
                syn::GenericArgument::Type(t) => contains_impl_trait(t),
                _ => false,
            }),
            _ => false,
        }),
        Type::Tuple(t) => t.elems.iter().any(contains_impl_trait),
        _ => false,
    }
}

fn check_receiver(cx: &Ctxt, kind: Kind, receiver: &syn::Receiver) {
    let attribute = kind.attribute();
    let shared_ref = match (&receiver.reference, &receiver.colon_token) {
        (Some(_), _) => receiver.mutability.is_none(),
        // `self: &Self`
        (None, Some(_)) => matches!(
            &*receiver.ty,
            Type::Reference(r) if r.mutability.is_none()
                && matches!(&*r.elem, Type::Path(p) if p.path.is_ident("Self"))
        ),
        (None, None) => false,
    };
    if shared_ref {
        return;
    }
    let message = if receiver.reference.is_some() {
        format!(
            "a {attribute} method must take `&self`, not `&mut self`: calls may run at the same time and share one value; keep mutable state behind a `Mutex` (or another interior-mutability type) and take `&self`"
        )
    } else if receiver.colon_token.is_none() {
        format!(
            "a {attribute} method must take `&self`, not `self`: the declaration keeps the value in an `Arc` shared by every call; take `&self`"
        )
    } else {
        format!(
            "a {attribute} method must take `&self`: the declaration keeps the value in an `Arc` shared by every call"
        )
    };
    cx.error_spanned_by(receiver, message);
}

/// Reports a parameter type no declaration can take; true when it is fine.
fn check_param_type(cx: &Ctxt, kind: Kind, ty: &Type, ident: Option<&Ident>) -> bool {
    let name = ident
        .map(|i| format!("`{}`", i.unraw()))
        .unwrap_or_else(|| "this parameter".to_owned());
    match ty {
        Type::Reference(r) => {
            let what = match kind {
                Kind::Tool => "arguments are decoded into owned values",
                Kind::Resource => "template variables are decoded into owned strings",
                Kind::Prompt => "prompt arguments are passed as owned strings",
            };
            cx.error_spanned_by(
                r,
                format!(
                    "parameter {name} is borrowed (`{}`): {what}, so take `{}` instead",
                    tokens_text(r),
                    owned_suggestion(r)
                ),
            );
            false
        }
        Type::ImplTrait(t) => {
            cx.error_spanned_by(
            t,
            format!(
                "parameter {name} has an `impl Trait` type, which makes the function generic: a {} function needs concrete parameter types; use one",
                kind.attribute()
            ),
        );
            false
        }
        Type::Group(g) => check_param_type(cx, kind, &g.elem, ident),
        Type::Paren(p) => check_param_type(cx, kind, &p.elem, ident),
        _ => true,
    }
}

/// The `#[garde(...)]` rules a parameter may carry: the ones schemars turns
/// into schema keywords, which the argument validator enforces. Any other
/// (`custom`, `ascii`, `email`, a format the validator only annotates...)
/// would be a rule that never runs, so it is a compile error pointing at
/// the way that does run: the rule on a field of a type deriving
/// `garde::Validate`.
const SCHEMA_GARDE_RULES: &[&str] = &[
    "length", "range", "required", "pattern", "contains", "inner",
];

fn check_garde_rules(cx: &Ctxt, helper: &Attribute) {
    let _ = helper.parse_nested_meta(|meta| check_garde_rule(cx, meta));
}

fn check_garde_rule(cx: &Ctxt, meta: syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    let rule = meta
        .path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default();
    if !SCHEMA_GARDE_RULES.contains(&rule.as_str()) {
        cx.error_spanned_by(
            &meta.path,
            format!(
                "`#[garde({})]` on a tool parameter would never run: here garde rules only shape the schema (length, range, required, pattern, contains, inner); put the rule on a field of a type that derives `garde::Validate`, and take that type",
                tokens_text(&meta.path)
            ),
        );
    }
    if rule == "inner" {
        // The rules of a collection's items: the same ones are allowed.
        return meta.parse_nested_meta(|inner| check_garde_rule(cx, inner));
    }
    // Skip the rule's own arguments: `length(min = 1)`, `pattern("..")`.
    if meta.input.peek(syn::token::Paren) {
        let _arguments;
        syn::parenthesized!(_arguments in meta.input);
    } else if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    }
    Ok(())
}

/// Reads `#[arg(...)]` and collects the attributes forwarded to the field.
fn read_helpers(
    cx: &Ctxt,
    kind: Kind,
    helpers: Vec<Attribute>,
) -> (Option<ArgDefault>, Vec<Attribute>) {
    let mut default = None;
    let mut forwarded = Vec::new();
    for helper in helpers {
        if kind != Kind::Tool {
            cx.error_spanned_by(
                &helper,
                format!(
                    "`#[{}]` applies to #[tool] parameters only; remove it",
                    tokens_text(helper.path())
                ),
            );
            continue;
        }
        if helper.path().is_ident("garde") {
            check_garde_rules(cx, &helper);
        }
        if !helper.path().is_ident("arg") {
            forwarded.push(helper);
            continue;
        }
        let tokens = match &helper.meta {
            syn::Meta::List(list) => list.tokens.clone(),
            _ => {
                cx.error_spanned_by(
                    &helper,
                    "write `#[arg(default = expr)]` or `#[arg(default)]`",
                );
                continue;
            }
        };
        let mut reader = Reader::new(cx, "#[arg]", &["default"]);
        for arg in parse_args(cx, tokens) {
            if reader.key(&arg).as_deref() == Some("default") {
                default = Some(match arg.value {
                    None => ArgDefault::Trait,
                    Some(expr) => ArgDefault::Expr(expr),
                });
            }
        }
    }
    (default, forwarded)
}

/// Checks the description and the `# Arguments` list against the parameters.
pub(crate) fn check_docs(cx: &Ctxt, kind: Kind, function: &Function) {
    let docs = &function.docs.docs;
    let name = &function.name;
    let noun = kind.noun();
    let fill = match kind {
        Kind::Tool => "fill in each argument",
        Kind::Resource => "fill in each variable",
        Kind::Prompt => "fill in each argument",
    };

    // No doc comment at all: one error that shows the whole comment to write.
    if function.docs.is_absent() {
        let mut template = format!("/// <what the {noun} does>");
        if !function.params.is_empty() {
            template.push_str("\n///\n/// # Arguments");
            for param in &function.params {
                template.push_str(&format!("\n/// * `{}` - <what it is>", param.name));
            }
        }
        cx.error_spanned_by(
            &function.ident,
            format!(
                "{noun} `{name}` has no doc comment: the model reads its first paragraph to decide when to use the {noun}{}\nadd one above the attribute, like this:\n{template}",
                if function.params.is_empty() {
                    String::new()
                } else {
                    format!(", and its `# Arguments` list to {fill}")
                }
            ),
        );
        return;
    }

    if docs.description.is_none() {
        cx.error_spanned_by(
            &function.ident,
            format!(
                "{noun} `{name}` has no description: the model reads the first paragraph of the doc comment to decide when to use the {noun}\nstart the doc comment with one:\n/// <what the {noun} does>\n///"
            ),
        );
    }
    for param in &function.params {
        if docs.entry(&param.name).is_none() {
            let where_ = if docs.has_arguments_section {
                format!("add this line under `# Arguments` in the doc comment of `{name}`:")
            } else {
                format!(
                    "add an `# Arguments` section to the doc comment of `{name}`:\n/// # Arguments"
                )
            };
            cx.error_spanned_by(
                &param.tokens,
                format!(
                    "parameter `{p}` is not documented: the model reads its `# Arguments` entry to fill it in\n{where_}\n/// * `{p}` - <what it is>",
                    p = param.name,
                ),
            );
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    for entry in &docs.entries {
        let span = function.docs.span(entry.origin);
        if seen.contains(&entry.name.as_str()) {
            cx.error_at(
                span,
                format!(
                    "`{}` is documented twice under `# Arguments`; keep one entry",
                    entry.name
                ),
            );
            continue;
        }
        seen.push(&entry.name);
        if !function.params.iter().any(|p| p.name == entry.name) {
            // The context parameter may be documented for human readers, and
            // a parameter without a plain name was reported already.
            let is_context_param = function.item.sig.inputs.iter().any(|input| {
                matches!(input, FnArg::Typed(t)
                    if matches!(&*t.pat, Pat::Ident(p) if p.ident.unraw() == entry.name))
            });
            if !is_context_param && !function.unnamed_params {
                let names: Vec<String> = function
                    .params
                    .iter()
                    .map(|p| format!("`{}`", p.name))
                    .collect();
                let have = if names.is_empty() {
                    "it has none".to_owned()
                } else {
                    format!("its parameters: {}", names.join(", "))
                };
                cx.error_at(
                    span,
                    format!(
                        "`# Arguments` documents `{}`, but `{name}` has no parameter of that name ({have})\nrename the entry to match a parameter, or remove it",
                        entry.name
                    ),
                );
            }
            continue;
        }
        if entry.text.is_empty() {
            cx.error_at(
                span,
                format!(
                    "the `# Arguments` entry for `{0}` is empty: the model reads it to fill in the argument\nsay what it is after a dash:\n/// * `{0}` - <what it is>",
                    entry.name,
                ),
            );
        }
    }
    for line in &docs.malformed {
        cx.error_at(
            function.docs.span(line.origin),
            "cannot read this `# Arguments` line: write each entry as rustdoc's convention has it, a name in backticks, a dash and its description:\n/// * `name` - <what it is>",
        );
    }
}

/// `__typed_mcp_decl_<name>`, the hidden constructor every kind emits.
pub(crate) fn decl_ident(ident: &Ident) -> Ident {
    format_ident!("__typed_mcp_decl_{}", ident.unraw(), span = ident.span())
}

/// The hidden constructor's signature, `(self: Arc<Self>)` for a method.
pub(crate) fn decl_signature(function: &Function, returns: TokenStream) -> TokenStream {
    let vis = &function.item.vis;
    let decl = decl_ident(&function.ident);
    let cfgs = cfgs(function);
    let receiver = function
        .method
        .then(|| quote!(self: ::typed_mcp::__private::Arc<Self>));
    quote! {
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(dead_code, deprecated, non_snake_case, clippy::all)]
        #vis fn #decl(#receiver) -> #returns
    }
}

/// The function's `#[cfg]` attributes: the constructor exists exactly when
/// the function does.
pub(crate) fn cfgs(function: &Function) -> impl Iterator<Item = &Attribute> {
    function
        .item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
}

/// The function as emitted, followed by a stand-in constructor when the
/// declaration has errors, so a list naming it reports nothing more. The
/// stand-in still runs the parameter type `checks`, so a type error is
/// reported in the same compile run as the macro's own errors.
pub(crate) fn emit_with_errors(
    function: &Function,
    returns: TokenStream,
    checks: TokenStream,
    errors: TokenStream,
) -> TokenStream {
    let item = &function.item;
    let vis = &function.item.vis;
    let decl = decl_ident(&function.ident);
    let cfgs = cfgs(function);
    let receiver = function
        .method
        .then(|| quote!(self: ::std::sync::Arc<Self>));
    quote! {
        #item
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(dead_code, deprecated, unused_variables, non_snake_case, clippy::all)]
        #vis fn #decl(#receiver) -> #returns {
            #checks
            ::core::unreachable!()
        }
        #errors
    }
}

/// The call of the user's function with `args`, from inside the hidden
/// constructor (`this` is the `Arc<Self>` of a method).
pub(crate) fn call_expr(function: &Function, args: Vec<TokenStream>) -> TokenStream {
    let ident = &function.ident;
    let call = if function.method {
        quote!(Self::#ident(&*__this, #(#args),*))
    } else {
        quote!(#ident(#(#args),*))
    };
    if function.is_async {
        quote!(#call.await)
    } else {
        call
    }
}

/// The arguments of the call: each parameter read by `read`, the context
/// passed as `__ctx`.
pub(crate) fn call_args(
    function: &Function,
    mut read: impl FnMut(&Param) -> TokenStream,
) -> Vec<TokenStream> {
    function
        .call
        .iter()
        .map(|arg| match arg {
            CallArg::Param(i) => read(&function.params[*i]),
            CallArg::Context { by_ref: true } => quote!(&__ctx),
            CallArg::Context { by_ref: false } => quote!(__ctx),
        })
        .collect()
}

/// Wraps a call into the handler closure the `__private` constructors take:
/// `|input: #input_ty, __ctx| ...`, async or blocking, cloning the `Arc` of
/// a method into each call.
pub(crate) fn handler_closure(
    function: &Function,
    input: TokenStream,
    input_ty: TokenStream,
    prelude: TokenStream,
    body: TokenStream,
) -> TokenStream {
    let clone_this = function
        .method
        .then(|| quote!(let __this = ::typed_mcp::__private::Arc::clone(&__this);));
    if function.is_async {
        quote! {
            move |#input: #input_ty, __ctx: ::typed_mcp::__private::ToolContext| {
                #clone_this
                #prelude
                async move { #body }
            }
        }
    } else {
        quote! {
            move |#input: #input_ty, __ctx: ::typed_mcp::__private::ToolContext| {
                #prelude
                #body
            }
        }
    }
}

/// `let __this = self;` for a method's constructor.
pub(crate) fn bind_this(function: &Function) -> TokenStream {
    if function.method {
        quote!(let __this = self;)
    } else {
        TokenStream::new()
    }
}

/// A string literal or `None` as an `Option<&'static str>`.
pub(crate) fn opt_str(value: Option<&syn::LitStr>) -> TokenStream {
    match value {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}
