//! Small shared shapes: identities, icons, annotations, levels, result markers.

use std::sync::Arc;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use super::meta_keys;
use crate::RequestId;

/// An open `_meta` object, carried whole.
pub type Meta = Map<String, Value>;

/// The name and version of an MCP implementation (`Implementation`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What this implementation does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Icons for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
}

impl Implementation {
    /// An implementation with a name and a version and nothing else.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            website_url: None,
            icons: None,
        }
    }

    option_setters! {
        /// Sets the display name.
        with_title => title: String;
        /// Sets what the implementation does.
        with_description => description: String;
        /// Sets the home page.
        with_website_url => website_url: String;
        /// Sets the icons.
        with_icons => icons: Vec<Icon>;
    }
}

/// An icon a client may display (`Icon`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Icon {
    /// An `https:` or `data:` URI.
    pub src: String,
    /// MIME type override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// `"light"` or `"dark"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

impl Icon {
    /// An icon at this `https:` or `data:` URI.
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: None,
            theme: None,
        }
    }

    option_setters! {
        /// Sets the MIME type override.
        with_mime_type => mime_type: String;
        /// Sets the sizes (`"48x48"`, `"any"`).
        with_sizes => sizes: Vec<String>;
        /// Sets the theme (`"light"` or `"dark"`).
        with_theme => theme: String;
    }
}

/// Who a piece of content is meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

/// Display hints attached to content and resources (`Annotations`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Annotations {
    /// Intended audience.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (optional) to 1 (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 time of the last change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

impl Annotations {
    option_setters! {
        /// Sets the intended audience.
        with_audience => audience: Vec<Role>;
        /// Sets the importance, from 0 (optional) to 1 (required).
        with_priority => priority = f64;
        /// Sets the ISO 8601 time of the last change.
        with_last_modified => last_modified: String;
    }
}

/// Log severity, in RFC 5424 order (`debug` is the least severe).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Detailed debugging information.
    Debug,
    /// Informational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// Every level, least severe first.
    pub const ALL: [LoggingLevel; 8] = [
        LoggingLevel::Debug,
        LoggingLevel::Info,
        LoggingLevel::Notice,
        LoggingLevel::Warning,
        LoggingLevel::Error,
        LoggingLevel::Critical,
        LoggingLevel::Alert,
        LoggingLevel::Emergency,
    ];

    /// The level's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<LoggingLevel> {
        Self::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

/// Whether a result is final (`complete`) or asks the client for input first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ResultType {
    /// The final result.
    #[default]
    Complete,
    /// An interim result of a multi round-trip request.
    InputRequired,
}

/// Who may reuse a cacheable result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Not user-specific: any cache may serve it to anyone.
    Public,
    /// Reusable only within the same authorization context.
    Private,
}

/// Cache hints for the six cacheable results (`ttlMs`, `cacheScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheHint {
    /// Freshness in milliseconds; `0` means stale at once.
    pub ttl_ms: u64,
    /// Who may reuse the result.
    pub scope: CacheScope,
}

impl CacheHint {
    /// A hint of `ttl_ms` milliseconds for `scope`.
    pub const fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        CacheHint { ttl_ms, scope }
    }

    /// One hour, public: the default for lists and `server/discover`.
    pub const PUBLIC_HOUR: CacheHint = CacheHint {
        ttl_ms: 3_600_000,
        scope: CacheScope::Public,
    };
    /// Stale at once, private: the default for `resources/read`.
    pub const PRIVATE_NOW: CacheHint = CacheHint {
        ttl_ms: 0,
        scope: CacheScope::Private,
    };
}

/// A result's `_meta`: the server's identity, a listen stream's subscription id
/// and any further keys, serialized as one flat object.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ResultMeta {
    /// `io.modelcontextprotocol/serverInfo`.
    pub server_info: Option<Arc<Implementation>>,
    /// `io.modelcontextprotocol/subscriptionId` (listen streams only).
    pub subscription_id: Option<RequestId>,
    /// Other keys.
    pub other: Meta,
}

impl ResultMeta {
    /// A `_meta` that names the server.
    pub fn server(info: Arc<Implementation>) -> Self {
        ResultMeta {
            server_info: Some(info),
            ..Default::default()
        }
    }

    /// Sets the listen stream's subscription id.
    #[must_use]
    pub fn with_subscription_id(mut self, id: RequestId) -> Self {
        self.subscription_id = Some(id);
        self
    }

    /// Adds one further key.
    #[must_use]
    pub fn with_entry(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.other.insert(key.into(), value.into());
        self
    }

    /// True when there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.server_info.is_none() && self.subscription_id.is_none() && self.other.is_empty()
    }
}

impl Serialize for ResultMeta {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(info) = &self.server_info {
            map.serialize_entry(meta_keys::SERVER_INFO, &**info)?;
        }
        if let Some(id) = &self.subscription_id {
            map.serialize_entry(meta_keys::SUBSCRIPTION_ID, id)?;
        }
        for (k, v) in &self.other {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for ResultMeta {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut other = Meta::deserialize(deserializer)?;
        let server_info = match other.remove(meta_keys::SERVER_INFO) {
            Some(v) => Some(Arc::new(
                serde_json::from_value(v).map_err(serde::de::Error::custom)?,
            )),
            None => None,
        };
        let subscription_id = other
            .remove(meta_keys::SUBSCRIPTION_ID)
            .and_then(|v| RequestId::from_value(&v));
        Ok(ResultMeta {
            server_info,
            subscription_id,
            other,
        })
    }
}
