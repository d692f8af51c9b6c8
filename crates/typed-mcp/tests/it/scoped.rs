//! Scoped grants on the wire: host patterns checked by `ctx.net`, roots by
//! `ctx.fs`, resource ids by `ctx.authorize_resource`; the declaration as the
//! ceiling below the host's grant; a policy's scopes per principal; the
//! receipt's scopes and `refused_in_call`.

use std::path::PathBuf;

use serde_json::{Value, json};
use typed_mcp::capability::{
    Access, Grant, HostPattern, OutOfScope, ResourcePattern, Scope, fs::FsError,
};
use typed_mcp::receipt::{MemorySink, Outcome, Receipt};
use typed_mcp::transport::Inbound;
use typed_mcp::{BuildError, Capability, Principal, Server, ServerBuilder, ToolContext, tools};
use typed_mcp_client::testing::TestClient;

use crate::schema::client;

const NET: Capability = Capability::new("net", "Reach the partner APIs").hosts();
const FILES: Capability =
    Capability::new("notes.files", "Read and write notes").paths(Access::ReadWrite);
const READER: Capability = Capability::new("notes.read", "Read notes only").paths(Access::Read);
const TICKETS: Capability = Capability::new("desk.write", "Change tickets").resources();

/// Check a URL against the net grant and return the URL to send.
///
/// # Arguments
/// * `url` - The URL.
#[typed_mcp::tool(caps = [NET])]
fn fetch(ctx: ToolContext, url: String) -> Result<String, OutOfScope> {
    Ok(ctx.net(&NET)?.check(&url)?.to_string())
}

/// Check a URL, then the redirect it answered with.
///
/// # Arguments
/// * `url` - The URL.
/// * `location` - The redirect's Location.
#[typed_mcp::tool(caps = [NET])]
fn follow(ctx: ToolContext, url: String, location: String) -> Result<String, OutOfScope> {
    let net = ctx.net(&NET)?;
    let first = net.check(&url)?;
    Ok(net.check_redirect(&first, &location)?.to_string())
}

