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
