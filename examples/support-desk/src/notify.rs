//! `notify_webhook`: the desk's one tool that reaches the network, and only
//! hosts the operator grants (`--allow desk.notify=hooks.example.com`,
//! `desk.notify=*.example.com`, `desk.notify=127.0.0.1:8080`).
//!
//! Every URL the tool sends to is the URL [`ScopedNet`] checked: the first
//! one, and each redirect target, which the tool follows itself (the client
//! never follows a redirect on its own), so a granted host cannot bounce the
//! ticket to one that is not granted. `--resolve NAME=ADDR` pins a name to
//! an address (for a staging webhook, or a test's receiver on loopback).

use std::collections::HashMap;
use std::future::{Future, ready};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::{GaiResolver, Name};
use hyper_util::rt::TokioExecutor;
use schemars::JsonSchema;
use serde::Serialize;
use typed_mcp::capability::net::ScopedNet;
use typed_mcp::capability::net::url::Url;
use typed_mcp::{Capability, ToolContext, tool};

use crate::desk::Desk;
use crate::model::{DeskError, Status, TicketId};

/// Posting ticket summaries to webhooks on hosts the operator grants:
/// `--allow desk.notify=hooks.example.com` (one host, any port's default:
/// 80 for http, 443 for https), `*.example.com` (its subdomains),
/// `host:port`, or an IP literal. No other host is reached, redirects
/// included.
pub(crate) const DESK_NOTIFY: Capability = Capability::new(
    "desk.notify",
    "Post ticket summaries to webhooks on hosts the operator grants",
)
.hosts();

/// How many redirects one notification follows (each one checked).
const MAX_REDIRECTS: u32 = 5;
/// How long one notification may take, redirects included.
const TIMEOUT: Duration = Duration::from_secs(10);
/// The most of a webhook's answer read (it is discarded; reading it lets the
/// connection be reused).
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// A notification delivered.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct Notified {
    /// The origin (`scheme://host:port`) that accepted the notification, after any redirects.
    pub(crate) delivered_to: String,
    /// The HTTP status it answered (2xx).
    pub(crate) status: u16,
    /// How many redirects were followed to get there.
    pub(crate) redirects: u32,
}

/// What the webhook receives: the ticket's summary, not its comments.
#[derive(Serialize)]
struct Summary<'a> {
    event: &'static str,
    ticket_id: TicketId,
    title: &'a str,
    status: &'a Status,
    uri: String,
}

impl Desk {
    /// Post a ticket's summary (id, title, status) to a webhook, e.g. a chat channel's incoming-webhook URL.
    ///
    /// Only hosts the operator granted can be reached, redirects included; a refusal names the granted hosts.
    ///
    /// # Arguments
    /// * `ticket_id` - The ticket to announce, e.g. `T-1001`.
    /// * `url` - The webhook's http(s) URL, e.g. `https://hooks.example.com/desk`.
    #[tool(title = "Notify a webhook", destructive = false, idempotent = false, open_world, caps = [DESK_NOTIFY])]
    pub(crate) async fn notify_webhook(
        &self,
        ctx: &ToolContext,
        ticket_id: TicketId,
        #[schemars(length(min = 1, max = 2048))] url: String,
    ) -> Result<Notified, DeskError> {
        let net = ctx.net(&DESK_NOTIFY)?;
        let target = net.check(&url)?;
        let ticket = self.store.ticket(ticket_id).await?;
        let body = serde_json::to_vec(&Summary {
            event: "ticket",
            ticket_id,
            title: &ticket.title,
            status: &ticket.status,
            uri: ticket_id.uri(),
        })
        .map_err(|e| DeskError::Unavailable(format!("the summary cannot be encoded: {e}")))?;
        match tokio::time::timeout(TIMEOUT, deliver(&net, target, Bytes::from(body))).await {
            Ok(result) => result,
            Err(_) => Err(DeskError::Webhook(format!(
                "no answer within {}s",
                TIMEOUT.as_secs()
            ))),
        }
    }
}

type HttpsClient = Client<HttpsConnector<HttpConnector<PinnedResolver>>, Full<Bytes>>;

