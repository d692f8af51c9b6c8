//! The era handshake against a scripted stdio peer (a shell script that reads
//! the CLI's lines and answers as a legacy server would), for what the real
//! servers do not do: a counter-offer, a version this client does not speak,
//! `-32022`, and requests of the server's own inside the session.

#![cfg(unix)]

use std::path::PathBuf;

use crate::support::{run_with, with_server};

/// The peer. `DISCOVER_ANSWER` is its answer to the probe (id 1), `VERSION` its
/// counter-offer at `initialize`. Before answering `tools/list` it sends a
/// `ping` and a `sampling/createMessage` of its own, and names its only tool
/// after whether the CLI answered both as it should (`answered_yes`). Whatever
/// it did not expect ends it with exit 3 and a line on stderr.
const PEER: &str = r#"
fail() { echo "peer: $*" >&2; exit 3; }
IFS= read -r line || exit 0
case "$line" in *'"server/discover"'*) ;; *) fail "expected server/discover first, got: $line";; esac
printf '%s\n' "$DISCOVER_ANSWER"
IFS= read -r line || exit 0
case "$line" in *'"initialize"'*'"2025-11-25"'*|*'"2025-11-25"'*'"initialize"'*) ;; *) fail "expected initialize offering 2025-11-25, got: $line";; esac
echo '{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"'"$VERSION"'","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}}'
IFS= read -r line || exit 0
case "$line" in *'"notifications/initialized"'*) ;; *) fail "expected notifications/initialized, got: $line";; esac
IFS= read -r line || exit 0
case "$line" in *'"tools/list"'*) ;; *) fail "expected tools/list, got: $line";; esac
case "$line" in *'_meta'*) fail "a legacy request carried _meta: $line";; esac
echo '{"jsonrpc":"2.0","id":"s1","method":"ping"}'
echo '{"jsonrpc":"2.0","id":"s2","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}'
IFS= read -r pong || exit 0
IFS= read -r refusal || exit 0
ok=no
case "$pong" in *'"id":"s1"'*) case "$pong" in *'"result":{}'*) case "$refusal" in *'"id":"s2"'*) case "$refusal" in *'-32601'*) ok=yes;; esac;; esac;; esac;; esac
[ "$ok" = yes ] || echo "peer: pong=$pong refusal=$refusal" >&2
echo '{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"answered_'"$ok"'","inputSchema":{"type":"object"}}]}}'
IFS= read -r line
exit 0
"#;

const METHOD_NOT_FOUND: &str =
    r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#;

struct Peer {
    _dir: tempfile::TempDir,
    script: PathBuf,
}

fn peer() -> Peer {
    let dir = tempfile::tempdir().expect("a temp dir");
    let script = dir.path().join("peer.sh");
    std::fs::write(&script, PEER).expect("the script is written");
    Peer { _dir: dir, script }
}

fn list(peer: &Peer, discover_answer: &str, version: &str) -> crate::support::Run {
    let script = peer.script.to_string_lossy();
    run_with(
        &with_server(&["list"], &["sh", &script]),
        &[("DISCOVER_ANSWER", discover_answer), ("VERSION", version)],
        None,
    )
}

#[test]
fn a_counter_offer_is_accepted_and_the_servers_requests_are_answered() {
    let peer = peer();
    for version in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        let out = list(&peer, METHOD_NOT_FOUND, version).ok();
        assert_eq!(out.stdout, "answered_yes\n", "{out:#?}");
        assert_eq!(
            out.stderr,
            format!(
                "typed-mcp: era: legacy ({version}, a session opened by initialize; \
                 server/discover: JSON-RPC error -32601: Method not found)\n"
            )
        );
    }
}

#[test]
fn a_version_this_client_does_not_speak_is_refused() {
    let peer = peer();
    let out = list(&peer, METHOD_NOT_FOUND, "2024-11-05").code(2);
    assert!(
        out.stderr
            .contains("the server answered neither protocol era:\n  2026-07-28 (server/discover): server/discover: JSON-RPC error -32601: Method not found\n"),
        "{out:#?}"
    );
    assert!(
        out.stderr.contains(
            "legacy (initialize): initialize: the server answered protocolVersion \
             \"2024-11-05\"; this client negotiates 2025-11-25, 2025-06-18, 2025-03-26 through \
             initialize"
        ),
        "{out:#?}"
    );
}

