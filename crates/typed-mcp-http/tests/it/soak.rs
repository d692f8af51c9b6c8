//! The soak test: the `soak_server` example in its own process under 4 096
//! concurrent connections, each playing a mix of good calls, malformed
//! bodies, slow clients, clients that vanish mid-request or mid-stream, and
//! SSE calls, for `SOAK_SECONDS` (default 5). Ignored by default; run by
//! `scripts/soak`:
//!
//! ```sh
//! SOAK_SECONDS=30 cargo test --release -p typed-mcp-http --test it -- --ignored soak --nocapture
//! ```
//!
//! The client is raw HTTP/1.1 over TCP so that it can misbehave on purpose
//! (half a body, a closed socket mid-stream), which a well-behaved client
//! library will not do.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;
use tokio::sync::{Barrier, Semaphore};

use crate::quickstart::Quickstart;

/// Connections held open at once (`SOAK_CONNECTIONS` may lower it to debug
/// the test itself; the soak is 4 096).
const CONNECTIONS: usize = 4096;
/// Descriptors each process needs beyond one per connection (the runtime,
/// the listener, pipes, stdio).
const SPARE_FDS: u64 = 256;
/// The server's peak RSS must stay under this. Measured (release, 4 096
/// connections, a shared 2-core machine): 190 MiB after 5 s, 222 MiB after
/// 30 s (180 000 exchanges), 232 MiB after 120 s (500 000): about 56 KiB a
/// connection, levelling off as the allocator's arenas fill, not growing with
/// the requests served. 320 MiB (80 KiB a connection) leaves room for noise
/// while a per-connection buffer grown by half, or a leak of 550 bytes a
/// request over a 30 s run, crosses it.
const PEAK_RSS_KIB: u64 = 320 * 1024;
/// How long any one exchange may take before it counts as a failure.
const EXCHANGE: Duration = Duration::from_secs(60);
/// How long the server has to release everything after the clients are gone.
const SETTLE: Duration = Duration::from_secs(20);

/// What one exchange of the mix does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// `tools/call echo`, the answer compared whole.
    Echo,
    /// A malformed body or envelope, its status and JSON-RPC code checked.
    Malformed,
    /// A good call whose head and body arrive in pieces with pauses.
    Slow,
    /// A call with a progress token: SSE, every event checked.
    Sse,
    /// Half a body, then the socket closed.
    CutRequest,
    /// A long SSE call closed after its first event.
    CutStream,
    /// `subscriptions/listen`: the acknowledgement and an update, then closed.
    Listen,
}

/// The mix, in the order each connection walks it (from its own offset).
const MIX: [Kind; 9] = [
    Kind::Echo,
    Kind::Malformed,
    Kind::Slow,
    Kind::Sse,
    Kind::Echo,
    Kind::CutRequest,
    Kind::CutStream,
    Kind::Echo,
    Kind::Listen,
];

/// Counts per kind, and the failures (the first few kept whole).
#[derive(Default)]
struct Tally {
    done: Mutex<BTreeMap<Kind, u64>>,
    failed: AtomicU64,
    first_failures: Mutex<Vec<String>>,
}

impl Tally {
    fn record(&self, kind: Kind, outcome: Result<(), String>) {
        match outcome {
            Ok(()) => *self.done.lock().unwrap().entry(kind).or_default() += 1,
            Err(e) => {
                self.failed.fetch_add(1, Ordering::SeqCst);
                let mut first = self.first_failures.lock().unwrap();
                if first.len() < 20 {
                    first.push(format!("{kind:?}: {e}"));
                }
            }
        }
    }
}

/// One HTTP/1.1 connection to the soak server.
struct Conn {
    io: BufReader<TcpStream>,
    addr: SocketAddr,
}

/// A response head.
struct Head {
    status: u16,
    headers: Vec<(String, String)>,
}

