//! Content blocks and resource contents.

use serde::{Deserialize, Serialize};

use super::{Annotations, Meta};

/// One block of content in a tool result or prompt message (`ContentBlock`).
///
/// The enum and its struct-like variants are `#[non_exhaustive]`: make blocks with
/// [`text`](Self::text), [`image`](Self::image), [`audio`](Self::audio),
/// [`embedded`](Self::embedded) and [`resource_link`](Self::resource_link), and
/// match variants with `..`.
///
/// ```
/// use typed_mcp_core::wire::{Annotations, ContentBlock, Resource, ResourceContents};
/// use serde_json::json;
///
/// let blocks = [
///     ContentBlock::text("hi").with_annotations(Annotations::default().with_priority(1.0)),
///     ContentBlock::image("iVBORw0KGgo=", "image/png"),
///     ContentBlock::audio("UklGRg==", "audio/wav"),
///     ContentBlock::embedded(ResourceContents::blob("desk://logo", Some("image/png"), "iVBORw0KGgo=")),
///     ContentBlock::resource_link(Resource::new("desk://readme", "readme")),
/// ];
/// assert_eq!(
///     serde_json::to_value(&blocks[0]).unwrap(),
///     json!({"type": "text", "text": "hi", "annotations": {"priority": 1.0}})
/// );
/// assert_eq!(
///     serde_json::to_value(&blocks[4]).unwrap(),
///     json!({"type": "resource_link", "uri": "desk://readme", "name": "readme"})
/// );
/// let kinds: Vec<&str> = blocks
///     .iter()
///     .map(|block| match block {
///         ContentBlock::Text { .. } => "text",
///         ContentBlock::Image { .. } => "image",
///         ContentBlock::Audio { .. } => "audio",
///         ContentBlock::Resource { .. } => "resource",
///         ContentBlock::ResourceLink(_) => "resource_link",
///         _ => "a kind added later",
///     })
///     .collect();
/// assert_eq!(kinds, ["text", "image", "audio", "resource", "resource_link"]);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Plain text.
    #[non_exhaustive]
    Text {
        /// The text.
        text: String,
        /// Display hints.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Extension metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Meta>,
    },
    /// A base64-encoded image.
    #[non_exhaustive]
    Image {
        /// Base64 data.
        data: String,
        /// MIME type such as `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Display hints.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Extension metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Meta>,
    },
    /// Base64-encoded audio.
    #[non_exhaustive]
    Audio {
        /// Base64 data.
        data: String,
        /// MIME type such as `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Display hints.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Extension metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Meta>,
    },
    /// A link to a resource the client may read.
    ResourceLink(Box<super::Resource>),
    /// A resource embedded in the message.
    #[non_exhaustive]
    Resource {
        /// The embedded contents.
        resource: ResourceContents,
        /// Display hints.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Extension metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Meta>,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An image block from base64 data.
    pub fn image(data_base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image {
            data: data_base64.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An audio block from base64 data.
    pub fn audio(data_base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio {
            data: data_base64.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An embedded resource block.
    pub fn embedded(resource: ResourceContents) -> Self {
        ContentBlock::Resource {
            resource,
            annotations: None,
            meta: None,
        }
    }

    /// A link to a resource the client may read.
    pub fn resource_link(resource: super::Resource) -> Self {
        ContentBlock::ResourceLink(Box::new(resource))
    }

    /// Sets the display hints (a resource link's are the resource's own).
    #[must_use]
    pub fn with_annotations(mut self, value: Annotations) -> Self {
        match &mut self {
            ContentBlock::Text { annotations, .. }
            | ContentBlock::Image { annotations, .. }
            | ContentBlock::Audio { annotations, .. }
            | ContentBlock::Resource { annotations, .. } => *annotations = Some(value),
            ContentBlock::ResourceLink(resource) => resource.annotations = Some(value),
        }
        self
    }

    /// Sets the extension metadata (a resource link's is the resource's own).
    #[must_use]
    pub fn with_meta(mut self, value: Meta) -> Self {
        match &mut self {
            ContentBlock::Text { meta, .. }
            | ContentBlock::Image { meta, .. }
            | ContentBlock::Audio { meta, .. }
            | ContentBlock::Resource { meta, .. } => *meta = Some(value),
            ContentBlock::ResourceLink(resource) => resource.meta = Some(value),
        }
        self
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// The contents of a resource: text or base64 blob
/// (`TextResourceContents | BlobResourceContents`).
///
/// The two variants are `#[non_exhaustive]`: make them with [`text`](Self::text)
/// and [`blob`](Self::blob), and match them with `..`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    #[non_exhaustive]
    Text {
        /// The resource's URI.
        uri: String,
        /// MIME type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
        /// Extension metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Meta>,
    },
    /// Binary contents.
    #[non_exhaustive]
    Blob {
        /// The resource's URI.
        uri: String,
        /// MIME type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Base64 data.
        blob: String,
        /// Extension metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Meta>,
    },
}

impl ResourceContents {
    /// Text contents.
    pub fn text(uri: impl Into<String>, mime_type: Option<&str>, text: impl Into<String>) -> Self {
        ResourceContents::Text {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            text: text.into(),
            meta: None,
        }
    }

    /// Binary contents from base64 data.
    pub fn blob(
        uri: impl Into<String>,
        mime_type: Option<&str>,
        blob_base64: impl Into<String>,
    ) -> Self {
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            blob: blob_base64.into(),
            meta: None,
        }
    }

    /// Sets the extension metadata.
    #[must_use]
    pub fn with_meta(mut self, value: Meta) -> Self {
        match &mut self {
            ResourceContents::Text { meta, .. } | ResourceContents::Blob { meta, .. } => {
                *meta = Some(value)
            }
        }
        self
    }

    /// The URI of these contents.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }
}
