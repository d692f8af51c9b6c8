//! Scoped grants through the binary: `desk.files` narrowed to a directory
//! (attachments and exports), `desk.write` narrowed to some tickets, and
//! `--allow` entries that stop the server at startup.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use serde_json::{Value, json};

use crate::support::{
    Scratch, StdioDesk, hit_ids, read_receipts, result_of, stderr_once_written, text_of,
    wait_for_receipt,
};

/// What a file outside the granted directory holds: it must never reach a
/// result.
const OUTSIDE: &str = "OUTSIDE-THE-ROOT";

/// A scratch directory with `files/` (the root to grant) and, beside it,
/// `secret.txt` and `elsewhere/`, which no call may reach.
struct Files {
    scratch: Scratch,
    root: PathBuf,
    outside: PathBuf,
}

impl Files {
    fn new() -> Files {
        let scratch = Scratch::new();
        let base = scratch.db().parent().unwrap().to_owned();
        let root = base.join("files");
        fs::create_dir_all(root.join("logs")).unwrap();
        fs::write(root.join("logs/vpn.txt"), "vpn drops at 10:02").unwrap();
        let outside = base.join("secret.txt");
        fs::write(&outside, OUTSIDE).unwrap();
        fs::create_dir_all(base.join("elsewhere")).unwrap();
        fs::write(base.join("elsewhere/a.txt"), OUTSIDE).unwrap();
        // Symlinks inside the root that point out of it.
        symlink(&outside, root.join("escape.txt")).unwrap();
        symlink(base.join("elsewhere"), root.join("outdir")).unwrap();
        Files {
            scratch,
            root,
            outside,
        }
    }

    fn base(&self) -> &Path {
        self.root.parent().unwrap()
    }

    fn spawn(&self, grant: &str) -> StdioDesk {
        let receipts = self.scratch.receipts().display().to_string();
        StdioDesk::spawn(
            &self
                .scratch
                .args(&["--allow", grant, "--receipts", &receipts]),
        )
    }

    fn root_text(&self) -> String {
        self.root.display().to_string()
    }
}

#[track_caller]
fn assert_refused(result: &Value, capability: &str, asked: &str, scope: &str) {
    assert_eq!(result["isError"], true, "{result}");
    let text = text_of(result);
    assert!(text.contains(capability), "names the capability: {text}");
    assert!(text.contains(asked), "names what was asked: {text}");
    assert!(text.contains(scope), "names the scope: {text}");
    assert!(!text.contains(OUTSIDE), "nothing from outside: {text}");
}

fn attach(desk: &mut StdioDesk, path: &str) -> Value {
    desk.tool("attach_file", json!({"ticket_id": "T-1003", "path": path}))
}

#[test]
fn attach_file_reads_under_the_granted_root_and_refuses_every_escape() {
    let files = Files::new();
    let root = files.root_text();
    let mut desk = files.spawn(&format!("desk.files={root}"));

    let attached = attach(&mut desk, "logs/vpn.txt");
    assert_ne!(attached["isError"], true, "{attached}");
    assert!(
        attached["structuredContent"]["body"]
            .as_str()
            .unwrap()
            .contains("vpn drops at 10:02"),
        "{attached}"
    );
    // A `..` that stays inside is no escape.
    let inside = attach(&mut desk, "logs/../logs/vpn.txt");
    assert_ne!(inside["isError"], true, "{inside}");

    let absolute = files.outside.display().to_string();
    for escape in [
        "../secret.txt",
        "logs/../../secret.txt",
        absolute.as_str(),
        "escape.txt",
        "outdir/a.txt",
    ] {
        let refused = attach(&mut desk, escape);
        assert_refused(&refused, "desk.files", escape, &root);
    }

    // Each refusal left a receipt saying so, with what was asked and the scope.
    let receipt = wait_for_receipt(&files.scratch.receipts(), |r| {
        r["outcome"]["kind"] == "refused_in_call" && r["outcome"]["asked"] == "escape.txt"
    });
    assert_eq!(receipt["outcome"]["capability"], "desk.files", "{receipt}");
    assert_eq!(receipt["scopes"]["desk.files"], json!([root]), "{receipt}");
    let completed = wait_for_receipt(&files.scratch.receipts(), |r| {
        r["name"] == "attach_file" && r["outcome"]["kind"] == "completed"
    });
    assert_eq!(
        completed["scopes"]["desk.files"],
        json!([root]),
        "{completed}"
    );

    // The server still serves.
    let hits = desk.tool("search_tickets", json!({"query": "refund"}));
    assert!(!hit_ids(&hits).is_empty());
    desk.close_stdin();
    assert!(desk.wait_exit(), "{}", desk.stderr());
    let refused = read_receipts(&files.scratch.receipts())
        .into_iter()
        .filter(|r| r["outcome"]["kind"] == "refused_in_call")
        .count();
    assert_eq!(refused, 5);
}