impl Head {
    fn get(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl Conn {
    async fn open(addr: SocketAddr) -> Result<Conn, String> {
        // Thousands of connects at once overflow the listener's accept queue
        // (a backlog of 1 024): the kernel then drops the handshake's last
        // ACK, the client believes it is connected and the server never
        // hears of it until the client writes. A bounded number of connects
        // at a time keeps the queue short.
        static CONNECTING: Semaphore = Semaphore::const_new(128);
        let _turn = CONNECTING.acquire().await.map_err(|e| e.to_string())?;
        let stream = tokio::time::timeout(EXCHANGE, TcpStream::connect(addr))
            .await
            .map_err(|_| "connect timed out".to_owned())?
            .map_err(|e| format!("connect: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        Ok(Conn {
            io: BufReader::new(stream),
            addr,
        })
    }

    /// The head of a POST to `/mcp` announcing `body_len` bytes.
    fn head(&self, body_len: usize, headers: &[(&str, &str)]) -> Vec<u8> {
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\ncontent-length: {body_len}\r\n",
            self.addr
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        head.into_bytes()
    }

    async fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.io
            .get_mut()
            .write_all(bytes)
            .await
            .map_err(|e| format!("write: {e}"))
    }

    async fn send(&mut self, body: &[u8], headers: &[(&str, &str)]) -> Result<(), String> {
        let mut request = self.head(body.len(), headers);
        request.extend_from_slice(body);
        self.write(&request).await
    }

    async fn line(&mut self) -> Result<String, String> {
        let mut line = Vec::new();
        let n = self
            .io
            .read_until(b'\n', &mut line)
            .await
            .map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            return Err("the server closed the connection".into());
        }
        let line = String::from_utf8(line).map_err(|_| "a head line not UTF-8".to_owned())?;
        Ok(line.trim_end_matches(['\r', '\n']).to_owned())
    }

    async fn read_head(&mut self) -> Result<Head, String> {
        let status_line = self.line().await?;
        let status = status_line
            .strip_prefix("HTTP/1.1 ")
            .and_then(|rest| rest.get(..3))
            .and_then(|code| code.parse().ok())
            .ok_or_else(|| format!("a status line, got {status_line:?}"))?;
        let mut headers = Vec::new();
        loop {
            let line = self.line().await?;
            if line.is_empty() {
                return Ok(Head { status, headers });
            }
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| format!("a header line, got {line:?}"))?;
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }

    /// The next chunk of a chunked body; `None` at its end.
    async fn chunk(&mut self) -> Result<Option<Vec<u8>>, String> {
        let size_line = self.line().await?;
        let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| format!("a chunk size, got {size_line:?}"))?;
        let mut data = vec![0; size + 2];
        self.io
            .read_exact(&mut data)
            .await
            .map_err(|e| format!("a chunk: {e}"))?;
        if !data.ends_with(b"\r\n") {
            return Err("a chunk not ended by CRLF".into());
        }
        data.truncate(size);
        if size == 0 {
            // No trailers are sent; the blank line was read with the chunk.
            return Ok(None);
        }
        Ok(Some(data))
    }

    async fn read_body(&mut self, head: &Head) -> Result<Vec<u8>, String> {
        if let Some(length) = head.get("content-length") {
            let length: usize = length.parse().map_err(|_| "a content-length")?;
            let mut body = vec![0; length];
            self.io
                .read_exact(&mut body)
                .await
                .map_err(|e| format!("a body: {e}"))?;
            return Ok(body);
        }
        if head.get("transfer-encoding") != Some("chunked") {
            return Err(format!("neither a length nor chunked: {:?}", head.headers));
        }
        let mut body = Vec::new();
        while let Some(chunk) = self.chunk().await? {
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// A whole JSON response: status, and the body parsed.
    async fn json_reply(&mut self) -> Result<(Head, Value), String> {
        let head = self.read_head().await?;
        let body = self.read_body(&head).await?;
        if head.get("content-type") != Some("application/json") {
            return Err(format!(
                "status {} content-type {:?}: {}",
                head.status,
                head.get("content-type"),
                String::from_utf8_lossy(&body)
            ));
        }
        let value = serde_json::from_slice(&body)
            .map_err(|e| format!("JSON body ({e}): {}", String::from_utf8_lossy(&body)))?;
        Ok((head, value))
    }

    /// Events of an SSE stream until `count` have arrived.
    async fn events(&mut self, pending: &mut Vec<u8>, count: usize) -> Result<Vec<Value>, String> {
        let mut events = Vec::new();
        while events.len() < count {
            if let Some(end) = pending.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = pending.drain(..end + 2).collect();
                let text = std::str::from_utf8(&event[..end]).map_err(|_| "an event not UTF-8")?;
                let data = text
                    .strip_prefix("data: ")
                    .filter(|data| !data.contains('\n'))
                    .ok_or_else(|| format!("one data line, got {text:?}"))?;
                events.push(serde_json::from_str(data).map_err(|e| format!("event JSON: {e}"))?);
                continue;
            }
            match self.chunk().await? {
                Some(chunk) => pending.extend_from_slice(&chunk),
                None => return Err(format!("the stream ended after {} events", events.len())),
            }
        }
        Ok(events)
    }
}

