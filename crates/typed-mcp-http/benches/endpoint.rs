//! Benchmarks of the HTTP layer, in process: one POST through
//! [`EndpointService`](typed_mcp_http::EndpointService) to its response,
//! without sockets or hyper's parsing, so that the endpoint's own cost per
//! request (its checks, the body, the pipeline, the reply) shows here before
//! the wire bench, and with less noise than the wire bench has.
//!
//! - `post/tools_call`: a stateless 2026-07-28 `tools/call` of a typed tool,
//!   with the headers the bench's load generator sends (and, `client_info`,
//!   the envelope the official SDKs' clients send);
//! - `post/refused`: a POST refused before the body is read (a wrong `Host`).
//!
//! ```sh
//! cargo bench -p typed-mcp-http --bench endpoint
//! ```

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use schemars::JsonSchema;
use serde::Serialize;
use tokio::runtime::Runtime;
use tower_service::Service;
use typed_mcp::{Server, tool, tools};
use typed_mcp_http::{EndpointService, HttpServer};

fn main() {
    divan::main();
}

/// The sum of two integers.
#[derive(Debug, Serialize, JsonSchema)]
struct Sum {
    /// `a + b`.
    sum: i64,
}

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(read_only)]
async fn add(a: i64, b: i64) -> Sum {
    Sum {
        sum: a.wrapping_add(b),
    }
}

const ADDRESS: &str = "127.0.0.1:8080";

const BARE: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"add","arguments":{"a":7,"b":1}}}"#;

const CLIENT_INFO: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":7,"b":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1.0.0"}}}}"#;

fn service() -> EndpointService {
    let server = Server::new("bench", "0.1.0")
        .tools(tools![add])
        .build()
        .expect("the bench server builds");
    let address: SocketAddr = ADDRESS.parse().expect("an address");
    HttpServer::new(server, address)
        .into_service("/mcp")
        .expect("the endpoint mounts")
}

/// A POST as the load generator sends it.
fn post(host: &str, body: &'static str) -> Request<Full<Bytes>> {
    Request::post("/mcp")
        .header("host", host)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "add")
        .header("content-length", body.len())
        .body(Full::new(Bytes::from_static(body.as_bytes())))
        .expect("a request")
}

/// The response to one request, its body read whole.
async fn answer(
    service: &mut EndpointService,
    request: Request<Full<Bytes>>,
) -> (StatusCode, Bytes) {
    let response: Response<_> = Service::call(service, request)
        .await
        .unwrap_or_else(|never: Infallible| match never {});
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("the body reads")
        .to_bytes();
    (status, body)
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Checks once, outside the timing, that the bench measures what it says.
fn checked(
    runtime: &Runtime,
    service: &mut EndpointService,
    host: &str,
    body: &'static str,
    want: StatusCode,
    needle: &str,
) {
    let (status, bytes) = runtime.block_on(answer(service, post(host, body)));
    let text = String::from_utf8_lossy(&bytes);
    assert_eq!(status, want, "{text}");
    assert!(text.contains(needle), "{text}");
}

#[divan::bench_group]
mod post {
    use super::*;

    #[divan::bench(args = ["bare", "client_info"], sample_count = 1000, sample_size = 20)]
    fn tools_call(bencher: divan::Bencher, envelope: &str) {
        let body = if envelope == "bare" {
            BARE
        } else {
            CLIENT_INFO
        };
        let runtime = runtime();
        let mut service = service();
        checked(
            &runtime,
            &mut service,
            ADDRESS,
            body,
            StatusCode::OK,
            r#""structuredContent":{"sum":8}"#,
        );
        bencher
            .with_inputs(|| post(ADDRESS, body))
            .bench_local_values(|request| runtime.block_on(answer(&mut service, request)));
    }

    #[divan::bench(sample_count = 1000, sample_size = 20)]
    fn refused(bencher: divan::Bencher) {
        let runtime = runtime();
        let mut service = service();
        checked(
            &runtime,
            &mut service,
            "evil.example",
            BARE,
            StatusCode::FORBIDDEN,
            "Host",
        );
        bencher
            .with_inputs(|| post("evil.example", BARE))
            .bench_local_values(|request| runtime.block_on(answer(&mut service, request)));
    }
}
