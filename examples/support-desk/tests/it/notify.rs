//! `notify_webhook` through the binary: `desk.notify` narrowed to hosts,
//! against real HTTP receivers on loopback. Nothing may reach a host outside
//! the grant, before a request or after a redirect.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::{Value, json};

use crate::support::{
    Scratch, StdioDesk, hit_ids, read_receipts, stderr_once_written, text_of, wait_for_receipt,
};

/// One request a receiver saw.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    body: String,
}

/// An HTTP/1.1 receiver on 127.0.0.1: answers every request by its path
/// (`route` gives the status and an optional `Location`) and records it.
struct Receiver {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Receiver {
    fn start(route: fn(&str, u16) -> (u16, Option<String>)) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let log = log.clone();
                thread::spawn(move || serve(stream, port, route, &log));
            }
        });
        Receiver { port, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

/// Serves one connection's requests (keep-alive: the desk's client reuses it).
fn serve(
    stream: TcpStream,
    port: u16,
    route: fn(&str, u16) -> (u16, Option<String>),
    log: &Mutex<Vec<Seen>>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_owned();
        let path = parts.next().unwrap_or_default().to_owned();
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let (status, location) = route(&path, port);
        log.lock().unwrap().push(Seen {
            method,
            path,
            body: String::from_utf8_lossy(&body).into_owned(),
        });
        let location = location
            .map(|l| format!("location: {l}\r\n"))
            .unwrap_or_default();
        let answer = format!("HTTP/1.1 {status} X\r\n{location}content-length: 2\r\n\r\nok");
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

/// The granted receiver's routes: `/hook` accepts, the others redirect.
fn granted_routes(path: &str, port: u16) -> (u16, Option<String>) {
    match path {
        "/hook" => (200, None),
        "/moved" => (307, Some("/hook".into())),
        "/see-other" => (303, Some(format!("http://127.0.0.1:{port}/hook"))),
        "/loop" => (302, Some("/loop".into())),
        // Where the port of the ungranted receiver is, the test says in the path.
        away if away.starts_with("/away/") => (
            307,
            Some(format!(
                "http://localhost:{}/hook",
                away.trim_start_matches("/away/")
            )),
        ),
        "/broken" => (500, None),
        _ => (404, None),
    }
}

fn any_routes(_: &str, _: u16) -> (u16, Option<String>) {
    (200, None)
}

fn notify(desk: &mut StdioDesk, url: &str) -> Value {
    desk.tool("notify_webhook", json!({"ticket_id": "T-1003", "url": url}))
}

#[track_caller]
fn assert_refused(result: &Value, asked: &str, scope: &str) {
    assert_eq!(result["isError"], true, "{result}");
    let text = text_of(result);
    assert!(text.contains("desk.notify"), "names the capability: {text}");
    assert!(text.contains(asked), "names what was asked: {text}");
    assert!(text.contains(scope), "names the scope: {text}");
}

fn spawn(scratch: &Scratch, grant: &str) -> StdioDesk {
    let receipts = scratch.receipts().display().to_string();
    StdioDesk::spawn(&scratch.args(&["--allow", grant, "--receipts", &receipts]))
}

#[test]
fn a_granted_host_is_notified_and_redirects_are_followed_only_inside_the_grant() {
    let granted = Receiver::start(granted_routes);
    let elsewhere = Receiver::start(any_routes);
    let scope = format!("127.0.0.1:{}", granted.port);
    let scratch = Scratch::new();
    let mut desk = spawn(&scratch, &format!("desk.notify={scope}"));

    let delivered = notify(&mut desk, &granted.url("/hook"));
    assert_ne!(delivered["isError"], true, "{delivered}");
    assert_eq!(
        delivered["structuredContent"],
        json!({"delivered_to": format!("http://{scope}"), "status": 200, "redirects": 0})
    );
    let first = &granted.seen()[0];
    assert_eq!(
        (first.method.as_str(), first.path.as_str()),
        ("POST", "/hook")
    );
    let summary: Value = serde_json::from_str(&first.body).unwrap();
    assert_eq!(summary["ticket_id"], "T-1003", "{summary}");
    assert_eq!(summary["uri"], "ticket://T-1003", "{summary}");

    // A 307 inside the grant repeats the POST; a 303 continues with a GET.
    let moved = notify(&mut desk, &granted.url("/moved"));
    assert_eq!(moved["structuredContent"]["redirects"], 1, "{moved}");
    let other = notify(&mut desk, &granted.url("/see-other"));
    assert_eq!(other["structuredContent"]["redirects"], 1, "{other}");
    let seen: Vec<(String, String)> = granted
        .seen()
        .into_iter()
        .map(|s| (s.method, s.path))
        .collect();
    let expected: Vec<(String, String)> = [
        ("POST", "/hook"),
        ("POST", "/moved"),
        ("POST", "/hook"),
        ("POST", "/see-other"),
        ("GET", "/hook"),
    ]
    .iter()
    .map(|(m, p)| (m.to_string(), p.to_string()))
    .collect();
    assert_eq!(seen, expected);

    // A redirect to a host outside the grant is refused before anything is
    // sent there: the name `localhost` is not the granted IP literal.
    let away = notify(
        &mut desk,
        &granted.url(&format!("/away/{}", elsewhere.port)),
    );
    let asked = format!("http://localhost:{}", elsewhere.port);
    assert_refused(&away, &asked, &scope);
    assert!(elsewhere.seen().is_empty(), "{:?}", elsewhere.seen());
    let receipt = wait_for_receipt(&scratch.receipts(), |r| {
        r["outcome"]["kind"] == "refused_in_call"
    });
    assert_eq!(
        receipt["outcome"],
        json!({"kind": "refused_in_call", "capability": "desk.notify", "asked": asked})
    );
    assert_eq!(receipt["scopes"], json!({"desk.notify": [scope]}));

    // Endless redirects and failing webhooks are errors the model reads.
    let looped = notify(&mut desk, &granted.url("/loop"));
    assert_eq!(looped["isError"], true, "{looped}");
    assert!(
        text_of(&looped).contains("more than 5 redirects"),
        "{looped}"
    );
    let broken = notify(&mut desk, &granted.url("/broken"));
    assert_eq!(broken["isError"], true, "{broken}");
    assert!(text_of(&broken).contains("500"), "{broken}");

    // The server still serves.
    let hits = desk.tool("search_tickets", json!({"query": "refund"}));
    assert!(!hit_ids(&hits).is_empty());
    desk.close_stdin();
    assert!(desk.wait_exit(), "{}", desk.stderr());
}

#[test]
fn hosts_outside_the_grant_are_refused_before_anything_is_sent() {
    let receiver = Receiver::start(any_routes);
    let port = receiver.port;
    let scratch = Scratch::new();
    // Granted by name and by suffix; the receiver listens on 127.0.0.1, and
    // `--resolve` gives two more names that address: one under the granted
    // suffix and one outside it.
    let receipts = scratch.receipts().display().to_string();
    let grant = format!("desk.notify=localhost:{port},desk.notify=*.example.test:{port}");
    let mut desk = StdioDesk::spawn(&scratch.args(&[
        "--allow",
        &grant,
        "--resolve",
        "hooks.example.test=127.0.0.1",
        "--resolve",
        "hooks.example.test.evil.net=127.0.0.1",
        "--receipts",
        &receipts,
    ]));
    for (url, asked) in [
        // An IP literal is not the name that resolves to it.
        (
            format!("http://127.0.0.1:{port}/hook"),
            format!("http://127.0.0.1:{port}"),
        ),
        // Userinfo names no host: the host is after the `@`.
        (
            format!("http://localhost:{port}@127.0.0.1:{port}/hook"),
            format!("http://127.0.0.1:{port}"),
        ),
        // Another port of the granted name.
        (
            format!("http://localhost:{}/hook", port ^ 1),
            format!("http://localhost:{}", port ^ 1),
        ),
        // A look-alike of the suffix (which resolves to the receiver), and
        // the bare suffix itself.
        (
            format!("http://hooks.example.test.evil.net:{port}/hook"),
            format!("http://hooks.example.test.evil.net:{port}"),
        ),
        (
            format!("http://example.test:{port}/hook"),
            format!("http://example.test:{port}"),
        ),
        // Not http(s).
        (
            format!("ftp://localhost:{port}/hook"),
            format!("ftp://localhost:{port}"),
        ),
    ] {
        let refused = notify(&mut desk, &url);
        assert_eq!(refused["isError"], true, "{url}: {refused}");
        let text = text_of(&refused);
        assert!(text.contains("desk.notify"), "{url}: {text}");
        assert!(text.contains(&asked), "{url}: names {asked}: {text}");
    }
    assert!(receiver.seen().is_empty(), "{:?}", receiver.seen());
    let refusals = read_receipts(&scratch.receipts())
        .into_iter()
        .filter(|r| r["outcome"]["kind"] == "refused_in_call")
        .count();
    assert_eq!(refusals, 6);

    // The granted name and a name under the granted suffix are reached.
    for url in [
        format!("http://localhost:{port}/hook"),
        format!("http://hooks.example.test:{port}/hook"),
    ] {
        let delivered = notify(&mut desk, &url);
        assert_ne!(delivered["isError"], true, "{url}: {delivered}");
    }
    assert_eq!(receiver.seen().len(), 2);
}

#[test]
fn a_bad_resolve_entry_stops_the_server_at_startup_naming_it() {
    let scratch = Scratch::new();
    for (entry, says) in [
        ("hooks.example.com", "expected NAME=ADDRESS"),
        (
            "https://hooks.example.com=127.0.0.1",
            "expected a host name",
        ),
        (
            "hooks.example.com=localhost",
            "expected an IPv4 or IPv6 address",
        ),
    ] {
        let mut desk = StdioDesk::spawn(&scratch.args(&["--resolve", entry]));
        assert!(!desk.wait_exit(), "{entry}: a startup error");
        let stderr = stderr_once_written(&desk);
        assert!(stderr.contains(entry), "{entry}: names the entry: {stderr}");
        assert!(stderr.contains(says), "{entry}: says why: {stderr}");
    }
}

#[test]
fn without_the_notify_grant_the_tool_is_refused_before_it_runs() {
    let receiver = Receiver::start(any_routes);
    let scratch = Scratch::new();
    // Granting something else grants no hosts.
    let mut desk = spawn(&scratch, "desk.write");
    let refused = notify(&mut desk, &receiver.url("/hook"));
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text_of(&refused).contains("desk.notify"), "{refused}");
    let receipt = wait_for_receipt(&scratch.receipts(), |r| r["name"] == "notify_webhook");
    assert_eq!(receipt["outcome"]["kind"], "refused", "{receipt}");
    assert!(receiver.seen().is_empty());
}