/// A request with the 2026-07-28 `_meta` envelope, and its routing headers.
fn rpc(id: u64, method: &str, mut params: Value, extra_meta: Value) -> Vec<u8> {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    if let (Some(meta), Value::Object(extra)) = (meta.as_object_mut(), extra_meta) {
        meta.extend(extra);
    }
    params["_meta"] = meta;
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .expect("JSON")
}

const VERSION: (&str, &str) = ("mcp-protocol-version", "2026-07-28");
const CALL: (&str, &str) = ("mcp-method", "tools/call");

fn echo_request(id: u64, text: &str) -> Vec<u8> {
    rpc(
        id,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": text}}),
        json!({}),
    )
}

/// The whole answer of a call whose result is `text`.
fn text_answer(id: u64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "resultType": "complete",
        "content": [{"type": "text", "text": text}],
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "typed-mcp-soak", "version": "0.1.0"}}
    }})
}

fn expect_echo(id: u64, text: &str, head: &Head, body: &Value) -> Result<(), String> {
    if head.status != 200 || *body != text_answer(id, text) {
        return Err(format!("echo {id}: status {} body {body}", head.status));
    }
    Ok(())
}

/// The connection's state after an exchange: kept (keep-alive) or closed.
enum After {
    Keep,
    Closed,
}

fn after(head: &Head) -> After {
    if head
        .get("connection")
        .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    {
        After::Closed
    } else {
        After::Keep
    }
}

async fn echo(conn: &mut Conn, id: u64, text: &str) -> Result<After, String> {
    conn.send(
        &echo_request(id, text),
        &[VERSION, CALL, ("mcp-name", "echo")],
    )
    .await?;
    let (head, body) = conn.json_reply().await?;
    expect_echo(id, text, &head, &body)?;
    Ok(after(&head))
}

/// A malformed request and the error it must get.
#[derive(Clone, Copy)]
struct Malformed<'a> {
    body: &'a [u8],
    headers: &'a [(&'a str, &'a str)],
    status: u16,
    code: i64,
    /// Whether the error carries the request's id (it could be read).
    echoes_id: bool,
}

impl<'a> Malformed<'a> {
    fn new(
        body: &'a [u8],
        headers: &'a [(&'a str, &'a str)],
        status: u16,
        code: i64,
        echoes_id: bool,
    ) -> Self {
        Malformed {
            body,
            headers,
            status,
            code,
            echoes_id,
        }
    }
}

