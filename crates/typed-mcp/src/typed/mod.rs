//! The typed layer: what `#[tool]`, `#[resource]` and `#[prompt]` expand to.
//!
//! A typed tool's arguments type derives its input schema; the arguments a
//! client sends are validated against that schema (every problem reported at
//! once) and only then decoded, so a bad argument never reaches the function.
//! Its return type decides the reply and the output schema (see [`output`]).

pub(crate) mod answer;
pub(crate) mod args;
pub(crate) mod call;
pub(crate) mod output;
pub(crate) mod prompt;
pub(crate) mod resource;
pub(crate) mod schema;
pub(crate) mod simple_schema;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use typed_mcp_core::ToolArguments;
use typed_mcp_core::wire::{CallToolResult, ToolAnnotations};

use crate::answer::Answer;
use crate::context::{CallNote, ToolContext};
use crate::declare::{ToolDecl, ToolReply, blocking};
use args::{ArgumentCheck, ArgumentValidator, invalid_arguments_result};
use output::{Output, OutputShape};

/// The static facts of a typed tool, as a macro writes them.
#[derive(Debug, Clone, Copy)]
pub struct ToolAttrs {
    /// Wire name.
    pub name: &'static str,
    /// Display name.
    pub title: Option<&'static str>,
    /// What the tool does (the doc comment's first paragraph).
    pub description: &'static str,
    /// `readOnlyHint: true`.
    pub read_only: bool,
    /// `destructiveHint`.
    pub destructive: Option<bool>,
    /// `idempotentHint`.
    pub idempotent: Option<bool>,
    /// `openWorldHint`.
    pub open_world: Option<bool>,
    /// A call taking longer is answered as a timed-out tool error.
    pub timeout_ms: Option<u64>,
    /// The capabilities a call needs.
    pub caps: &'static [crate::Capability],
    /// Whether a call may run as a task (`#[tool(task)]`).
    pub task: Option<crate::tasks::TaskSupport>,
    /// The named validators of the arguments (see [`args::ArgumentCheck`]).
    pub checks: fn() -> Vec<ArgumentCheck>,
}

/// Validates and decodes the arguments of one typed tool, and encodes its
/// replies. Built once per declaration.
struct TypedTool {
    name: &'static str,
    /// `Err` when the schema does not compile: `Server::build` then refuses
    /// the declaration, so no call ever reaches it.
    validator: Result<ArgumentValidator, String>,
    /// The named validators of the arguments, run after decoding.
    checks: Vec<ArgumentCheck>,
    output: OutputShape,
}

impl TypedTool {
    fn new<O: Output>(
        attrs: &ToolAttrs,
        input_schema: &Value,
        checks: Vec<ArgumentCheck>,
    ) -> TypedTool {
        let validator = ArgumentValidator::new(input_schema);
        TypedTool {
            name: attrs.name,
            validator,
            checks,
            output: O::describe(),
        }
    }

    /// The decoded arguments, or the `isError` result listing every problem.
    /// (The result is the common case's reply, not an exceptional path worth
    /// boxing.)
    #[allow(clippy::result_large_err)]
    fn decode<A: DeserializeOwned>(
        &self,
        arguments: ToolArguments,
        ctx: &ToolContext,
    ) -> Result<A, CallToolResult> {
        let Ok(validator) = &self.validator else {
            return Err(CallToolResult::error(format!(
                "tool {:?} has a schema that does not compile",
                self.name
            )));
        };
        // Arguments that arrived as text are decoded from it when they are
        // valid (the common case); anything else, and every named
        // validator, takes the `Value` path, which reports every problem.
        if self.checks.is_empty()
            && let Some(text) = arguments.as_text()
            && let Some(decoded) = validator.decode_text::<A>(text)
        {
            return Ok(decoded);
        }
        validator
            .decode(Value::Object(arguments.into_map()), &self.checks)
            .map_err(|problems| {
                ctx.note(CallNote::InvalidArguments);
                invalid_arguments_result(self.name, &problems)
            })
    }

    fn finish<O: Output>(&self, value: O, ctx: &ToolContext) -> ToolReply {
        if let Some(identity) = value.error_identity() {
            ctx.note(CallNote::Error {
                error_type: identity.error_type,
                variant: identity.variant,
            });
        }
        let reply = value.into_outcome(&self.output);
        self.output.check(self.name, &reply)?;
        reply
    }
}