fn client() -> &'static HttpsClient {
    static CLIENT: OnceLock<HttpsClient> = OnceLock::new();
    CLIENT.get_or_init(|| {
        let mut http = HttpConnector::new_with_resolver(PinnedResolver {
            system: GaiResolver::new(),
        });
        // The https connector below decides the scheme; this one only connects.
        http.enforce_http(false);
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        Client::builder(TokioExecutor::new()).build(https)
    })
}

/// Names pinned to addresses by `--resolve NAME=ADDR`, as curl's `--resolve`
/// does: a staging webhook, or a test's receiver, under its real name. The
/// grant is still checked against the name, before it is resolved.
static PINNED: OnceLock<HashMap<String, IpAddr>> = OnceLock::new();

/// Parses and installs the `--resolve` entries (once, at startup).
pub(crate) fn pin_names(entries: &[String]) -> Result<(), String> {
    let mut pinned = HashMap::new();
    for entry in entries {
        let bad = |why: &str| format!("invalid --resolve entry {entry:?}: {why}");
        let (name, addr) = entry
            .split_once('=')
            .ok_or_else(|| bad("expected NAME=ADDRESS, e.g. hooks.example.com=127.0.0.1"))?;
        let valid_name = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_');
        if !valid_name {
            return Err(bad(
                "expected a host name before `=` (no scheme, port or path)",
            ));
        }
        let addr: IpAddr = addr
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .map_err(|_| bad("expected an IPv4 or IPv6 address after `=`"))?;
        pinned.insert(name.to_ascii_lowercase(), addr);
    }
    PINNED
        .set(pinned)
        .map_err(|_| "the --resolve entries were already installed".to_owned())
}

/// The system resolver, after the names `--resolve` pinned.
#[derive(Clone)]
struct PinnedResolver {
    system: GaiResolver,
}

impl tower::Service<Name> for PinnedResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.system.poll_ready(cx)
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let pinned = PINNED
            .get()
            .and_then(|names| names.get(&name.as_str().to_ascii_lowercase()));
        if let Some(ip) = pinned {
            // Port 0: the connector puts the URL's port in.
            return Box::pin(ready(Ok(vec![SocketAddr::new(*ip, 0)].into_iter())));
        }
        let lookup = self.system.call(name);
        Box::pin(async move { Ok(lookup.await?.collect::<Vec<_>>().into_iter()) })
    }
}

/// Posts `body` to `target`, following checked redirects: 307 and 308 repeat
/// the POST, 301, 302 and 303 continue with a GET (as HTTP clients do).
async fn deliver(net: &ScopedNet, mut target: Url, body: Bytes) -> Result<Notified, DeskError> {
    let mut method = Method::POST;
    let mut redirects = 0;
    loop {
        let payload = if method == Method::POST {
            body.clone()
        } else {
            Bytes::new()
        };
        let mut request = Request::builder()
            .method(method.clone())
            .uri(target.as_str())
            .header(
                header::USER_AGENT,
                concat!("support-desk/", env!("CARGO_PKG_VERSION")),
            );
        if method == Method::POST {
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        let request = request
            .body(Full::new(payload))
            .map_err(|e| DeskError::Webhook(format!("the URL cannot be requested: {e}")))?;
        let response = client()
            .request(request)
            .await
            .map_err(|e| DeskError::Webhook(format!("the request failed: {}", error_chain(&e))))?;
        let status = response.status();
        let location = response
            .headers()
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        // Drain (bounded) so the connection can be reused; the text is not used.
        let _ = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
            .collect()
            .await;
        if status.is_redirection() && status != StatusCode::NOT_MODIFIED {
            let Some(location) = location else {
                return Err(DeskError::Webhook(format!(
                    "the webhook answered {status} without a Location"
                )));
            };
            if redirects == MAX_REDIRECTS {
                return Err(DeskError::Webhook(format!(
                    "more than {MAX_REDIRECTS} redirects"
                )));
            }
            // The target of every redirect is checked against the grant
            // before anything is sent to it.
            target = net.check_redirect(&target, &location)?;
            redirects += 1;
            if !matches!(
                status,
                StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT
            ) {
                method = Method::GET;
            }
            continue;
        }
        if !status.is_success() {
            return Err(DeskError::Webhook(format!(
                "expected a 2xx answer, found {status}"
            )));
        }
        return Ok(Notified {
            delivered_to: target.origin().ascii_serialization(),
            status: status.as_u16(),
            redirects,
        });
    }
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