async fn malformed(conn: &mut Conn, id: u64) -> Result<After, String> {
    let list = rpc(id, "tools/list", json!({}), json!({}));
    let no_meta = serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}}),
    )
    .expect("JSON");
    let unknown = rpc(id, "nope/nope", json!({}), json!({}));
    let cases = [
        Malformed::new(b"{not json", &[], 400, -32700, false),
        Malformed::new(b"[]", &[], 400, -32600, false),
        Malformed::new(
            &no_meta,
            &[VERSION, ("mcp-method", "tools/list")],
            400,
            -32602,
            true,
        ),
        Malformed::new(
            &unknown,
            &[VERSION, ("mcp-method", "nope/nope")],
            404,
            -32601,
            true,
        ),
        // The routing header is missing.
        Malformed::new(&list, &[VERSION], 400, -32020, true),
    ];
    let Malformed {
        body,
        headers,
        status,
        code,
        echoes_id,
    } = cases[(id % 5) as usize];
    conn.send(body, headers).await?;
    let (head, reply) = conn.json_reply().await?;
    let id_ok = !echoes_id || reply["id"] == id;
    if head.status != status || reply["error"]["code"] != code || !id_ok {
        return Err(format!(
            "case {}: expected {status} / {code}, got {} {reply}",
            id % 5,
            head.status
        ));
    }
    Ok(after(&head))
}

async fn slow(conn: &mut Conn, id: u64, text: &str) -> Result<After, String> {
    let body = echo_request(id, text);
    let mut request = conn.head(body.len(), &[VERSION, CALL, ("mcp-name", "echo")]);
    request.extend_from_slice(&body);
    // Four pieces, the first ending inside the head, 50–200 ms apart.
    let cuts = [
        0,
        request.len() / 8,
        request.len() / 2,
        request.len() * 3 / 4,
        request.len(),
    ];
    for (n, piece) in cuts.windows(2).enumerate() {
        conn.write(&request[piece[0]..piece[1]]).await?;
        if piece[1] < request.len() {
            let pause = 50 + (id + n as u64) % 4 * 50;
            tokio::time::sleep(Duration::from_millis(pause)).await;
        }
    }
    let (head, reply) = conn.json_reply().await?;
    expect_echo(id, text, &head, &reply)?;
    Ok(after(&head))
}

/// Sends a `drip` call with a progress token and checks the SSE head.
async fn start_drip(conn: &mut Conn, id: u64, steps: u64, ms: u64) -> Result<Head, String> {
    let body = rpc(
        id,
        "tools/call",
        json!({"name": "drip", "arguments": {"steps": steps, "ms": ms}}),
        json!({"progressToken": format!("p{id}")}),
    );
    conn.send(&body, &[VERSION, CALL, ("mcp-name", "drip")])
        .await?;
    let head = conn.read_head().await?;
    if head.status != 200 || head.get("content-type") != Some("text/event-stream") {
        let body = conn.read_body(&head).await.unwrap_or_default();
        return Err(format!(
            "drip {id}: status {} {:?}: {}",
            head.status,
            head.headers,
            String::from_utf8_lossy(&body)
        ));
    }
    Ok(head)
}

fn expect_progress(id: u64, step: u64, steps: u64, event: &Value) -> Result<(), String> {
    let expected = json!({
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": format!("p{id}"), "progress": step as f64, "total": steps as f64}
    });
    if *event != expected {
        return Err(format!("drip {id} step {step}: {event}"));
    }
    Ok(())
}

async fn sse(conn: &mut Conn, id: u64) -> Result<After, String> {
    const STEPS: u64 = 3;
    let head = start_drip(conn, id, STEPS, 10).await?;
    let body = conn.read_body(&head).await?;
    let events = parse_events(&body)?;
    if events.len() != STEPS as usize + 1 {
        return Err(format!("drip {id}: {} events: {events:?}", events.len()));
    }
    for (step, event) in (1..=STEPS).zip(&events) {
        expect_progress(id, step, STEPS, event)?;
    }
    let answer = text_answer(id, &format!("dripped {STEPS}"));
    if events[STEPS as usize] != answer {
        return Err(format!("drip {id} result: {}", events[STEPS as usize]));
    }
    Ok(after(&head))
}

