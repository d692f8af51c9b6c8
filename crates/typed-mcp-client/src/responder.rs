//! How the client answers what a server asks of it: elicitation, sampling and
//! roots, whether the server asks through an `InputRequiredResult` (MRTR,
//! 2026-07-28) or a server-to-client request inside a legacy session.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use typed_mcp_core::wire::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ListRootsResult, Root,
};

/// A boxed future, as the answering functions return.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

type ElicitFn =
    dyn Fn(ElicitRequestParams) -> BoxFuture<Result<ElicitResult, String>> + Send + Sync;
type SampleFn = dyn Fn(CreateMessageRequestParams) -> BoxFuture<Result<CreateMessageResult, String>>
    + Send
    + Sync;

/// What the client answers when a server asks for input. Each kind it can
/// answer is declared in the client's capabilities (on every 2026-07-28
/// request, and at `initialize`); a server asking for a kind it has no
/// answer for gets an error, and the call fails with
/// [`ClientError::Input`](crate::ClientError::Input).
///
/// ```
/// use typed_mcp_client::Responder;
/// use typed_mcp_client::wire::{ElicitAction, ElicitResult, Root};
///
/// let responder = Responder::new()
///     .on_elicit(|_params| async {
///         let mut content = serde_json::Map::new();
///         content.insert("confirmed".into(), true.into());
///         Ok(ElicitResult::new(ElicitAction::Accept).with_content(content))
///     })
///     .roots(vec![Root::new("file:///srv/project")]);
/// assert_eq!(
///     responder.capabilities(),
///     serde_json::json!({"elicitation": {"form": {}}, "roots": {}})
/// );
/// ```
#[derive(Clone, Default)]
pub struct Responder {
    elicit: Option<Arc<ElicitFn>>,
    sample: Option<Arc<SampleFn>>,
    roots: Option<Arc<Vec<Root>>>,
}

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Responder")
            .field("elicit", &self.elicit.is_some())
            .field("sample", &self.sample.is_some())
            .field("roots", &self.roots)
            .finish()
    }
}

impl Responder {
    /// A responder that answers nothing (declares no capabilities).
    pub fn new() -> Self {
        Responder::default()
    }

    /// Answers `elicitation/create` (form mode; URL mode too, since the
    /// function sees the parameters) with `answer`. An `Err` is sent to the
    /// server as an error, and fails the call.
    #[must_use]
    pub fn on_elicit<F, Fut>(mut self, answer: F) -> Self
    where
        F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, String>> + Send + 'static,
    {
        self.elicit = Some(Arc::new(move |params| Box::pin(answer(params))));
        self
    }

    /// Answers `sampling/createMessage` with `answer`.
    #[must_use]
    pub fn on_sample<F, Fut>(mut self, answer: F) -> Self
    where
        F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, String>> + Send + 'static,
    {
        self.sample = Some(Arc::new(move |params| Box::pin(answer(params))));
        self
    }

    /// Answers `roots/list` with these roots.
    #[must_use]
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.roots = Some(Arc::new(roots));
        self
    }

    /// The client capabilities this responder can honour.
    pub fn capabilities(&self) -> Value {
        let mut caps = Map::new();
        if self.elicit.is_some() {
            caps.insert("elicitation".into(), json!({"form": {}}));
        }
        if self.sample.is_some() {
            caps.insert("sampling".into(), json!({}));
        }
        if self.roots.is_some() {
            caps.insert("roots".into(), json!({}));
        }
        Value::Object(caps)
    }

    /// True when this responder answers `method`.
    pub fn answers(&self, method: &str) -> bool {
        match method {
            "elicitation/create" => self.elicit.is_some(),
            "sampling/createMessage" => self.sample.is_some(),
            "roots/list" => self.roots.is_some(),
            _ => false,
        }
    }

    /// The answer to one input request: `method` and its `params`. `Err`
    /// says why there is none, worded to follow "and ...".
    pub async fn answer(&self, method: &str, params: Option<&Value>) -> Result<Value, String> {
        let params = params.cloned().unwrap_or_else(|| json!({}));
        match method {
            "elicitation/create" => {
                let Some(elicit) = &self.elicit else {
                    return Err("this client answers no elicitation".into());
                };
                let mut params = params;
                // `mode` may be left out, meaning a form.
                if let Some(object) = params.as_object_mut() {
                    object.entry("mode").or_insert_with(|| json!("form"));
                }
                let params: ElicitRequestParams = serde_json::from_value(params)
                    .map_err(|e| format!("its parameters are not an elicitation request: {e}"))?;
                let result = elicit(params).await?;
                Ok(serde_json::to_value(result).expect("an ElicitResult serializes"))
            }
            "sampling/createMessage" => {
                let Some(sample) = &self.sample else {
                    return Err("this client answers no sampling request".into());
                };
                let params: CreateMessageRequestParams = serde_json::from_value(params)
                    .map_err(|e| format!("its parameters are not a sampling request: {e}"))?;
                let result = sample(params).await?;
                Ok(serde_json::to_value(result).expect("a CreateMessageResult serializes"))
            }
            "roots/list" => match &self.roots {
                Some(roots) => Ok(serde_json::to_value(ListRootsResult::new(roots.to_vec()))
                    .expect("a ListRootsResult serializes")),
                None => Err("this client exposes no roots".into()),
            },
            other => Err(format!("this client does not answer {other}")),
        }
    }
}
