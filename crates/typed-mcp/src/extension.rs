//! Methods the core does not model: an application serves an extension's
//! own methods and announces the extension under `capabilities.extensions`
//! in `server/discover` ([`ServerBuilder::extension`](crate::ServerBuilder::extension)).
//! Not modelling something must not mean standing in the way of it.
//!
//! An extension method's request walks the same pipeline as a `tools/call`:
//! the router's envelope and header rungs (and `Mcp-Name` against the params
//! member the method names, when it names one), the request span continuing
//! the caller's trace, admission and a handler slot, the server's
//! `default_timeout`, the application's tower layers, a caught panic, and
//! the redacting exit. The handler gets the params (without `_meta`) and the
//! call's [`ToolContext`]; its object becomes the result (with
//! `resultType: "complete"` unless it sets one, and the server's identity in
//! `_meta`), its [`RpcError`] the error. The Tasks extension is built on this
//! seam.
//!
//! ```
//! use serde_json::{Map, Value, json};
//! use typed_mcp::Server;
//! use typed_mcp::extension::Extension;
//!
//! let echo = Extension::new("com.example/echo").method("echo/say", |params, _ctx| async move {
//!     let mut result = Map::new();
//!     result.insert("said".into(), params.get("text").cloned().unwrap_or(Value::Null));
//!     Ok(result)
//! });
//! let server = Server::new("demo", "1.0.0").extension(echo).build()?;
//! assert!(server.catalog().capabilities().extensions.as_ref().unwrap().contains_key("com.example/echo"));
//! # Ok::<(), typed_mcp::BuildError>(())
//! ```

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Map, Value};
pub use typed_mcp_core::router::ExtensionMethod;

use crate::RpcError;
use crate::context::ToolContext;
use crate::declare::Handler;

/// What an extension method's handler answers: the result object, or a
/// JSON-RPC error.
pub type ExtensionReply = Result<Map<String, Value>, RpcError>;

pub(crate) type ExtensionHandler = Handler<Map<String, Value>, ExtensionReply>;

/// An extension: its identifier, the settings `server/discover` announces,
/// and the methods it serves.
pub struct Extension {
    pub(crate) id: String,
    pub(crate) settings: Map<String, Value>,
    pub(crate) methods: Vec<(ExtensionMethod, ExtensionHandler)>,
}

impl std::fmt::Debug for Extension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extension")
            .field("id", &self.id)
            .field(
                "methods",
                &self
                    .methods
                    .iter()
                    .map(|(m, _)| &m.method)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Extension {
    /// The extension `id` (e.g. `com.example/echo`), with no settings and no
    /// methods yet.
    pub fn new(id: impl Into<String>) -> Self {
        Extension {
            id: id.into(),
            settings: Map::new(),
            methods: Vec::new(),
        }
    }

    /// The identifier.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The settings announced with it (an empty object by default).
    #[must_use]
    pub fn settings(mut self, settings: Map<String, Value>) -> Self {
        self.settings = settings;
        self
    }

    /// Serves `method` with `handler`: no `Mcp-Name` is checked and the
    /// client need not declare the extension (see
    /// [`method_with`](Self::method_with) for both).
    #[must_use]
    pub fn method<F, Fut>(self, method: impl Into<String>, handler: F) -> Self
    where
        F: Fn(Map<String, Value>, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ExtensionReply> + Send + 'static,
    {
        let rule = ExtensionMethod::new(self.id.clone(), method);
        self.method_with(rule, handler)
    }

    /// Serves the method `rule` describes with `handler`. The rule's
    /// extension identifier is this extension's, whatever it said.
    #[must_use]
    pub fn method_with<F, Fut>(mut self, rule: ExtensionMethod, handler: F) -> Self
    where
        F: Fn(Map<String, Value>, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ExtensionReply> + Send + 'static,
    {
        let mut rule = rule;
        rule.extension.clone_from(&self.id);
        let handler: ExtensionHandler = Arc::new(move |params, ctx| Box::pin(handler(params, ctx)));
        self.methods.push((rule, handler));
        self
    }
}

/// The `'static` name a method is known by to the layers and spans: method
/// names are few and fixed when servers are built, so each distinct one is
/// kept once per process.
pub(crate) fn interned(method: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(name) = names.get(method) {
        return name;
    }
    let name: &'static str = Box::leak(method.to_owned().into_boxed_str());
    names.insert(name);
    name
}

impl crate::ServerBuilder {
    /// Serves an extension's methods and announces it (with its settings)
    /// under `capabilities.extensions` in `server/discover` (see
    /// [`extension`](crate::extension)). When two extensions serve one
    /// method, the first given serves it; a method the core serves itself
    /// stays the core's.
    pub fn extension(mut self, extension: Extension) -> Self {
        self.extensions.push(extension);
        self
    }
}