/// Read a note.
///
/// # Arguments
/// * `path` - The note.
#[typed_mcp::tool(caps = [FILES])]
fn read_note(ctx: ToolContext, path: String) -> Result<String, FsError> {
    let bytes = ctx.fs(&FILES)?.read(&path, 1024)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Write a note.
///
/// # Arguments
/// * `path` - The note.
/// * `text` - What to write.
#[typed_mcp::tool(caps = [FILES])]
fn write_note(ctx: ToolContext, path: String, text: String) -> Result<String, FsError> {
    ctx.fs(&FILES)?.write(&path, text)?;
    Ok("written".into())
}

/// Write through a capability declared read-only.
///
/// # Arguments
/// * `path` - The note.
#[typed_mcp::tool(caps = [READER])]
fn scribble(ctx: ToolContext, path: String) -> Result<String, FsError> {
    ctx.fs(&READER)?.write(&path, "x")?;
    Ok("written".into())
}

/// Declares only the network, but reaches for the files.
///
/// # Arguments
/// * `path` - The note.
#[typed_mcp::tool(caps = [NET])]
fn sneak(ctx: ToolContext, path: String) -> Result<String, FsError> {
    let bytes = ctx.fs(&FILES)?.read(&path, 1024)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Touch a ticket.
///
/// # Arguments
/// * `id` - The resource id.
#[typed_mcp::tool(caps = [TICKETS])]
fn touch(ctx: ToolContext, id: String) -> Result<String, OutOfScope> {
    ctx.authorize_resource(&TICKETS, &id)?;
    Ok(format!("touched {id}"))
}

/// A fresh directory holding `note.txt`, removed when dropped.
struct TempRoot(PathBuf);

impl TempRoot {
    fn new(name: &str) -> TempRoot {
        let dir =
            std::env::temp_dir().join(format!("typed-mcp-scoped-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("note.txt"), "hello").unwrap();
        TempRoot(dir)
    }
}

impl Drop for TempRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn builder(receipts: &MemorySink) -> ServerBuilder {
    Server::new("scoped", "0.1.0")
        .tools(tools![
            fetch, follow, read_note, write_note, scribble, sneak, touch
        ])
        .receipt_sink(receipts.clone())
}

fn net_grants(b: ServerBuilder) -> ServerBuilder {
    b.allow(["net=api.example.com,net=*.example.org,net=10.0.0.5,net=[::1]:8443"])
}

fn text(response: &Value) -> String {
    response["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn last(receipts: &MemorySink) -> Receipt {
    receipts.take().pop().expect("a receipt")
}

#[tokio::test]
async fn host_patterns_match_exactly_by_suffix_by_ip_and_by_port() {
    let receipts = MemorySink::new();
    let server = net_grants(builder(&receipts)).build().unwrap();
    let client = client(server);
    for allowed in [
        "https://api.example.com/v1/tickets",
        "http://API.Example.COM./",
        "https://a.example.org/",
        "https://a.b.example.org/x?q=1",
        "http://10.0.0.5/",
        // Numeric forms of the same address, as a client would resolve them.
        "http://167772165/",
        "http://0x0a.0.0.5/",
        "https://[::1]:8443/",
    ] {
        let result = client.call_tool("fetch", json!({"url": allowed})).await;
        assert_ne!(
            result.result()["isError"],
            true,
            "{allowed}: {}",
            result.result()
        );
    }
    for (refused, asked) in [
        // The apex is not under `*.example.org`.
        ("https://example.org/", "https://example.org"),
        // Look-alikes.
        (
            "https://example.org.evil.net/",
            "https://example.org.evil.net",
        ),
        ("https://evilexample.org/", "https://evilexample.org"),
        (
            "https://api.example.com.evil.net/",
            "https://api.example.com.evil.net",
        ),
        // Userinfo names no host: the host is after `@`.
        ("http://api.example.com@evil.net/", "http://evil.net"),
        ("http://api.example.com:pw@evil.net/", "http://evil.net"),
        // A percent-encoded dot is a dot.
        (
            "http://api.example.com%2eevil.net/",
            "http://api.example.com.evil.net",
        ),
        // Another port than the scheme's default, or than the one granted.
        (
            "https://api.example.com:8443/",
            "https://api.example.com:8443",
        ),
        ("https://[::1]/", "https://[::1]"),
        // A name is not the IP it resolves to, nor an IP a name.
        ("http://10.0.0.6/", "http://10.0.0.6"),
        ("ftp://api.example.com/", "ftp://api.example.com"),
    ] {
        let response = client.call_tool("fetch", json!({"url": refused})).await;
        let result = response.result();
        assert_eq!(result["isError"], true, "{refused}: {result}");
        let message = text(result);
        assert!(message.contains("net"), "{message}");
        assert!(message.contains(asked), "{refused}: {message}");
        let receipt = last(&receipts);
        assert_eq!(
            receipt.outcome,
            Outcome::RefusedInCall {
                capability: "net".into(),
                asked: asked.into()
            },
            "{refused}"
        );
    }
    // The scope granted is in every receipt of the call.
    client
        .call_tool("fetch", json!({"url": "https://api.example.com/"}))
        .await;
    assert_eq!(
        last(&receipts).scopes["net"],
        ["api.example.com", "*.example.org", "10.0.0.5", "[::1]:8443"]
    );
}

#[tokio::test]
async fn a_refusal_shows_the_host_never_the_credentials_or_query() {
    let receipts = MemorySink::new();
    let server = net_grants(builder(&receipts)).build().unwrap();
    let client = client(server);
    let url = "https://user:hunter2-password@evil.net/path?token=abcdef123";
    let response = client.call_tool("fetch", json!({"url": url})).await;
    let message = text(response.result());
    let receipt = serde_json::to_string(&last(&receipts)).unwrap();
    for shown in [&message, &receipt] {
        assert!(shown.contains("https://evil.net"), "{shown}");
        for hidden in ["hunter2", "token", "abcdef", "/path"] {
            assert!(!shown.contains(hidden), "{hidden} in {shown}");
        }
    }
}

#[tokio::test]
async fn a_redirect_to_an_ungranted_host_is_refused() {
    let receipts = MemorySink::new();
    let server = net_grants(builder(&receipts)).build().unwrap();
    let client = client(server);
    let follow = async |location: &str| {
        client
            .call_tool(
                "follow",
                json!({"url": "https://api.example.com/a", "location": location}),
            )
            .await
            .result()
            .clone()
    };
    let relative = follow("/b?page=2").await;
    assert_eq!(
        relative["structuredContent"]["result"],
        "https://api.example.com/b?page=2"
    );
    assert_eq!(
        follow("https://x.example.org/").await["structuredContent"]["result"],
        "https://x.example.org/"
    );
    for location in [
        "https://evil.net/b",
        "//evil.net/b",
        "http://api.example.com@evil.net/",
    ] {
        let result = follow(location).await;
        assert_eq!(result["isError"], true, "{location}: {result}");
        assert!(
            text(&result).contains("https://evil.net") || text(&result).contains("http://evil.net")
        );
    }
}

#[tokio::test]
async fn an_unscoped_host_grant_reaches_no_host() {
    let receipts = MemorySink::new();
    let server = builder(&receipts).grant(NET).build().unwrap();
    let client = client(server);
    let response = client
        .call_tool("fetch", json!({"url": "https://api.example.com/"}))
        .await;
    let message = text(response.result());
    assert!(message.contains("without a scope"), "{message}");
    let receipt = last(&receipts);
    assert!(receipt.scopes.is_empty(), "{receipt:?}");
    assert_eq!(receipt.scope, ["net"]);
}

#[tokio::test]
async fn the_declaration_is_the_ceiling_below_the_hosts_grant() {
    let root = TempRoot::new("ceiling");
    let receipts = MemorySink::new();
    let server = net_grants(builder(&receipts))
        .grant_scoped(FILES, Scope::root(&root.0, Access::ReadWrite))
        .build()
        .unwrap();
    let client = client(server);
    // Granted by the host, but `sneak` declares only `net`.
    let response = client.call_tool("sneak", json!({"path": "note.txt"})).await;
    let result = response.result();
    assert_eq!(result["isError"], true, "{result}");
    let message = text(result);
    assert!(message.contains("notes.files"), "{message}");
    assert!(message.contains("outside this call's scope"), "{message}");
    assert!(!message.contains("hello"), "{message}");
    let receipt = last(&receipts);
    assert_eq!(
        receipt.outcome,
        Outcome::RefusedInCall {
            capability: "notes.files".into(),
            asked: "".into()
        }
    );
    assert!(!receipt.scopes.contains_key("notes.files"), "{receipt:?}");
    // Declared and granted: the same file reads.
    let response = client
        .call_tool("read_note", json!({"path": "note.txt"}))
        .await;
    assert_eq!(response.result()["structuredContent"]["result"], "hello");
}

#[tokio::test]
async fn a_read_grant_refuses_writes_and_a_read_declaration_caps_a_write_grant() {
    let root = TempRoot::new("access");
    let receipts = MemorySink::new();
    let server = builder(&receipts)
        .grant_scoped(FILES, Scope::root(&root.0, Access::Read))
        // Granted read-write, declared read-only: read-only.
        .grant_scoped(READER, Scope::root(&root.0, Access::ReadWrite))
        .build()
        .unwrap();
    let client = client(server);
    for (tool, args) in [
        ("write_note", json!({"path": "new.txt", "text": "x"})),
        ("scribble", json!({"path": "new.txt"})),
    ] {
        let response = client.call_tool(tool, args).await;
        let message = text(response.result());
        assert!(message.contains("read-only"), "{tool}: {message}");
        assert!(message.contains("new.txt"), "{tool}: {message}");
        assert!(!root.0.join("new.txt").exists(), "{tool}");
    }
    let response = client
        .call_tool("read_note", json!({"path": "note.txt"}))
        .await;
    assert_eq!(response.result()["structuredContent"]["result"], "hello");
    let receipt = last(&receipts);
    assert_eq!(
        receipt.scopes["notes.files"],
        [format!("ro:{}", root.0.display())]
    );
}

#[tokio::test]
async fn resource_patterns_are_exact_or_a_prefix() {
    let receipts = MemorySink::new();
    let server = builder(&receipts)
        .allow(["desk.write=ticket:T-1001,desk.write=ticket:T-20*"])
        .build()
        .unwrap();
    let client = client(server);
    for id in ["ticket:T-1001", "ticket:T-20", "ticket:T-2077"] {
        let response = client.call_tool("touch", json!({"id": id})).await;
        assert_ne!(response.result()["isError"], true, "{id}");
    }
    for id in [
        "ticket:T-10011",
        "ticket:t-1001",
        "ticket:T-1002",
        "ticket:T-2",
        "T-1001",
    ] {
        let response = client.call_tool("touch", json!({"id": id})).await;
        let message = text(response.result());
        assert!(message.contains("desk.write"), "{id}: {message}");
        assert!(
            message.contains("ticket:T-1001, ticket:T-20*"),
            "{id}: {message}"
        );
        assert_eq!(
            last(&receipts).outcome,
            Outcome::RefusedInCall {
                capability: "desk.write".into(),
                asked: id.into()
            }
        );
    }
    // Unscoped, the capability covers every resource, as it did before scopes.
    let server = builder(&receipts).grant(TICKETS).build().unwrap();
    let response = client_of(server)
        .call_tool("touch", json!({"id": "ticket:T-9"}))
        .await;
    assert_eq!(
        response.result()["structuredContent"]["result"],
        "touched ticket:T-9"
    );
}

fn client_of(server: Server) -> TestClient {
    client(server)
}

#[tokio::test]
async fn a_policy_scopes_grants_per_principal_on_top_of_everyones() {
    let receipts = MemorySink::new();
    let server = builder(&receipts)
        .allow(["desk.write=ticket:T-1*"])
        .grant_policy_scoped(
            |principal: Option<&Principal>| match principal.map(Principal::id) {
                Some("alice") => vec![Grant::scoped(
                    TICKETS,
                    Scope::resource(ResourcePattern::parse("ticket:T-2*").unwrap()),
                )],
                _ => vec![],
            },
        )
        .build()
        .unwrap();
    let touch_as = async |who: &str, id: &str| {
        let client = TestClient::new(server.clone());
        let message = json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "touch", "arguments": {"id": id}, "_meta": client.envelope()}
        });
        let principal = Principal::new(who);
        client
            .send_raw_with(
                &serde_json::to_vec(&message).unwrap(),
                Inbound::default().principal(Some(&principal)),
            )
            .await
            .result()
            .clone()
    };
    assert_ne!(touch_as("alice", "ticket:T-2").await["isError"], true);
    assert_ne!(touch_as("alice", "ticket:T-1").await["isError"], true);
    assert_eq!(
        last(&receipts).scopes["desk.write"],
        ["ticket:T-1*", "ticket:T-2*"]
    );
    assert_eq!(touch_as("bob", "ticket:T-2").await["isError"], true);
    assert_ne!(touch_as("bob", "ticket:T-1").await["isError"], true);
    assert_eq!(last(&receipts).scopes["desk.write"], ["ticket:T-1*"]);
}

#[test]
fn bad_grants_stop_the_build_naming_the_entry() {
    let receipts = MemorySink::new();
    let root = TempRoot::new("build");
    let cases: Vec<(ServerBuilder, &str, &str)> = vec![
        (
            builder(&receipts).allow(["net=*.exa$mple.com"]),
            "net=*.exa$mple.com",
            "host pattern",
        ),
        (
            builder(&receipts).allow(["net=example.com:99999"]),
            "net=example.com:99999",
            "port",
        ),
        (
            builder(&receipts).allow(["net=10.0.0"]),
            "net=10.0.0",
            "IP address",
        ),
        (
            builder(&receipts).allow(["net=exämple.com"]),
            "net=exämple.com",
            "xn--",
        ),
        (
            builder(&receipts).allow(["notes.files=note.txt"]),
            "notes.files=note.txt",
            "absolute",
        ),
        (
            builder(&receipts).allow(["desk.write=ticket:*T"]),
            "desk.write=ticket:*T",
            "`*`",
        ),
        (
            builder(&receipts).allow(["net="]),
            "net=",
            "expected a scope",
        ),
        (
            builder(&receipts).grant_scoped(NET, Scope::root(&root.0, Access::Read)),
            "net=ro:",
            "host pattern for hosts",
        ),
        (
            builder(&receipts).grant_scoped(
                FILES,
                Scope::host(HostPattern::parse("example.com").unwrap()),
            ),
            "notes.files=example.com",
            "absolute directory",
        ),
    ];
    for (builder, entry, says) in cases {
        let Err(error) = builder.build() else {
            panic!("{entry}: a build error");
        };
        assert!(
            matches!(error, BuildError::InvalidGrant(_)),
            "{entry}: {error:?}"
        );
        let message = error.to_string();
        assert!(message.contains(entry), "{entry}: {message}");
        assert!(message.contains(says), "{entry}: {message}");
    }
}
