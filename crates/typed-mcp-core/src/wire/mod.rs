//! The MCP 2026-07-28 wire model: serde types for every request parameter set,
//! result and notification a server receives or sends.
//!
//! Field names follow the official schema (`camelCase` on the wire). Open-ended
//! objects keep what they do not know: `_meta` maps are carried whole, and
//! capability objects keep unknown members in an `other` map, so nothing a client
//! sends is silently dropped on its way to a handler.
//!
//! # Building values
//!
//! Descriptors, results, parameters and capability objects are
//! `#[non_exhaustive]`: a field the specification adds later is not a breaking
//! change. Their fields stay public for reading, and every type is made the same
//! way from outside this crate:
//!
//! - `Type::new(required...)` takes the members the schema requires (types whose
//!   members are all optional implement [`Default`] instead), and some types
//!   have named constructors for common shapes ([`CallToolResult::text`],
//!   [`CallToolResult::structured`], [`ContentBlock::text`], ...);
//! - one chainable `with_<field>(value)` setter per optional member sets it:
//!   it takes the value without `Some` (strings, lists and maps as anything
//!   `Into` the field's type, numbers and flags as that type), and a few list
//!   members also have a singular `with_<item>` that appends one
//!   ([`Prompt::with_argument`], [`CompletionContext::with_argument`]);
//!   open `_meta`-like maps have `with_entry(key, value)`.
//!
//! ```
//! use typed_mcp_core::wire::{Tool, ToolAnnotations};
//!
//! let tool = Tool::new("search", serde_json::json!({"type": "object"}))
//!     .with_title("Search")
//!     .with_description("Search the tickets.")
//!     .with_annotations(ToolAnnotations::default().with_read_only_hint(true));
//! assert_eq!(tool.title.as_deref(), Some("Search"));
//! ```
//!
//! A struct literal outside this crate does not compile, so adding a field later
//! breaks no one:
//!
//! ```compile_fail,E0639
//! use typed_mcp_core::wire::PromptArgument;
//!
//! let argument = PromptArgument {
//!     name: "id".into(),
//!     title: None,
//!     description: None,
//!     required: None,
//! };
//! ```

/// Chainable setters for `Option` fields: `with_x(value)` stores `Some(value.into())`.
/// Numbers and flags (`field = Type`) take the bare type, so a literal such as
/// `with_size(3)` infers.
macro_rules! option_setters {
    () => {};
    ($(#[$doc:meta])* $setter:ident => $field:ident: $ty:ty; $($rest:tt)*) => {
        $(#[$doc])*
        #[must_use]
        pub fn $setter(mut self, value: impl Into<$ty>) -> Self {
            self.$field = Some(value.into());
            self
        }
        option_setters! { $($rest)* }
    };
    ($(#[$doc:meta])* $setter:ident => $field:ident = $ty:ty; $($rest:tt)*) => {
        $(#[$doc])*
        #[must_use]
        pub fn $setter(mut self, value: $ty) -> Self {
            self.$field = Some(value);
            self
        }
        option_setters! { $($rest)* }
    };
}

mod capabilities;
mod content;
mod mrtr;
mod notifications;
mod primitives;
mod results;
mod structured;

pub use capabilities::*;
pub use content::*;
pub use mrtr::*;
pub use notifications::*;
pub use primitives::*;
pub use results::*;
pub use structured::StructuredContent;

/// Reserved `_meta` keys of the 2026-07-28 revision.
pub mod meta_keys {
    /// Request `_meta`: the protocol revision the request is written in (required).
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// Request `_meta`: the client's capabilities for this request (required).
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// Request `_meta`: the client's self-reported identity (optional, display only).
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// Request `_meta`: opt this request into `notifications/message` at this level.
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// Request `_meta`: opt this request into `notifications/progress`.
    pub const PROGRESS_TOKEN: &str = "progressToken";
    /// Result `_meta`: the server's identity.
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// Listen-stream `_meta`: the id of the `subscriptions/listen` request.
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
    /// W3C trace context.
    pub const TRACEPARENT: &str = "traceparent";
    /// W3C trace state.
    pub const TRACESTATE: &str = "tracestate";
    /// W3C baggage.
    pub const BAGGAGE: &str = "baggage";
}

/// Method names of the 2026-07-28 revision.
pub mod methods {
    /// `server/discover`
    pub const DISCOVER: &str = "server/discover";
    /// `tools/list`
    pub const TOOLS_LIST: &str = "tools/list";
    /// `tools/call`
    pub const TOOLS_CALL: &str = "tools/call";
    /// `resources/list`
    pub const RESOURCES_LIST: &str = "resources/list";
    /// `resources/templates/list`
    pub const RESOURCE_TEMPLATES_LIST: &str = "resources/templates/list";
    /// `resources/read`
    pub const RESOURCES_READ: &str = "resources/read";
    /// `prompts/list`
    pub const PROMPTS_LIST: &str = "prompts/list";
    /// `prompts/get`
    pub const PROMPTS_GET: &str = "prompts/get";
    /// `completion/complete`
    pub const COMPLETE: &str = "completion/complete";
    /// `subscriptions/listen`
    pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
    /// `notifications/cancelled`
    pub const CANCELLED: &str = "notifications/cancelled";
    /// `notifications/progress`
    pub const PROGRESS: &str = "notifications/progress";
    /// `notifications/message`
    pub const MESSAGE: &str = "notifications/message";
    /// `notifications/subscriptions/acknowledged`
    pub const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
    /// `notifications/tools/list_changed`
    pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
    /// `notifications/prompts/list_changed`
    pub const PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
    /// `notifications/resources/list_changed`
    pub const RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
    /// `notifications/resources/updated`
    pub const RESOURCES_UPDATED: &str = "notifications/resources/updated";
    /// The legacy handshake, removed in 2026-07-28.
    pub const INITIALIZE: &str = "initialize";
    /// Legacy: the client's acknowledgement of the handshake.
    pub const INITIALIZED: &str = "notifications/initialized";
    /// Legacy: a liveness check.
    pub const PING: &str = "ping";
    /// Legacy: the session's log level.
    pub const SET_LEVEL: &str = "logging/setLevel";
    /// Legacy: subscribe to one resource's updates.
    pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
    /// Legacy: end a subscription.
    pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
    /// Legacy server-to-client: ask the user.
    pub const ELICIT: &str = "elicitation/create";
    /// Legacy server-to-client: ask the client's model.
    pub const CREATE_MESSAGE: &str = "sampling/createMessage";
    /// Legacy server-to-client: ask for the client's roots.
    pub const ROOTS_LIST: &str = "roots/list";
    /// Methods that existed before 2026-07-28 and were removed from the core protocol.
    pub const REMOVED: &[&str] = &[
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tasks/result",
        "tasks/list",
    ];
}
