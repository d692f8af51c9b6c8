//! The endpoint at one path as a tower service, answered without a router.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::Router;
use axum::body::{Body, HttpBody};
use axum::response::Response;
use bytes::Bytes;
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use http::Request;
use tower_service::Service;
use typed_mcp::transport::pin_in_place;

use crate::endpoint::Endpoint;

/// The MCP endpoint at one path as a [`Service`], for an application that
/// serves MCP alone (with [`serve`](crate::serve) or its own hyper server);
/// made by [`HttpServer::into_service`](crate::HttpServer::into_service).
///
/// It answers exactly as the router of
/// [`mount`](crate::HttpServer::mount) at the same path would, every
/// request and every refusal alike, and spends less on the way: a request
/// to the endpoint's path goes straight to the endpoint, without matching
/// routes, building path parameters or boxing a route's service (about 4k
/// instructions and 5 allocations a call when it was added, of the
/// quickstart's 66k then). Any
/// other request, and every request when an OAuth resource server is
/// configured (its layer and metadata document are routes), is handed to
/// that router.
#[derive(Clone, Debug)]
pub struct EndpointService {
    /// The endpoint, when requests to `path` may skip the router.
    direct: Option<Arc<Endpoint>>,
    path: Arc<str>,
    router: Router,
}

impl EndpointService {
    pub(crate) fn new(direct: Option<Arc<Endpoint>>, path: &str, router: Router) -> Self {
        EndpointService {
            direct,
            path: path.into(),
            router,
        }
    }

    /// The router serving what the direct path does not (and, with OAuth,
    /// everything): the same router [`mount`](crate::HttpServer::mount)
    /// builds, to merge into a larger app instead.
    pub fn into_router(self) -> Router {
        self.router
    }
}

impl<B> Service<Request<B>> for EndpointService
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        match &self.direct {
            Some(endpoint) if request.uri().path() == &*self.path => {
                let request = request.map(Body::new);
                pin_in_place(|| endpoint.clone().serve(request).map(Ok))
            }
            _ => Box::pin(self.router.call(request)),
        }
    }
}