fn parse_events(body: &[u8]) -> Result<Vec<Value>, String> {
    let text = std::str::from_utf8(body).map_err(|_| "SSE not UTF-8")?;
    if !text.ends_with("\n\n") {
        return Err(format!("events end with a blank line: {text:?}"));
    }
    text.split_terminator("\n\n")
        .map(|event| {
            let data = event
                .strip_prefix("data: ")
                .filter(|data| !data.contains('\n'))
                .ok_or_else(|| format!("one data line, got {event:?}"))?;
            serde_json::from_str(data).map_err(|e| format!("event JSON: {e}"))
        })
        .collect()
}

async fn cut_request(conn: &mut Conn, id: u64) -> Result<After, String> {
    let body = echo_request(id, "never finished");
    let head = conn.head(body.len(), &[VERSION, CALL, ("mcp-name", "echo")]);
    conn.write(&head).await?;
    conn.write(&body[..body.len() / 2]).await?;
    Ok(After::Closed)
}

async fn cut_stream(conn: &mut Conn, id: u64) -> Result<After, String> {
    // Two seconds of progress, abandoned after the first event.
    let _head = start_drip(conn, id, 100, 20).await?;
    let events = conn.events(&mut Vec::new(), 1).await?;
    expect_progress(id, 1, 100, &events[0])?;
    Ok(After::Closed)
}

async fn listen(conn: &mut Conn, id: u64) -> Result<After, String> {
    let body = rpc(
        id,
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": ["soak://ticks"]}}),
        json!({}),
    );
    conn.send(&body, &[VERSION, ("mcp-method", "subscriptions/listen")])
        .await?;
    let head = conn.read_head().await?;
    if head.status != 200 || head.get("content-type") != Some("text/event-stream") {
        return Err(format!("listen: status {} {:?}", head.status, head.headers));
    }
    let events = conn.events(&mut Vec::new(), 2).await?;
    if events[0]["method"] != "notifications/subscriptions/acknowledged" {
        return Err(format!("listen: first event {}", events[0]));
    }
    if events[1]["method"] != "notifications/resources/updated"
        || events[1]["params"]["uri"] != "soak://ticks"
    {
        return Err(format!("listen: second event {}", events[1]));
    }
    Ok(After::Closed)
}

/// One connection's life: connect, meet the others, then walk the mix until
/// `end`, reconnecting after every exchange that closes the socket.
async fn client(
    index: usize,
    addr: SocketAddr,
    connected: Arc<Barrier>,
    go: Arc<Barrier>,
    end: Arc<Mutex<Option<Instant>>>,
    tally: Arc<Tally>,
) {
    let mut conn = match Conn::open(addr).await {
        Ok(conn) => Some(conn),
        Err(e) => {
            tally.record(Kind::Echo, Err(format!("first connect of {index}: {e}")));
            None
        }
    };
    connected.wait().await;
    go.wait().await;
    let end = end.lock().unwrap().expect("the end is set before go");
    let mut step = index;
    while Instant::now() < end {
        let kind = MIX[step % MIX.len()];
        // Ids unique across the whole run: which call an answer is for is checked.
        let id = (index as u64) << 32 | step as u64;
        step += 1;
        let mut current = match conn.take() {
            Some(conn) => conn,
            None => match Conn::open(addr).await {
                Ok(conn) => conn,
                Err(e) => {
                    tally.record(kind, Err(e));
                    continue;
                }
            },
        };
        let text = format!("soak {index} {step}");
        let exchange = async {
            match kind {
                Kind::Echo => echo(&mut current, id, &text).await,
                Kind::Malformed => malformed(&mut current, id).await,
                Kind::Slow => slow(&mut current, id, &text).await,
                Kind::Sse => sse(&mut current, id).await,
                Kind::CutRequest => cut_request(&mut current, id).await,
                Kind::CutStream => cut_stream(&mut current, id).await,
                Kind::Listen => listen(&mut current, id).await,
            }
        };
        let outcome = match tokio::time::timeout(EXCHANGE, exchange).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!("no answer within {EXCHANGE:?}")),
        };
        match &outcome {
            Ok(After::Keep) => conn = Some(current),
            Ok(After::Closed) | Err(_) => drop(current),
        }
        tally.record(kind, outcome.map(|_| ()));
    }
}

