//! Typed resources: a function whose parameters are the URI template's
//! variables and whose return value becomes the resource's contents.

use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use typed_mcp_core::RpcError;
use typed_mcp_core::wire::ResourceContents;

use crate::answer::Answer;
use crate::context::ToolContext;
use crate::declare::{
    AnyResourceDecl, ResourceBuilder, ResourceDecl, ResourceReply, ResourceRequest,
    ResourceTemplateBuilder, ResourceTemplateDecl, blocking,
};

/// The static facts of a typed resource, as a macro writes them.
#[derive(Debug, Clone, Copy)]
pub struct ResourceAttrs {
    /// The URI, or a URI template with `{variables}`.
    pub uri: &'static str,
    /// Programmatic name.
    pub name: &'static str,
    /// Display name.
    pub title: Option<&'static str>,
    /// What the resource holds.
    pub description: &'static str,
    /// MIME type of its contents.
    pub mime_type: Option<&'static str>,
    /// Each template variable with its description.
    pub parameters: &'static [(&'static str, &'static str)],
    /// The capabilities a read needs.
    pub caps: &'static [crate::Capability],
}

/// A resource function's return value, turned into contents.
pub trait ResourceOutput: Send + 'static {
    /// The contents of `uri`, or the error to answer with.
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError>;

    /// The reply: contents, or (for [`Answer`]) a request for input first.
    fn into_reply(self, uri: &str, mime_type: Option<&str>) -> ResourceReply
    where
        Self: Sized,
    {
        self.into_contents(uri, mime_type).map(Answer::Done)
    }
}

/// `NeedsInput` answers `input_required`; `Done` reads like `T`.
impl<T: ResourceOutput> ResourceOutput for Answer<T> {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        match self {
            Answer::Done(value) => value.into_contents(uri, mime_type),
            Answer::NeedsInput(_) => Err(RpcError::internal(
                "a resource asked for input where only contents can be answered",
            )),
        }
    }

    fn into_reply(self, uri: &str, mime_type: Option<&str>) -> ResourceReply {
        match self {
            Answer::Done(value) => value.into_reply(uri, mime_type),
            Answer::NeedsInput(needs) => Ok(Answer::NeedsInput(needs)),
        }
    }
}

impl ResourceOutput for String {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        Ok(vec![ResourceContents::text(uri, mime_type, self)])
    }
}

impl ResourceOutput for ResourceContents {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        Ok(vec![self])
    }
}

impl ResourceOutput for Vec<ResourceContents> {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        Ok(self)
    }
}

/// `None` answers "resource not found" (`-32602` with `data.uri`).
impl<T: ResourceOutput> ResourceOutput for Option<T> {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        match self {
            Some(value) => value.into_contents(uri, mime_type),
            None => Err(RpcError::resource_not_found(uri)),
        }
    }
}

/// `Err` answers `-32603` with the error's message chain.
impl<T: ResourceOutput, E: std::error::Error + Send + 'static> ResourceOutput for Result<T, E> {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        match self {
            Ok(value) => value.into_contents(uri, mime_type),
            Err(e) => Err(RpcError::internal(
                crate::ToolError::from_error(&e).to_string(),
            )),
        }
    }
}

/// A value served as JSON text (`application/json` unless the resource says otherwise).
#[derive(Debug, Clone)]
pub struct Json<T>(pub T);

impl<T: Serialize + Send + 'static> ResourceOutput for Json<T> {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        let text = serde_json::to_string(&self.0)
            .map_err(|e| RpcError::internal(format!("the resource could not be encoded: {e}")))?;
        Ok(vec![ResourceContents::text(
            uri,
            Some(mime_type.unwrap_or("application/json")),
            text,
        )])
    }
}

fn static_builder(a: &ResourceAttrs) -> ResourceBuilder {
    let mut b = ResourceDecl::builder(a.uri, a.name)
        .description(a.description)
        .capabilities(a.caps);
    if let Some(t) = a.title {
        b = b.title(t);
    }
    if let Some(m) = a.mime_type {
        b = b.mime_type(m);
    }
    b
}

fn template_builder(a: &ResourceAttrs) -> ResourceTemplateBuilder {
    let mut b = ResourceTemplateDecl::builder(a.uri, a.name)
        .description(a.description)
        .capabilities(a.caps);
    if let Some(t) = a.title {
        b = b.title(t);
    }
    if let Some(m) = a.mime_type {
        b = b.mime_type(m);
    }
    for (name, description) in a.parameters {
        b = b.parameter(*name, *description);
    }
    b
}

/// A URI with a `{variable}` is a template; any other is a static resource.
fn is_template(a: &ResourceAttrs) -> bool {
    a.uri.contains('{')
}

/// A typed resource whose function is async.
pub fn resource_async<F, Fut, O>(attrs: ResourceAttrs, f: F) -> AnyResourceDecl
where
    F: Fn(ResourceRequest, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = O> + Send + 'static,
    O: ResourceOutput,
{
    let f = Arc::new(f);
    let mime = attrs.mime_type;
    let handler = move |request: ResourceRequest, ctx: ToolContext| {
        let f = f.clone();
        async move {
            let uri = request.uri.clone();
            f(request, ctx).await.into_reply(&uri, mime)
        }
    };
    if is_template(&attrs) {
        template_builder(&attrs).handler(handler).into()
    } else {
        static_builder(&attrs).handler(handler).into()
    }
}

/// A typed resource whose function is synchronous: it runs on the blocking pool.
pub fn resource_blocking<F, O>(attrs: ResourceAttrs, f: F) -> AnyResourceDecl
where
    F: Fn(ResourceRequest, ToolContext) -> O + Send + Sync + 'static,
    O: ResourceOutput,
{
    let f = Arc::new(f);
    resource_async(attrs, move |request, ctx| {
        let f = f.clone();
        blocking(move || f(request, ctx))
    })
}
