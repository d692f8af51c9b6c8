//! Procedural macros of [typed-mcp](https://docs.rs/typed-mcp): `#[tool]`,
//! `#[resource]`, `#[prompt]`, and the lists `tools![...]`,
//! `resources![...]`, `prompts![...]`. Use them through `typed_mcp`, which
//! re-exports them; the code they generate calls into `typed_mcp` and
//! nothing else.
//!
//! A decorated function stays an ordinary function. Beside it the attribute
//! emits a hidden constructor, `__typed_mcp_decl_<name>`, that builds the
//! declaration; the list macros call those constructors in order. Nothing is
//! registered globally: a server serves exactly the lists it is given.
//! `#[tool]` also emits `call_<name>`, the typed call of the tool through
//! any `CallTool` (see [`macro@tool`]).
//!
//! Every macro checks its input the way `serde_derive` does: it reads the
//! function into a model, checks the model, and reports **every** problem
//! in one compile run, each at the offending tokens with a message that says
//! how to fix it. Only then is code generated.

#![warn(missing_docs, unreachable_pub)]
#![forbid(unsafe_code)]

mod attr;
mod call;
mod ctxt;
mod docs;
mod func;
mod list;
mod prompt;
mod resource;
mod tool;

use proc_macro::TokenStream;

use crate::func::Kind;