/// The soft limit on open files of this process (its children inherit it).
fn open_files_limit() -> u64 {
    let limits = std::fs::read_to_string("/proc/self/limits").expect("/proc/self/limits");
    limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .and_then(|line| line.split_whitespace().nth(3))
        .and_then(|soft| soft.parse().ok())
        .unwrap_or_else(|| panic!("a soft open-files limit in:\n{limits}"))
}

fn fds(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("the server's fd directory")
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .map(|target| target.display().to_string())
        .collect()
}

/// A fresh connection's `census` of the server: (handlers, subscribers).
async fn census(addr: SocketAddr) -> (u64, u64) {
    let mut conn = Conn::open(addr).await.expect("a connection for the census");
    let body = rpc(
        1,
        "tools/call",
        json!({"name": "census", "arguments": {}}),
        json!({}),
    );
    conn.send(&body, &[VERSION, CALL, ("mcp-name", "census")])
        .await
        .expect("the census is sent");
    let (head, reply) = conn.json_reply().await.expect("the census answers");
    assert_eq!(head.status, 200, "census: {reply}");
    let counts = &reply["result"]["structuredContent"];
    let count = |name: &str| {
        counts[name]
            .as_u64()
            .unwrap_or_else(|| panic!("a {name} count in {reply}"))
    };
    (count("handlers"), count("subscribers"))
}