/// Why `Server::build` must refuse a typed tool's schema, if it must: it does
/// not compile (an invalid `#[schemars(regex = ...)]`), or it declares a
/// named validator's rule that would not run (the `garde` feature is off).
fn schema_fault<A: JsonSchema>(typed: &TypedTool, garde: bool) -> Option<String> {
    if let Err(reason) = &typed.validator {
        return Some(reason.clone());
    }
    if !garde && schema::declares_validator_rules::<A>() {
        return Some(format!(
            "it declares a named validator rule (`{}`), which runs only with typed-mcp's `garde` feature: enable it",
            schema::VALIDATOR_KEYWORD
        ));
    }
    None
}

fn builder<A: JsonSchema, O: Output>(
    attrs: &ToolAttrs,
) -> (crate::declare::ToolBuilder, Arc<TypedTool>) {
    let input_schema = schema::input_schema_for::<A>();
    let typed = Arc::new(TypedTool::new::<O>(attrs, &input_schema, (attrs.checks)()));
    let fault = schema_fault::<A>(&typed, cfg!(feature = "garde"));
    let mut annotations = ToolAnnotations::default();
    annotations.read_only_hint = attrs.read_only.then_some(true);
    annotations.destructive_hint = attrs.destructive;
    annotations.idempotent_hint = attrs.idempotent;
    annotations.open_world_hint = attrs.open_world;
    let mut builder = ToolDecl::builder(attrs.name)
        .description(attrs.description)
        .input_schema(input_schema)
        .annotations(annotations)
        .capabilities(attrs.caps);
    if let Some(title) = attrs.title {
        builder = builder.title(title);
    }
    if let Some(schema) = &typed.output.schema {
        builder = builder.output_schema(schema.clone());
    }
    if let Some(ms) = attrs.timeout_ms {
        builder = builder.timeout(Duration::from_millis(ms));
    }
    if let Some(task) = attrs.task {
        builder = builder.task(task);
    }
    builder.schema_fault = fault;
    (builder, typed)
}

/// A typed tool whose function is async.
pub fn tool_async<A, F, Fut, O>(attrs: ToolAttrs, f: F) -> ToolDecl
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = O> + Send + 'static,
    O: Output,
{
    let (builder, typed) = builder::<A, O>(&attrs);
    let typed_for_check = typed.clone();
    let f = Arc::new(f);
    let mut decl = builder.arguments_handler(move |arguments, ctx| {
        let decoded = typed.decode::<A>(arguments, &ctx);
        let typed = typed.clone();
        let f = f.clone();
        async move {
            match decoded {
                Ok(args) => {
                    let value = f(args, ctx.clone()).await;
                    typed.finish(value, &ctx)
                }
                Err(invalid) => Ok(Answer::Done(invalid)),
            }
        }
    });
    decl.asks_input = O::ASKS_INPUT;
    decl.arguments_valid = Some(arguments_valid::<A>(&typed_for_check));
    decl
}

/// A typed tool whose function is synchronous: it runs on the blocking pool.
pub fn tool_blocking<A, F, O>(attrs: ToolAttrs, f: F) -> ToolDecl
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A, ToolContext) -> O + Send + Sync + 'static,
    O: Output,
{
    let (builder, typed) = builder::<A, O>(&attrs);
    let typed_for_check = typed.clone();
    let f = Arc::new(f);
    let mut decl = builder.arguments_handler(move |arguments, ctx| {
        let typed = typed.clone();
        let f = f.clone();
        blocking(move || match typed.decode::<A>(arguments, &ctx) {
            Ok(args) => {
                let value = f(args, ctx.clone());
                typed.finish(value, &ctx)
            }
            Err(invalid) => Ok(Answer::Done(invalid)),
        })
    });
    decl.asks_input = O::ASKS_INPUT;
    decl.arguments_valid = Some(arguments_valid::<A>(&typed_for_check));
    decl
}

/// Whether arguments would decode (see `ToolDecl::arguments_valid`): the
/// same validation and decoding as the call's, its value dropped.
fn arguments_valid<A: DeserializeOwned + 'static>(
    typed: &Arc<TypedTool>,
) -> crate::declare::ArgumentsValid {
    let typed = typed.clone();
    Arc::new(move |arguments| match &typed.validator {
        Ok(validator) => validator
            .decode::<A>(Value::Object(arguments.clone()), &typed.checks)
            .is_ok(),
        Err(_) => false,
    })
}