#[test]
fn a_read_only_grant_reads_but_refuses_the_export_and_writes_nothing() {
    let files = Files::new();
    let root = files.root_text();
    let mut desk = files.spawn(&format!("desk.files=ro:{root}"));

    let attached = attach(&mut desk, "logs/vpn.txt");
    assert_ne!(attached["isError"], true, "{attached}");

    let refused = desk.tool(
        "export_ticket",
        json!({"ticket_id": "T-1001", "path": "T-1001.json"}),
    );
    assert_refused(&refused, "desk.files", "T-1001.json", &format!("ro:{root}"));
    assert!(text_of(&refused).contains("read-only"), "{refused}");
    assert!(!files.root.join("T-1001.json").exists());

    let receipt = wait_for_receipt(&files.scratch.receipts(), |r| r["name"] == "export_ticket");
    assert_eq!(receipt["outcome"]["kind"], "refused_in_call", "{receipt}");
    assert_eq!(receipt["outcome"]["asked"], "T-1001.json");
    assert_eq!(
        receipt["scopes"]["desk.files"],
        json!([format!("ro:{root}")])
    );
}

#[test]
fn export_writes_under_the_root_and_nowhere_else() {
    let files = Files::new();
    let root = files.root_text();
    let mut desk = files.spawn(&format!("desk.files={root}"));

    let exported = desk.tool(
        "export_ticket",
        json!({"ticket_id": "T-1001", "path": "logs/T-1001.json"}),
    );
    assert_ne!(exported["isError"], true, "{exported}");
    let written: Value =
        serde_json::from_str(&fs::read_to_string(files.root.join("logs/T-1001.json")).unwrap())
            .unwrap();
    assert_eq!(written["id"], "T-1001");

    for escape in ["../T-1001.json", "outdir/T-1001.json", "escape.txt"] {
        let refused = desk.tool(
            "export_ticket",
            json!({"ticket_id": "T-1001", "path": escape}),
        );
        assert_refused(&refused, "desk.files", escape, &root);
    }
    assert!(!files.base().join("T-1001.json").exists());
    assert!(!files.base().join("elsewhere/T-1001.json").exists());
    // The symlinked file outside was not overwritten.
    assert_eq!(fs::read_to_string(&files.outside).unwrap(), OUTSIDE);

    // An error inside the root is a plain file error, not a refusal.
    let missing_dir = desk.tool(
        "export_ticket",
        json!({"ticket_id": "T-1001", "path": "nope/T-1001.json"}),
    );
    assert_eq!(missing_dir["isError"], true, "{missing_dir}");
    assert!(
        text_of(&missing_dir).contains("file error"),
        "{missing_dir}"
    );
    let receipt = wait_for_receipt(&files.scratch.receipts(), |r| {
        r["outcome"]["kind"] == "failed"
    });
    assert_eq!(receipt["name"], "export_ticket", "{receipt}");
}