/// Waits up to `SETTLE` for `check` to hold, then returns its last value.
async fn settle<T: PartialEq + std::fmt::Debug>(
    mut read: impl AsyncFnMut() -> T,
    goal: impl Fn(&T) -> bool,
) -> T {
    let deadline = Instant::now() + SETTLE;
    loop {
        let value = read().await;
        if goal(&value) || Instant::now() > deadline {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(value) => value
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value:?} is not a whole number")),
        Err(_) => default,
    }
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a soak test; run by scripts/soak (SOAK_SECONDS sets its length)"]
async fn soak_4096_connections_of_mixed_traffic_leave_no_leak() {
    let seconds = env_number("SOAK_SECONDS", 5);
    let connections = env_number("SOAK_CONNECTIONS", CONNECTIONS as u64) as usize;
    let needed = connections as u64 + SPARE_FDS;
    let limit = open_files_limit();
    assert!(
        limit >= needed,
        "the soak needs {needed} open files in this process and in the server; the soft \
         limit is {limit}: raise it (`ulimit -n {needed}`, as scripts/soak does)"
    );

    let server = Quickstart::example("soak_server", &["127.0.0.1:0"]);
    let (pid, addr) = (server.pid(), server.addr);
    // Warm up every path once, so lazily built state is in the baseline.
    let warm = Arc::new(Tally::default());
    for (kind, id) in [(Kind::Echo, 1), (Kind::Sse, 2), (Kind::Listen, 3)] {
        let mut conn = Conn::open(addr).await.expect("a warm-up connection");
        let outcome = match kind {
            Kind::Echo => echo(&mut conn, id, "warm").await,
            Kind::Sse => sse(&mut conn, id).await,
            _ => listen(&mut conn, id).await,
        };
        warm.record(kind, outcome.map(|_| ()));
    }
    assert_eq!(
        warm.failed.load(Ordering::SeqCst),
        0,
        "warm-up: {:?}",
        warm.first_failures.lock().unwrap()
    );
    let baseline_census = settle(async || census(addr).await, |c| *c == (0, 0)).await;
    assert_eq!(baseline_census, (0, 0), "nothing runs before the soak");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let fds_before = fds(pid);
    let threads_before = server.status_kib("Threads");
    let rss_before = server.status_kib("VmRSS");

    let tally = Arc::new(Tally::default());
    let connected = Arc::new(Barrier::new(connections + 1));
    let go = Arc::new(Barrier::new(connections + 1));
    let end = Arc::new(Mutex::new(None));
    let clients: Vec<_> = (0..connections)
        .map(|index| {
            tokio::spawn(client(
                index,
                addr,
                connected.clone(),
                go.clone(),
                end.clone(),
                tally.clone(),
            ))
        })
        .collect();
    let ramp = Instant::now();
    connected.wait().await;
    // Every client holds a connection: the server must have accepted them all.
    let at_once = settle(
        async || fds(pid).len(),
        |n| *n >= fds_before.len() + connections,
    )
    .await;
    assert!(
        at_once >= fds_before.len() + connections,
        "expected the server to hold {connections} connections at once, it has {at_once} \
         descriptors ({} before); client failures: {:?}",
        fds_before.len(),
        tally.first_failures.lock().unwrap()
    );
    let ramp = ramp.elapsed();
    let started = Instant::now();
    *end.lock().unwrap() = Some(started + Duration::from_secs(seconds));
    go.wait().await;

    // Sample the server's descriptors while the clients run.
    let mut peak_fds = at_once;
    while !clients.iter().all(|c| c.is_finished()) {
        peak_fds = peak_fds.max(fds(pid).len());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    for client in clients {
        client.await.expect("a client task");
    }
    let elapsed = started.elapsed();
    let peak_rss = server.status_kib("VmHWM");

    // The clients are gone: everything they held must be released.
    let fds_after = settle(async || fds(pid), |after| after.len() <= fds_before.len()).await;
    let census_after = settle(async || census(addr).await, |c| *c == (0, 0)).await;
    let threads_after = settle(
        async || server.status_kib("Threads"),
        |t| *t <= threads_before,
    )
    .await;
    let fds_after_census = settle(async || fds(pid), |after| after.len() <= fds_before.len()).await;
    let rss_after = server.status_kib("VmRSS");

    let done = tally.done.lock().unwrap().clone();
    let total: u64 = done.values().sum();
    let failed = tally.failed.load(Ordering::SeqCst);
    eprintln!(
        "soak: {connections} connections (all open at once after {ramp:.1?}, {at_once} server \
         fds then, peak {peak_fds}) for {elapsed:.1?}: {total} exchanges ({:.0}/s), {failed} \
         failed; per kind {done:?}",
        total as f64 / elapsed.as_secs_f64()
    );
    eprintln!(
        "soak: server RSS {rss_before} KiB before, peak {peak_rss} KiB (bound {PEAK_RSS_KIB}), \
         {rss_after} KiB after; fds {} before, {} after; threads {threads_before} before, \
         {threads_after} after; census after (handlers, subscriptions) {census_after:?}",
        fds_before.len(),
        fds_after_census.len()
    );
    assert_eq!(
        failed,
        0,
        "failed exchanges, the first ones: {:#?}",
        tally.first_failures.lock().unwrap()
    );
    for kind in MIX {
        assert!(
            done.get(&kind).is_some_and(|n| *n > 0),
            "no {kind:?} exchange completed"
        );
    }
    assert!(
        peak_rss < PEAK_RSS_KIB,
        "expected the server's peak RSS under {PEAK_RSS_KIB} KiB, found {peak_rss} KiB"
    );
    assert_eq!(
        census_after,
        (0, 0),
        "handlers or subscriptions outlived their clients"
    );
    assert!(
        fds_after.len() <= fds_before.len() && fds_after_census.len() <= fds_before.len(),
        "descriptors leaked: before {fds_before:?}, after {fds_after_census:?}"
    );
    assert!(
        threads_after <= threads_before,
        "threads leaked: {threads_before} before, {threads_after} after"
    );
}