/// A parameter type a tool can take: it has a JSON form.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it has no JSON form",
    label = "this parameter's type must implement `serde::Deserialize` and `schemars::JsonSchema`",
    note = "derive both on the type: `#[derive(serde::Deserialize, schemars::JsonSchema)]`"
)]
pub trait ToolArgument: DeserializeOwned + JsonSchema {}

impl<T: DeserializeOwned + JsonSchema> ToolArgument for T {}

/// Checked by generated code, at the parameter's span.
pub fn assert_argument<T: ToolArgument>() {}

/// A parameter type a prompt can take: prompt arguments are strings on the wire.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a prompt parameter: prompt arguments are strings",
    label = "use `String`, or `Option<String>` for an optional argument",
    note = "parse the string inside the prompt function if you need another type"
)]
pub trait PromptArgumentType {}

impl PromptArgumentType for String {}
impl PromptArgumentType for Option<String> {}

/// Checked by generated code, at the parameter's span.
pub fn assert_prompt_argument<T: PromptArgumentType>() {}

/// Binds a method declaration to shared state: an `Arc<T>` (or `&Arc<T>`) is
/// shared as is; a `T: Clone` (or `&T`) is cloned into a new `Arc`. Generated
/// code calls `(&&Binder(&value)).bind()`, and method resolution picks the first
/// trait below that applies (autoref specialization), in the order listed.
#[derive(Debug)]
pub struct Binder<'a, T>(pub &'a T);

/// Binding of an `Arc<T>` or a `&Arc<T>` (preferred).
pub trait BindArc {
    /// The state type.
    type Target;
    /// The shared state.
    fn bind(&self) -> Arc<Self::Target>;
}

impl<T> BindArc for &Binder<'_, Arc<T>> {
    type Target = T;
    fn bind(&self) -> Arc<T> {
        Arc::clone(self.0)
    }
}

impl<T> BindArc for &Binder<'_, &Arc<T>> {
    type Target = T;
    fn bind(&self) -> Arc<T> {
        Arc::clone(self.0)
    }
}

/// Binding of a clone of the `T` behind a `&T`.
pub trait BindRefClone {
    /// The state type.
    type Target;
    /// The shared state.
    fn bind(&self) -> Arc<Self::Target>;
}

impl<T: Clone> BindRefClone for &&Binder<'_, &T> {
    type Target = T;
    fn bind(&self) -> Arc<T> {
        Arc::new((*self.0).clone())
    }
}

/// Binding of a clone of a `T: Clone` (the fallback).
pub trait BindClone {
    /// The state type.
    type Target;
    /// The shared state.
    fn bind(&self) -> Arc<Self::Target>;
}

impl<T: Clone> BindClone for Binder<'_, T> {
    type Target = T;
    fn bind(&self) -> Arc<T> {
        Arc::new(self.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;

    use super::*;

    /// Unchecked input.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Plain {
        /// A name.
        name: String,
    }

    /// Input with a named validator's rule.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Ruled {
        /// A ticket.
        #[schemars(extend("x-validator" = "must name an open ticket"))]
        ticket: String,
    }

    fn typed<A: JsonSchema>() -> TypedTool {
        let attrs = ToolAttrs {
            name: "t",
            title: None,
            description: "A tool.",
            read_only: false,
            destructive: None,
            idempotent: None,
            open_world: None,
            timeout_ms: None,
            caps: &[],
            task: None,
            checks: Vec::new,
        };
        TypedTool::new::<output::Unit>(&attrs, &schema::input_schema_for::<A>(), Vec::new())
    }

    #[test]
    fn a_validator_rule_without_the_garde_feature_is_a_fault() {
        let fault = schema_fault::<Ruled>(&typed::<Ruled>(), false).expect("refused");
        assert!(fault.contains("`garde` feature"), "{fault}");
        assert_eq!(schema_fault::<Ruled>(&typed::<Ruled>(), true), None);
        assert_eq!(schema_fault::<Plain>(&typed::<Plain>(), false), None);
    }
}