/// Declares a tool: an ordinary function (sync or `async`) or a `&self`
/// method whose signature and doc comment are the tool's whole contract.
///
/// * The first paragraph of the doc comment is the tool's description, and
///   the `# Arguments` list (`` * `name` - text ``) describes each parameter.
///   A missing description, an undocumented parameter or an entry for a
///   parameter that does not exist is a compile error.
/// * The parameters become the input schema (a `JsonSchema` +
///   `Deserialize` struct with unknown fields denied). A parameter of type
///   `ToolContext` or `&ToolContext` receives the call's context instead.
/// * The return type decides the reply: `T` → structured content with an
///   output schema; `Result<T, E>` → the same, or `isError` with `E`'s
///   message chain; `Option<T>` → structured `null` for `None`;
///   the library's `ContentBlock`/`Vec<ContentBlock>` → content without an
///   output schema; `CallToolResult` → sent as is; `()` → an empty success;
///   `Answer<T>` → like `T`, or an `input_required` result for
///   `Answer::NeedsInput`. The wrappers (`Result`, `Option`, `Answer`) are
///   read from how the return type is written (its last path segment), so
///   an alias of `Result` with one argument (`io::Result<T>`) works too;
///   what they hold is classified by type, so a type of your own named
///   `Content` is structured output.
///
/// Arguments, all optional: `name = "..."` (the wire name, by default the
/// function's), `title = "..."`, the hints `read_only`, `destructive`,
/// `idempotent`, `open_world`, a deadline `timeout = "30s"` (or
/// `timeout_ms = 30000`), and `caps = [CAPABILITY, ...]`.
///
/// On a parameter, `#[arg(default = expr)]` (or `#[arg(default)]` for
/// `Default::default()`) makes it optional with that default, shown in the
/// schema; `#[schemars(...)]`, `#[validate(...)]` and `#[garde(...)]` are
/// passed to the schema (`#[schemars(range(min = 1, max = 100))]`). A
/// `#[garde(...)]` rule the schema cannot carry (`custom`, `ascii`, `email`...)
/// is a compile error there: it would never run (see named validators below).
///
/// Schemas are closed and portable: every struct in them lists its fields
/// with `additionalProperties: false`, so an unknown field anywhere is
/// refused (with every other problem, in one `isError` result) rather than
/// dropped, without `#[serde(deny_unknown_fields)]`. Maps (`HashMap`,
/// `BTreeMap`, `serde_json::Map`) stay maps; a struct opts out with
/// `#[schemars(extend("additionalProperties" = true))]` or a
/// `#[serde(flatten)]` map field. A nullable field is an `anyOf` of one type
/// each. A bytes parameter (`Vec<u8>`, `[u8; N]`, `Bytes`: JSON has no bytes)
/// makes `Server::build` fail naming the tool.
///
/// Named validators, for rules JSON Schema cannot express: a parameter whose
/// type implements `garde::Validate` (derive it; the context must be
/// `Default`) is validated after decoding, and its failures join the same
/// report. Declare each rule for the model with
/// `#[schemars(extend("x-validator" = "must name an open ticket"))]` on the
/// field: the message is appended to the field's description.
///
/// Serve it with `tools![add]` (a function) or `tools![desk.close_ticket]`
/// (a method, bound to a `desk` held as `Arc<Desk>` or a `Desk: Clone`).
///
/// # The typed call
///
/// A `#[tool]` declares both ends: beside the function it generates
/// `call_<name>` (for a method, the associated function `Desk::call_<name>`),
/// with the same visibility and `#[cfg]`s:
///
/// ```text
/// async fn call_add<Caller: CallTool>(client: &Caller, a: i64, b: i64)
///     -> Result<i64, ToolCallError<Caller::Error>>
/// ```
///
/// Its parameters are the function's own, the `ToolContext` left out, so a
/// wrong argument is a compile error; `client` is any
/// `typed_mcp::protocol::caller::CallTool` — `typed_mcp_client::Client`
/// implements it, and a server crate that does not call its tools never
/// builds a client. It returns the declared value: `T` for `T`, the `Ok`
/// type of a `Result`, the `T` of an `Answer<T>` (the caller answers the
/// server's questions), `Option<T>`, `()`, content blocks or the whole
/// `CallToolResult`, decoded from the result as the server encodes it
/// (non-object values under `result`). The server's refusal of the
/// arguments is `ToolCallError::Arguments` with every problem it found; an
/// `isError` result (the handler's `Err`, with its message chain) is
/// `ToolCallError::Tool`. The call needs `Serialize` on the parameters and
/// `Deserialize` on the value only where it is used, so a server whose types
/// go one way (a `Secret` parameter) still compiles.
///
/// ```
/// use std::sync::Mutex;
/// use serde_json::{Map, Value, json};
/// use typed_mcp::protocol::caller::CallTool;
/// use typed_mcp::tool;
/// use typed_mcp::wire::CallToolResult;
///
/// /// Add two integers.
/// ///
/// /// # Arguments
/// /// * `a` - The first addend.
/// /// * `b` - The second addend.
/// #[tool(read_only)]
/// fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// /// A caller that runs the function itself and answers as a typed-mcp
/// /// server does (an integer is not an object, so it travels under `result`).
/// struct Local(Mutex<Vec<Value>>);
///
/// impl CallTool for Local {
///     type Error = std::convert::Infallible;
///
///     async fn call_tool_result(
///         &self,
///         name: &str,
///         arguments: Map<String, Value>,
///     ) -> Result<CallToolResult, Self::Error> {
///         assert_eq!(name, "add");
///         self.0.lock().unwrap().push(Value::Object(arguments.clone()));
///         let sum = add(arguments["a"].as_i64().unwrap(), arguments["b"].as_i64().unwrap());
///         Ok(CallToolResult::structured(json!({"result": sum})))
///     }
/// }
///
/// # block_on(async {
/// let local = Local(Mutex::new(Vec::new()));
/// let sum: i64 = call_add(&local, 2, 3).await.unwrap();
/// assert_eq!(sum, 5);
/// assert_eq!(local.0.lock().unwrap()[0], json!({"a": 2, "b": 3}));
/// # });
/// # fn block_on<F: std::future::Future>(future: F) -> F::Output {
/// #     use std::task::{Context, Poll, Waker};
/// #     let mut future = std::pin::pin!(future);
/// #     match future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
/// #         Poll::Ready(output) => output,
/// #         Poll::Pending => unreachable!("the local caller never waits"),
/// #     }
/// # }
/// ```
///
/// ```
/// use std::sync::Arc;
/// use typed_mcp::{Server, tool, tools};
///
/// /// Add two integers.
/// ///
/// /// # Arguments
/// /// * `a` - The first addend.
/// /// * `b` - The second addend.
/// #[tool(read_only)]
/// fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// struct Desk;
///
/// impl Desk {
///     /// Close a ticket with a resolution note.
///     ///
///     /// # Arguments
///     /// * `ticket_id` - The ticket to close.
///     /// * `note` - Why it is being closed.
///     #[tool(destructive, timeout = "30s")]
///     async fn close_ticket(&self, ticket_id: String, note: String) -> Result<String, std::io::Error> {
///         Ok(format!("closed {ticket_id}: {note}"))
///     }
/// }
///
/// let desk = Arc::new(Desk);
/// let server = Server::new("desk", "1.0.0")
///     .tools(tools![add, desk.close_ticket])
///     .build()?;
/// let tools = server.catalog().tools();
/// assert_eq!(tools[1].tool.name, "close_ticket");
/// assert_eq!(tools[0].tool.input_schema["required"], serde_json::json!(["a", "b"]));
/// assert_eq!(add(2, 3), 5); // still an ordinary function
/// # Ok::<(), typed_mcp::BuildError>(())
/// ```
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).into()
}