#[test]
fn unsupported_version_falls_back_only_to_a_dated_revision_it_lists() {
    let peer = peer();
    let dated = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2025-06-18"],"requested":"2026-07-28"}}}"#;
    let out = list(&peer, dated, "2025-06-18").ok();
    assert_eq!(out.stdout, "answered_yes\n", "{out:#?}");
    assert!(
        out.stderr
            .contains("server/discover: JSON-RPC error -32022: Unsupported protocol version)"),
        "{out:#?}"
    );

    // Only revisions this client speaks neither way: reported as is, and no
    // initialize is sent (the peer would fail on anything but its script).
    let newer = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2099-01-01"]}}}"#;
    let out = list(&peer, newer, "2025-11-25").code(1);
    assert!(
        out.stderr.starts_with(
            "typed-mcp: server/discover: JSON-RPC error -32022: Unsupported protocol version \
             (data: "
        ),
        "{out:#?}"
    );
    assert!(!out.stderr.contains("neither protocol era"), "{out:#?}");
    assert!(!out.stderr.contains("peer:"), "{out:#?}");
}

/// One HTTP request the scripted HTTP peer received.
#[derive(Debug, Clone)]
struct Received {
    method: String,
    /// Header names lowercased.
    headers: Vec<(String, String)>,
    /// The JSON-RPC method of the body, if any.
    rpc: Option<String>,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the scripted HTTP peer answers: status, extra headers, content type
/// and body.
type Reply = (u16, Vec<(&'static str, &'static str)>, &'static str, String);

/// A scripted legacy HTTP server on a free loopback port: every request is
/// recorded, and `answer` picks the reply from the HTTP method and the
/// JSON-RPC method. Connections are kept alive, as the client's pool expects.
struct HttpPeer {
    url: String,
    received: std::sync::Arc<std::sync::Mutex<Vec<Received>>>,
}

impl HttpPeer {
    fn start(answer: fn(&str, Option<&str>) -> Reply) -> HttpPeer {
        use std::io::{BufRead as _, BufReader, Read as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
        let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = std::sync::Arc::clone(&received);
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let log = std::sync::Arc::clone(&log);
                std::thread::spawn(move || {
                    let mut writer = stream.try_clone().expect("a clone of the stream");
                    let mut reader = BufReader::new(stream);
                    loop {
                        let mut request_line = String::new();
                        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                            return;
                        }
                        let method = request_line
                            .split(' ')
                            .next()
                            .unwrap_or_default()
                            .to_owned();
                        let mut headers = Vec::new();
                        loop {
                            let mut line = String::new();
                            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            let line = line.trim_end();
                            if line.is_empty() {
                                break;
                            }
                            if let Some((name, value)) = line.split_once(':') {
                                headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
                            }
                        }
                        let length = headers
                            .iter()
                            .find(|(n, _)| n == "content-length")
                            .and_then(|(_, v)| v.parse().ok())
                            .unwrap_or(0);
                        let mut body = vec![0; length];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        let rpc = serde_json::from_slice::<serde_json::Value>(&body)
                            .ok()
                            .and_then(|v| v.get("method")?.as_str().map(str::to_owned));
                        let (status, extra, content_type, reply) = answer(&method, rpc.as_deref());
                        log.lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(Received {
                                method,
                                headers,
                                rpc,
                            });
                        let mut head = format!(
                            "HTTP/1.1 {status} Scripted\r\ncontent-length: {}\r\n",
                            reply.len()
                        );
                        if !content_type.is_empty() {
                            head.push_str(&format!("content-type: {content_type}\r\n"));
                        }
                        for (name, value) in extra {
                            head.push_str(&format!("{name}: {value}\r\n"));
                        }
                        head.push_str("\r\n");
                        if writer.write_all(head.as_bytes()).is_err()
                            || writer.write_all(reply.as_bytes()).is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        HttpPeer { url, received }
    }

    fn received(&self) -> Vec<Received> {
        self.received
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// A 2025-03-26 server: the probe is refused as plain text, initialize hands
/// out session `s-1`; the tools list and the DELETE follow `LIST` and `DELETE`.
fn dated_2025_03_26(method: &str, rpc: Option<&str>, list: u16, delete: u16) -> Reply {
    match (method, rpc) {
        ("POST", Some("server/discover")) => (400, vec![], "text/plain", "no session".into()),
        ("POST", Some("initialize")) => (
            200,
            vec![("mcp-session-id", "s-1")],
            "application/json",
            r#"{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"dated","version":"1"}}}"#.into(),
        ),
        ("POST", Some("notifications/initialized")) => (202, vec![], "", String::new()),
        ("POST", Some("tools/list")) if list == 200 => (
            200,
            vec![],
            "application/json",
            r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"dated_tool","inputSchema":{"type":"object"}}]}}"#.into(),
        ),
        ("POST", Some("tools/list")) => (list, vec![], "text/plain", "unknown session".into()),
        ("DELETE", None) => (delete, vec![], "", String::new()),
        _ => (500, vec![], "text/plain", "unexpected".into()),
    }
}

#[test]
fn a_2025_03_26_session_over_http_sends_its_id_and_no_version_header() {
    let peer = HttpPeer::start(|method, rpc| dated_2025_03_26(method, rpc, 200, 405));
    let out = crate::support::run(&["list", "--", &peer.url]).ok();
    assert_eq!(out.stdout, "dated_tool\n");
    // The DELETE's 405 (sessions not ended by clients) is no error.
    assert_eq!(
        out.stderr,
        format!(
            "typed-mcp: era: legacy (2025-03-26, a session opened by initialize; \
             server/discover: {} did not answer as an MCP server: HTTP 400 Bad Request with \
             text/plain: no session)\n",
            peer.url
        )
    );
    let received = peer.received();
    // (HTTP method, JSON-RPC method, Mcp-Session-Id, MCP-Protocol-Version)
    type Seen<'a> = (&'a str, Option<&'a str>, Option<&'a str>, Option<&'a str>);
    let seen: Vec<Seen<'_>> = received
        .iter()
        .map(|r| {
            (
                r.method.as_str(),
                r.rpc.as_deref(),
                r.header("mcp-session-id"),
                r.header("mcp-protocol-version"),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("POST", Some("server/discover"), None, Some("2026-07-28")),
            ("POST", Some("initialize"), None, None),
            ("POST", Some("notifications/initialized"), Some("s-1"), None),
            ("POST", Some("tools/list"), Some("s-1"), None),
            ("DELETE", None, Some("s-1"), None),
        ]
    );
    // No 2026-07-28 header inside the session.
    assert!(
        received[1..]
            .iter()
            .all(|r| r.header("mcp-method").is_none()),
        "{received:#?}"
    );
}

#[test]
fn a_session_the_server_forgot_is_named() {
    let peer = HttpPeer::start(|method, rpc| dated_2025_03_26(method, rpc, 404, 200));
    let out = crate::support::run(&["list", "--", &peer.url]).code(2);
    assert!(
        out.stderr.contains(
            "HTTP 404 Not Found with text/plain: unknown session — the server no longer knows \
             session s-1 (it expired or was ended); run the command again"
        ),
        "{out:#?}"
    );
    // The session is still ended.
    let received = peer.received();
    assert_eq!(received.last().map(|r| r.method.as_str()), Some("DELETE"));
}

#[test]
fn a_refused_end_of_session_is_reported_and_the_answer_stands() {
    let peer = HttpPeer::start(|method, rpc| dated_2025_03_26(method, rpc, 200, 500));
    let out = crate::support::run(&["list", "--", &peer.url]).ok();
    assert_eq!(out.stdout, "dated_tool\n");
    assert!(
        out.stderr.ends_with(
            "typed-mcp: ending session s-1: the server answered HTTP 500 Internal Server Error\n"
        ),
        "{out:#?}"
    );
}
