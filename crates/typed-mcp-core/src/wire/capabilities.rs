//! Client and server capability objects.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What the client supports, declared on each request (`ClientCapabilities`).
///
/// The set is open: members this type does not name are kept in `other`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClientCapabilities {
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// Present if the client can list roots (deprecated feature).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<Map<String, Value>>,
    /// Present if the client can sample from a model (deprecated feature).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Present if the client can elicit input from its user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Extensions by identifier, with their settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
    /// Members not named above.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl ClientCapabilities {
    /// True when the named top-level capability is declared (`"sampling"`,
    /// `"elicitation"`, `"roots"`, or any other member).
    pub fn has(&self, name: &str) -> bool {
        match name {
            "experimental" => self.experimental.is_some(),
            "roots" => self.roots.is_some(),
            "sampling" => self.sampling.is_some(),
            "elicitation" => self.elicitation.is_some(),
            "extensions" => self.extensions.is_some(),
            other => self.other.contains_key(other),
        }
    }

    option_setters! {
        /// Declares experimental capabilities.
        with_experimental => experimental: Map<String, Value>;
        /// Declares sampling support.
        with_sampling => sampling: SamplingCapability;
        /// Declares elicitation support.
        with_elicitation => elicitation: ElicitationCapability;
    }

    /// Declares that the client can list roots.
    #[must_use]
    pub fn with_roots(mut self) -> Self {
        self.roots = Some(Map::new());
        self
    }

    /// Declares one extension with its settings.
    #[must_use]
    pub fn with_extension(mut self, id: impl Into<String>, settings: Map<String, Value>) -> Self {
        self.extensions
            .get_or_insert_with(Map::new)
            .insert(id.into(), Value::Object(settings));
        self
    }

    /// True when the named extension is declared.
    pub fn has_extension(&self, id: &str) -> bool {
        self.extensions.as_ref().is_some_and(|e| e.contains_key(id))
    }
}

/// The client's sampling support.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SamplingCapability {
    /// Present if `includeContext` values other than `"none"` are supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Map<String, Value>>,
    /// Present if sampling requests may carry `tools` and `toolChoice`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Map<String, Value>>,
    /// Members not named above.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl SamplingCapability {
    /// Declares `includeContext` values other than `"none"`.
    #[must_use]
    pub fn with_context(mut self) -> Self {
        self.context = Some(Map::new());
        self
    }

    /// Declares `tools` and `toolChoice` in sampling requests.
    #[must_use]
    pub fn with_tools(mut self) -> Self {
        self.tools = Some(Map::new());
        self
    }
}

/// The client's elicitation support. `{}` means form mode only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationCapability {
    /// Form mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<Map<String, Value>>,
    /// URL mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<Map<String, Value>>,
    /// Members not named above.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl ElicitationCapability {
    /// Declares form mode.
    #[must_use]
    pub fn with_form(mut self) -> Self {
        self.form = Some(Map::new());
        self
    }

    /// Declares URL mode.
    #[must_use]
    pub fn with_url(mut self) -> Self {
        self.url = Some(Map::new());
        self
    }
}

/// What the server offers, announced by `server/discover` (`ServerCapabilities`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ServerCapabilities {
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// Present if the server sends `notifications/message` (deprecated feature).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<Map<String, Value>>,
    /// Present if the server answers `completion/complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<Map<String, Value>>,
    /// Present if the server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// Present if the server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Present if the server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// Extensions by identifier, with their settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
}

impl ServerCapabilities {
    option_setters! {
        /// Announces experimental capabilities.
        with_experimental => experimental: Map<String, Value>;
        /// Announces prompts.
        with_prompts => prompts: ListChangedCapability;
        /// Announces resources.
        with_resources => resources: ResourcesCapability;
        /// Announces tools.
        with_tools => tools: ListChangedCapability;
        /// Announces extensions by identifier, with their settings.
        with_extensions => extensions: Map<String, Value>;
    }

    /// Announces `notifications/message`.
    #[must_use]
    pub fn with_logging(mut self) -> Self {
        self.logging = Some(Map::new());
        self
    }

    /// Announces `completion/complete`.
    #[must_use]
    pub fn with_completions(mut self) -> Self {
        self.completions = Some(Map::new());
        self
    }
}

/// A capability that may announce list changes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListChangedCapability {
    /// Whether `notifications/*/list_changed` is sent on listen streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

impl ListChangedCapability {
    option_setters! {
        /// Sets whether list changes are announced.
        with_list_changed => list_changed = bool;
    }
}

/// The resources capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourcesCapability {
    /// Whether `resourceSubscriptions` on listen streams are honoured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether `notifications/resources/list_changed` is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

impl ResourcesCapability {
    option_setters! {
        /// Sets whether resource subscriptions are honoured.
        with_subscribe => subscribe = bool;
        /// Sets whether list changes are announced.
        with_list_changed => list_changed = bool;
    }
}