/// Declares a resource read by an ordinary function or `&self` method.
///
/// `#[resource(uri = "desk://tickets/{id}", mime_type = "application/json")]`:
/// a URI with `{variables}` declares a template, and each variable fills the
/// `String` parameter of the same name (`{+path}` may hold `/`). Every
/// variable must be a parameter and every parameter a variable; a
/// `ToolContext` parameter may be added. Optional: `name = "..."` (by
/// default the function's name), `title = "..."`, `mime_type = "..."`.
///
/// The doc comment's first paragraph is the description and its
/// `# Arguments` list describes the variables. The function returns a
/// `String` (text), contents, an `Option` (`None` → resource not found) or a
/// `Result` of those.
///
/// ```
/// use typed_mcp::{Server, resource, resources};
///
/// /// A ticket's notes, as plain text.
/// ///
/// /// # Arguments
/// /// * `id` - The ticket's id.
/// #[resource(uri = "desk://tickets/{id}/notes", mime_type = "text/plain")]
/// fn notes(id: String) -> Option<String> {
///     (id == "T-1").then(|| "Printer fixed.".to_owned())
/// }
///
/// let server = Server::new("desk", "1.0.0").resources(resources![notes]).build()?;
/// assert_eq!(server.catalog().templates().count(), 1);
/// # Ok::<(), typed_mcp::BuildError>(())
/// ```
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    resource::expand(attr.into(), item.into()).into()
}

/// Declares a prompt made by an ordinary function or `&self` method.
///
/// Prompt arguments are strings on the wire, so each parameter is `String`
/// (a required argument) or `Option<String>` (an optional one); a
/// `ToolContext` parameter may be added. The doc comment's first paragraph
/// is the description and its `# Arguments` list describes the arguments.
/// Optional: `name = "..."`, `title = "..."`. The function returns a
/// `String` (one user message), messages, a `GetPromptResult` or a
/// `Result` of those.
///
/// ```
/// use typed_mcp::{Server, prompt, prompts};
///
/// /// Draft a reply to a customer.
/// ///
/// /// # Arguments
/// /// * `customer` - Who to reply to.
/// /// * `tone` - The tone of the reply; friendly unless given.
/// #[prompt(title = "Draft a reply")]
/// fn draft_reply(customer: String, tone: Option<String>) -> String {
///     format!("Write a {} reply to {customer}.", tone.as_deref().unwrap_or("friendly"))
/// }
///
/// let server = Server::new("desk", "1.0.0").prompts(prompts![draft_reply]).build()?;
/// assert_eq!(server.catalog().prompts()[0].prompt.name, "draft_reply");
/// # Ok::<(), typed_mcp::BuildError>(())
/// ```
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    prompt::expand(attr.into(), item.into()).into()
}

/// The tools to serve, in order: `tools![add, desk.close_ticket,
/// crate::math::mul]` is a `Vec<ToolDecl>`.
///
/// An entry is a `#[tool]` function's path, or `value.method` for a `#[tool]`
/// method, where `value` (any place expression: `desk`, `self.desk`,
/// `state.desk`) is an `Arc<T>` or `&Arc<T>`, shared, or a `T: Clone` or
/// `&T`, cloned into an `Arc`. A call or block expression that makes a
/// `ToolDecl` by hand is taken as is.
///
/// A function listed without `#[tool]` is reported as "cannot find function
/// `__typed_mcp_decl_<name>`": that hidden constructor is what `#[tool]`
/// adds.
#[proc_macro]
pub fn tools(input: TokenStream) -> TokenStream {
    list::expand(Kind::Tool, input.into()).into()
}

/// The resources to serve, in order, as `tools!` does for tools.
#[proc_macro]
pub fn resources(input: TokenStream) -> TokenStream {
    list::expand(Kind::Resource, input.into()).into()
}

/// The prompts to serve, in order, as `tools!` does for tools.
#[proc_macro]
pub fn prompts(input: TokenStream) -> TokenStream {
    list::expand(Kind::Prompt, input.into()).into()
}