#[test]
fn a_path_that_becomes_a_symlink_out_of_the_root_is_still_contained() {
    let files = Files::new();
    let root = files.root_text();
    fs::create_dir(files.root.join("real")).unwrap();
    fs::write(files.root.join("real/a.txt"), "INSIDE").unwrap();
    let link = files.root.join("sub");
    symlink("real", &link).unwrap();
    let mut desk = files.spawn(&format!("desk.files={root}"));

    // Used once while it points inside, then swapped for a link out.
    let first = attach(&mut desk, "sub/a.txt");
    assert_ne!(first["isError"], true, "{first}");
    swap_link(&link, &files.base().join("elsewhere"));
    let after = attach(&mut desk, "sub/a.txt");
    assert_refused(&after, "desk.files", "sub/a.txt", &root);

    // And swapped back and forth while calls run: each call reads inside or
    // is refused, never the file outside.
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = stop.clone();
        let link = link.clone();
        let elsewhere = files.base().join("elsewhere");
        thread::spawn(move || {
            let mut inside = true;
            while !stop.load(Ordering::Relaxed) {
                if inside {
                    swap_link(&link, &elsewhere);
                } else {
                    swap_link(&link, Path::new("real"));
                }
                inside = !inside;
            }
        })
    };
    let (mut read, mut refused) = (0, 0);
    for _ in 0..150 {
        let result = attach(&mut desk, "sub/a.txt");
        let text = result.to_string();
        assert!(!text.contains(OUTSIDE), "{text}");
        if result["isError"] == true {
            // Refused (or the link was mid-swap: not found), never outside.
            refused += 1;
        } else {
            assert!(text.contains("INSIDE"), "{text}");
            read += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    eprintln!("raced calls: {read} read inside, {refused} refused");
    assert_eq!(read + refused, 150);
}

/// Points `link` at `target` atomically (a new link renamed over the old).
fn swap_link(link: &Path, target: &Path) {
    let fresh = link.with_extension("next");
    let _ = fs::remove_file(&fresh);
    symlink(target, &fresh).unwrap();
    fs::rename(&fresh, link).unwrap();
}

#[test]
fn without_the_files_grant_the_file_tools_are_refused_before_they_run() {
    let files = Files::new();
    let receipts = files.scratch.receipts().display().to_string();
    let mut desk = StdioDesk::spawn(&files.scratch.args(&["--receipts", &receipts]));
    let refused = attach(&mut desk, "logs/vpn.txt");
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text_of(&refused).contains("desk.files"), "{refused}");
    let receipt = wait_for_receipt(&files.scratch.receipts(), |r| r["name"] == "attach_file");
    assert_eq!(receipt["outcome"]["kind"], "refused", "{receipt}");
    assert!(receipt.get("scopes").is_none(), "{receipt}");
}

#[test]
fn a_write_grant_narrowed_to_one_ticket_closes_only_that_one() {
    let scratch = Scratch::new();
    let receipts = scratch.receipts();
    let receipts_arg = receipts.display().to_string();
    let mut desk = StdioDesk::spawn(&scratch.args(&[
        "--allow",
        "desk.write=ticket:T-1003",
        "--receipts",
        &receipts_arg,
    ]));
    let refused = desk.tool(
        "close_ticket",
        json!({"ticket_id": "T-1004", "note": "Fixed."}),
    );
    assert_refused(&refused, "desk.write", "ticket:T-1004", "ticket:T-1003");
    let read = result_of(desk.call("resources/read", json!({"uri": "ticket://T-1004"})));
    assert!(
        read["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("\"open\"")
    );

    let closed = desk.tool(
        "close_ticket",
        json!({"ticket_id": "T-1003", "note": "Unblocked."}),
    );
    assert_ne!(closed["isError"], true, "{closed}");

    let receipt = wait_for_receipt(&receipts, |r| r["outcome"]["kind"] == "refused_in_call");
    assert_eq!(
        receipt["outcome"],
        json!({"kind": "refused_in_call", "capability": "desk.write", "asked": "ticket:T-1004"})
    );
    assert_eq!(receipt["scopes"], json!({"desk.write": ["ticket:T-1003"]}));
}

#[test]
fn each_bad_allow_entry_stops_the_server_at_startup_naming_it() {
    let files = Files::new();
    let missing = files.base().join("missing").display().to_string();
    let file_root = files.outside.display().to_string();
    for (entry, says) in [
        ("desk.files=relative/dir".to_owned(), "absolute"),
        ("desk.files=".to_owned(), "expected a scope"),
        (format!("desk.files={missing}"), "not a directory"),
        (format!("desk.files={file_root}"), "not a directory"),
        (
            "desk.write=ticket:*:*".to_owned(),
            "`*` may appear only once",
        ),
        ("Desk.write".to_owned(), "expected a capability name"),
        (
            "desk.notify=https://hooks.example.com/desk".to_owned(),
            "not a URL (write \"hooks.example.com\")",
        ),
        ("desk.notify=*.".to_owned(), "is not a host pattern"),
        (
            "desk.write=ticket:T-1,desk.files=/tmp,search=x".to_owned(),
            "search",
        ),
    ] {
        let mut desk = StdioDesk::spawn(&files.scratch.args(&["--allow", &entry]));
        assert!(!desk.wait_exit(), "{entry}: a startup error");
        let stderr = stderr_once_written(&desk);
        let named = entry.rsplit(',').next().unwrap();
        assert!(stderr.contains(named), "{entry}: names the entry: {stderr}");
        assert!(stderr.contains(says), "{entry}: says why: {stderr}");
        assert!(!stderr.contains("serving MCP"), "{entry}: {stderr}");
    }
}
