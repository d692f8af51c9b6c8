//! Argument validation and decoding (`tools/call` through `Server::serve_io`)
//! for a tool with a parameter of every type the typed layer maps: integers
//! of each width, floats, booleans, strings, characters, options, lists,
//! maps, unit and tagged enums, a newtype, nested structs, a secret and a
//! defaulted argument.
//!
//! Input format: a JSON value, sent as the call's `arguments`.
//!
//! Properties: nothing panics; every call is answered once; the answer is the
//! handler's result or an `isError` argument report whose problems name a
//! path and a keyword — and never the `deserialize` keyword, which would mean
//! the schema accepted a value the types refuse; a secret's value never
//! appears in an answer.

#![no_main]

#[path = "serve_io.rs"]
mod serve_io;

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use typed_mcp::secret::Secret;
use typed_mcp::{Server, tool, tools};

/// How urgent.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
enum Priority {
    /// Later.
    Low,
    /// Now.
    High,
}

/// A shape, tagged by `kind`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Shape {
    /// A circle.
    Circle {
        /// Its radius.
        r: f64,
    },
    /// A rectangle.
    Rect {
        /// Width.
        w: u32,
        /// Height.
        h: u32,
    },
}

/// A distance.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Meters(f64);

/// A filter.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Filter {
    /// A tag.
    tag: String,
    /// At most this many.
    limit: Option<u8>,
    /// Nested deeper.
    inner: Option<Box<Filter>>,
}

/// A sentinel a secret argument carries in the seeds: it must never be echoed.
const SECRET_MARK: &str = "sk-fuzz-";

/// Take one argument of every mapped type.
///
/// # Arguments
/// * `a` - An i8.
/// * `b` - A u16.
/// * `c` - An i32.
/// * `d` - A u64.
/// * `e` - An i64.
/// * `f` - A usize.
/// * `g` - An f32.
/// * `h` - An f64.
/// * `s` - A string.
/// * `ch` - A character.
/// * `flag` - A boolean.
/// * `list` - A list of strings.
/// * `map` - A map of small integers.
/// * `hmap` - A hash map of booleans.
/// * `opt` - An optional u32.
/// * `priority` - A unit enum.
/// * `shape` - A tagged enum.
/// * `meters` - A newtype.
/// * `filter` - A nested struct.
/// * `filters` - A list of optional structs.
/// * `pair` - A pair.
/// * `key` - A secret.
/// * `page` - A defaulted integer.
#[tool(read_only, open_world = false)]
#[allow(clippy::too_many_arguments)]
async fn everything(
    a: i8,
    b: u16,
    c: Option<i32>,
    d: Option<u64>,
    e: Option<i64>,
    f: Option<usize>,
    g: Option<f32>,
    h: Option<f64>,
    s: Option<String>,
    ch: Option<char>,
    flag: Option<bool>,
    list: Option<Vec<String>>,
    map: Option<BTreeMap<String, i16>>,
    hmap: Option<HashMap<String, bool>>,
    opt: Option<u32>,
    priority: Option<Priority>,
    shape: Option<Shape>,
    meters: Option<Meters>,
    filter: Option<Filter>,
    filters: Option<Vec<Option<Filter>>>,
    pair: Option<(u8, String)>,
    key: Option<Secret<String>>,
    #[arg(default = 1)] page: u32,
) -> String {
    let _ = (c, d, e, f, g, h, s, ch, flag, list, map, hmap, opt);
    let _ = (priority, shape, meters, filter, filters, pair, key);
    format!("{a} {b} {page}")
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        Server::new("fuzz-arguments", "0.0.0")
            .tools(tools![everything])
            .build()
            .expect("the fuzz server builds")
    })
}

fuzz_target!(|input: &[u8]| {
    let Ok(arguments) = serde_json::from_slice::<Value>(input) else {
        return;
    };
    let request = json!({
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "everything",
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    });
    let mut line = serde_json::to_vec(&request).unwrap();
    line.push(b'\n');
    let bytes = serve_io::serve(server(), &line[..]);
    let text = String::from_utf8(bytes).expect("answers are UTF-8");
    let answers: Vec<&str> = text.lines().collect();
    assert_eq!(answers.len(), 1, "one answer: {text}");
    let answer: Value = serde_json::from_str(answers[0]).expect("the answer is JSON");
    assert_eq!(answer["id"], 7, "{answer}");
    if let Some(secret) = arguments.get("key").and_then(Value::as_str)
        && secret.starts_with(SECRET_MARK)
    {
        assert!(!answers[0].contains(secret), "the secret leaked: {answer}");
    }
    if let Some(error) = answer.get("error") {
        // A message too large or too deep for the limits is a protocol error.
        assert!(error["code"].is_i64(), "{answer}");
        return;
    }
    let result = &answer["result"];
    if result["isError"] == true {
        let problems = result["_meta"]["rs.typed-mcp/argumentErrors"]
            .as_array()
            .unwrap_or_else(|| panic!("an error result is an argument report: {answer}"));
        assert!(!problems.is_empty(), "{answer}");
        for problem in problems {
            assert_ne!(
                problem["keyword"], "deserialize",
                "the schema accepted what the types refuse: {answer}"
            );
            assert!(problem["keyword"].is_string(), "{answer}");
            assert!(problem["path"].is_string(), "{answer}");
        }
    } else {
        assert!(result["content"][0]["text"].is_string(), "{answer}");
    }
});
