//! Calling a tool from Rust through its declaration.
//!
//! A `#[tool]` function declares both ends of a tool: beside the server's
//! declaration the macro generates `call_<name>`, a typed call taking the
//! function's own parameters (the context left out) and returning its
//! declared value. That call sends the tool's name and arguments through any
//! [`CallTool`] — `typed_mcp_client::Client` implements it — and decodes the
//! result as the server encoded it.
//!
//! The trait lives here, in the I/O-free core, so neither side needs the
//! other: a server crate that never calls its tools does not build a client,
//! and the client does not depend on the server runtime.

use std::future::Future;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::wire::CallToolResult;

/// Something that can send `tools/call` and hand back the final
/// `CallToolResult`: a connection to a server.
///
/// An implementation sends `name` with `arguments` (answering any input the
/// server asks for first, as its protocol era has it) and returns the
/// complete result as the server sent it, `isError` included. A failure to
/// get one (no answer, a JSON-RPC error, a timeout) is [`Self::Error`].
///
/// ```
/// use serde_json::{Map, Value, json};
/// use typed_mcp_core::caller::CallTool;
/// use typed_mcp_core::wire::CallToolResult;
///
/// /// A caller that answers every call with the arguments it was sent.
/// struct Echo;
///
/// impl CallTool for Echo {
///     type Error = std::convert::Infallible;
///
///     async fn call_tool_result(
///         &self,
///         _name: &str,
///         arguments: Map<String, Value>,
///     ) -> Result<CallToolResult, Self::Error> {
///         Ok(CallToolResult::structured(Value::Object(arguments)))
///     }
/// }
///
/// # futures_lite_block_on(async {
/// let mut arguments = Map::new();
/// arguments.insert("a".into(), json!(2));
/// let result = Echo.call_tool_result("add", arguments).await.unwrap();
/// assert_eq!(result.structured_content.unwrap(), json!({"a": 2}));
/// # });
/// # fn futures_lite_block_on<F: std::future::Future>(future: F) -> F::Output {
/// #     use std::task::{Context, Poll, Waker};
/// #     let mut future = std::pin::pin!(future);
/// #     match future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
/// #         Poll::Ready(output) => output,
/// #         Poll::Pending => unreachable!("the echo caller never waits"),
/// #     }
/// # }
/// ```
pub trait CallTool {
    /// Why no result came back.
    type Error;

    /// Sends `tools/call` for `name` with `arguments` and returns the final
    /// result.
    fn call_tool_result(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> impl Future<Output = Result<CallToolResult, Self::Error>> + Send;
}

/// One problem a server found with the arguments of a call, from the
/// machine-readable report a typed-mcp server attaches to its refusal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ArgumentProblem {
    /// Where, as a readable path (`limit`, `filters.tags[2]`); empty for the
    /// arguments object itself.
    pub path: String,
    /// The JSON Schema keyword that failed (`type`, `required`, `minimum`,
    /// or `validator` for a named validator).
    pub keyword: String,
    /// What is wrong.
    pub message: String,
}

/// A typed call through a declaration that did not return the declared
/// value; `E` is the caller's own error ([`CallTool::Error`]).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ToolCallError<E> {
    /// No result came back: the caller's failure (the connection, a JSON-RPC
    /// error, a timeout...).
    #[error(transparent)]
    Caller(E),
    /// An argument did not serialize to JSON; nothing was sent.
    #[error("cannot call the tool {tool:?}: {why}")]
    Encode {
        /// The tool's wire name.
        tool: String,
        /// Which argument, and what serde said.
        why: String,
    },
    /// The server refused the arguments before the tool ran: every problem
    /// it found, and its message.
    #[error("{message}")]
    Arguments {
        /// The tool's wire name.
        tool: String,
        /// Each problem, in the server's order.
        problems: Vec<ArgumentProblem>,
        /// The server's text, one line per problem.
        message: String,
    },
    /// The tool answered `isError: true`: a handler's `Err` (its message
    /// chain), or a refusal (a capability not granted, a deadline).
    #[error("the tool {tool:?} reported an error: {message}")]
    Tool {
        /// The tool's wire name.
        tool: String,
        /// The text of the result's content.
        message: String,
        /// The result's `structuredContent`, when it has one.
        structured: Option<Value>,
    },
    /// The result is not the value the declaration returns.
    #[error("the tool {tool:?} answered a result that is not its declared value: {why}")]
    Decode {
        /// The tool's wire name.
        tool: String,
        /// What was expected and what was found.
        why: String,
    },
}

impl<E> ToolCallError<E> {
    /// The server's argument report, when it refused the arguments.
    pub fn argument_problems(&self) -> Option<&[ArgumentProblem]> {
        match self {
            ToolCallError::Arguments { problems, .. } => Some(problems),
            _ => None,
        }
    }
}
