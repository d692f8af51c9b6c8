//! The typed layer without macros: the Rust-type → JSON Schema mapping (one
//! snapshot per row of the mapping), complete argument errors on the wire, the
//! reply of each return shape (checked against the official schema by the
//! client), and property tests that the schema and the serde form never drift.

use std::collections::{BTreeMap, HashMap};

use proptest::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use typed_mcp::__private::{
    Contents, Fallible, Optional, Raw, Structured, ToolAttrs, Unit, tool_async, tool_blocking,
};
use typed_mcp::schema::{input_schema_for, output_schema_for, schema_for};
use typed_mcp::wire::{CallToolResult, ContentBlock};
use typed_mcp::{Server, ToolContext, declare::ToolDecl};

use crate::schema::client;

fn attrs(name: &'static str) -> ToolAttrs {
    ToolAttrs {
        name,
        title: None,
        description: "A typed tool.",
        read_only: false,
        destructive: None,
        idempotent: None,
        open_world: None,
        timeout_ms: None,
        caps: &[],
        task: None,
        checks: Vec::new,
    }
}

/// The schema of a single property of a one-field arguments struct, with the
/// struct's required list.
fn property<T: JsonSchema>() -> Value {
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct One<T> {
        /// The value.
        value: T,
    }
    let schema = input_schema_for::<One<T>>();
    let mut property = schema["properties"]["value"].clone();
    property.as_object_mut().unwrap().remove("description");
    property
}

// ---------------------------------------------------------------------------
// The mapping, row by row
// ---------------------------------------------------------------------------

#[test]
fn strings_floats_and_booleans() {
    assert_eq!(property::<String>(), json!({"type": "string"}));
    assert_eq!(
        property::<f64>(),
        json!({"type": "number", "format": "double"})
    );
    assert_eq!(
        property::<f32>(),
        json!({"type": "number", "format": "float"})
    );
    assert_eq!(property::<bool>(), json!({"type": "boolean"}));
}

#[test]
fn every_integer_width_carries_its_bounds() {
    fn bounds<T: JsonSchema>() -> (Value, Value) {
        let p = property::<T>();
        assert_eq!(p["type"], "integer", "{p}");
        (p["minimum"].clone(), p["maximum"].clone())
    }
    assert_eq!(bounds::<i8>(), (json!(-128), json!(127)));
    assert_eq!(bounds::<i16>(), (json!(-32768), json!(32767)));
    assert_eq!(bounds::<i32>(), (json!(i32::MIN), json!(i32::MAX)));
    assert_eq!(bounds::<i64>(), (json!(i64::MIN), json!(i64::MAX)));
    assert_eq!(
        bounds::<isize>(),
        (json!(isize::MIN as i64), json!(isize::MAX as i64))
    );
    assert_eq!(bounds::<u8>(), (json!(0), json!(255)));
    assert_eq!(bounds::<u16>(), (json!(0), json!(65535)));
    assert_eq!(bounds::<u32>(), (json!(0), json!(u32::MAX)));
    assert_eq!(bounds::<u64>(), (json!(0), json!(u64::MAX)));
    assert_eq!(bounds::<usize>(), (json!(0), json!(usize::MAX as u64)));
}

#[test]
fn arrays_and_maps() {
    assert_eq!(
        property::<Vec<String>>(),
        json!({"type": "array", "items": {"type": "string"}})
    );
    let map = json!({"type": "object", "additionalProperties": {"type": "boolean"}});
    assert_eq!(property::<HashMap<String, bool>>(), map);
    assert_eq!(property::<BTreeMap<String, bool>>(), map);
}

#[test]
fn options_are_nullable_and_not_required() {
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// Required.
        a: String,
        /// Optional.
        b: Option<String>,
        /// Optional and bounded.
        #[schemars(length(max = 8))]
        c: Option<String>,
        /// An optional integer keeps its width.
        d: Option<u8>,
    }
    let schema = input_schema_for::<Args>();
    assert_eq!(schema["required"], json!(["a"]));
    // One `type` per branch, each type's keywords in its own branch: the
    // portable spelling of a nullable field (no `type` array).
    assert_eq!(
        schema["properties"]["b"],
        json!({"description": "Optional.", "anyOf": [{"type": "string"}, {"type": "null"}]})
    );
    assert_eq!(
        schema["properties"]["c"]["anyOf"],
        json!([{"type": "string", "maxLength": 8}, {"type": "null"}])
    );
    assert_eq!(
        schema["properties"]["d"]["anyOf"],
        json!([
            {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
            {"type": "null"}
        ])
    );
    let has_type_array = |schema: &Value| schema.to_string().contains(r#""type":["#);
    assert!(!has_type_array(&schema), "{schema}");
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
enum Priority {
    Low,
    High,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
enum Shape {
    Circle(f64),
    Rect { w: u32, h: u32 },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Meters(f64);

/// A nested model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Filter {
    /// Tag to match.
    tag: String,
    /// Most results.
    limit: Option<u8>,
}

#[test]
fn field_less_enums_are_enums_and_data_enums_are_one_of() {
    let schema = schema_for::<Priority>();
    assert_eq!(schema["type"], "string");
    assert_eq!(schema["enum"], json!(["Low", "High"]));
    let schema = schema_for::<Shape>();
    let variants = schema["oneOf"].as_array().expect("oneOf");
    assert_eq!(variants.len(), 2);
    // serde's externally tagged form: {"Variant": payload}.
    assert_eq!(variants[0]["required"], json!(["Circle"]));
    assert_eq!(variants[1]["required"], json!(["Rect"]));
    assert_eq!(
        variants[1]["properties"]["Rect"]["required"],
        json!(["w", "h"])
    );
}

#[test]
fn newtypes_are_their_inner_type_and_structs_are_closed_objects() {
    assert_eq!(schema_for::<Meters>()["type"], "number");
    let schema = schema_for::<Filter>();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["tag"]));
    assert_eq!(schema["additionalProperties"], json!(false));
}

fn five() -> u32 {
    5
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Search {
    /// What to look for.
    #[schemars(length(min = 2), regex(pattern = r"^[a-z ]+$"))]
    query: String,
    /// How many results.
    #[serde(default = "five")]
    #[schemars(default = "five", range(min = 1, max = 50))]
    limit: u32,
    /// Only these.
    filter: Option<Filter>,
    /// Sort order.
    priority: Option<Priority>,
}

#[test]
fn defaults_and_constraints_appear_in_the_schema() {
    let schema = input_schema_for::<Search>();
    assert_eq!(schema["required"], json!(["query"]));
    assert_eq!(schema["additionalProperties"], json!(false));
    let limit = &schema["properties"]["limit"];
    assert_eq!(limit["default"], json!(5));
    assert_eq!(
        (limit["minimum"].clone(), limit["maximum"].clone()),
        (json!(1), json!(50))
    );
    let query = &schema["properties"]["query"];
    assert_eq!(query["minLength"], json!(2));
    assert_eq!(query["pattern"], json!("^[a-z ]+$"));
    assert!(schema.get("title").is_none(), "{schema}");
}

// ---------------------------------------------------------------------------
// Complete argument errors, on the wire
// ---------------------------------------------------------------------------

#[derive(Debug, Serialize, JsonSchema)]
struct Found {
    query: String,
    limit: u32,
}

fn search_tool() -> ToolDecl {
    tool_async(
        attrs("search"),
        |args: Search, _ctx: ToolContext| async move {
            Structured(Found {
                query: args.query,
                limit: args.limit,
            })
        },
    )
}

#[tokio::test]
async fn every_bad_argument_is_reported_at_once_and_none_reaches_the_handler() {
    let server = Server::new("typed", "0.1.0")
        .tool(search_tool())
        .build()
        .unwrap();
    let client = client(server);
    let response = client
        .call_tool(
            "search",
            json!({"limit": "ten", "filter": {"tag": 3, "extra": true}, "colour": "red"}),
        )
        .await;
    let result = response.result();
    assert_eq!(result["isError"], true);
    let text = result["content"][0]["text"].as_str().unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "invalid arguments for tool \"search\":",
            "- (arguments): unknown field(s): colour",
            "- filter: unknown field(s): extra",
            "- filter.tag: expected a string",
            "- limit: expected an integer",
            "- query: this field is required",
        ]
    );
    let problems = result["_meta"]["rs.typed-mcp/argumentErrors"]
        .as_array()
        .unwrap();
    assert_eq!(problems.len(), 5);
    assert_eq!(
        problems[3],
        json!({"path": "limit", "keyword": "type", "message": "expected an integer"})
    );
    assert!(result.get("structuredContent").is_none());
}

#[tokio::test]
async fn constraints_are_enforced_and_defaults_applied() {
    let server = Server::new("typed", "0.1.0")
        .tool(search_tool())
        .build()
        .unwrap();
    let client = client(server);
    let bad = client
        .call_tool("search", json!({"query": "A", "limit": 99}))
        .await;
    let text = bad.result()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.contains("- limit: must be at most 50"), "{text}");
    assert!(
        text.contains("- query: must be at least 2 characters long"),
        "{text}"
    );
    assert!(
        text.contains("- query: must match the pattern ^[a-z ]+$"),
        "{text}"
    );
    let good = client
        .call_tool("search", json!({"query": "red shoes"}))
        .await;
    assert_eq!(
        good.result()["structuredContent"],
        json!({"query": "red shoes", "limit": 5})
    );
}

// ---------------------------------------------------------------------------
// Arguments read from their text, on the wire
// ---------------------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
struct Pair {
    /// First addend.
    a: i64,
    /// Second addend.
    b: i64,
    /// Echoed back.
    note: Option<String>,
    /// Echoed back as it decoded.
    extra: Option<Value>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct PairSum {
    sum: i64,
    note: Option<String>,
    extra: Option<Value>,
}

fn pair_server() -> Server {
    let sum = tool_async(attrs("sum"), |args: Pair, _ctx: ToolContext| async move {
        Structured(PairSum {
            sum: args.a + args.b,
            note: args.note,
            extra: args.extra,
        })
    });
    Server::new("typed", "0.1.0").tool(sum).build().unwrap()
}

/// A plain call, byte for byte: an envelope with the two required keys and
/// nothing else, so the router keeps the arguments as the text given.
fn plain_call(id: u64, arguments: &str) -> Vec<u8> {
    let meta = crate::support::envelope();
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{meta},"name":"sum","arguments":{arguments}}}}}"#
    )
    .into_bytes()
}

#[tokio::test]
async fn arguments_read_from_their_text_decode_as_their_parse_would() {
    let client = client(pair_server());
    let structured = |response: &typed_mcp_client::testing::Response| {
        let result = response.result();
        assert_ne!(result["isError"], true, "{result}");
        result["structuredContent"].clone()
    };
    // The common case.
    let r = client.send_raw(&plain_call(1, r#"{"a":1,"b":2}"#)).await;
    assert_eq!(structured(&r)["sum"], 3);
    // A member twice: the last one counts, as in the parsed map.
    let r = client
        .send_raw(&plain_call(2, r#"{"a":1,"b":2,"a":5}"#))
        .await;
    assert_eq!(structured(&r)["sum"], 7);
    let r = client
        .send_raw(&plain_call(3, r#"{"a":1,"b":2,"extra":{"k":1,"k":2}}"#))
        .await;
    assert_eq!(structured(&r)["extra"], json!({"k": 2}));
    // Integral floats are integers, wherever they are (an untyped member
    // too): not `2.0`.
    let r = client.send_raw(&plain_call(4, r#"{"a":1.0,"b":2}"#)).await;
    assert_eq!(structured(&r)["sum"], 3);
    let r = client
        .send_raw(&plain_call(40, r#"{"a":1,"b":2,"extra":[2.0,2.5]}"#))
        .await;
    let value = structured(&r);
    assert_eq!(value["extra"], json!([2, 2.5]));
    assert!(value["extra"][0].is_i64(), "{value}");
    // Escapes, exponents (an integral one is an integer, as above) and
    // nulls.
    let r = client
        .send_raw(&plain_call(
            5,
            r#"{"a":2,"b":-1,"note":"caf\u00e9 \"q\"","extra":1.5e-1}"#,
        ))
        .await;
    let value = structured(&r);
    assert_eq!(
        (
            value["sum"].clone(),
            value["note"].clone(),
            value["extra"].clone()
        ),
        (json!(1), json!("café \"q\""), json!(0.15))
    );
    let r = client
        .send_raw(&plain_call(6, r#"{"a":2,"b":3,"note":null}"#))
        .await;
    assert_eq!(structured(&r)["note"], Value::Null);
    // Bad arguments: every problem, as ever.
    let r = client
        .send_raw(&plain_call(7, r#"{"a":"one","note":7}"#))
        .await;
    let result = r.result();
    assert_eq!(result["isError"], true);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [
            "invalid arguments for tool \"sum\":",
            "- a: expected an integer",
            "- b: this field is required",
            "- note: expected a string or null",
        ],
        "{text}"
    );
    // A number too large for a float and a lone surrogate are invalid JSON
    // (the message is refused whole), and the server serves on.
    for (id, arguments) in [
        (8, r#"{"a":1,"b":1e400}"#),
        (9, r#"{"a":1,"b":2,"note":"\ud800"}"#),
    ] {
        let r = client.send_raw(&plain_call(id, arguments)).await;
        assert_eq!(
            r.error_code(),
            Some(-32700),
            "{arguments}: {:?}",
            r.messages
        );
    }
    let r = client.send_raw(&plain_call(10, r#"{"b":40,"a":2}"#)).await;
    assert_eq!(structured(&r)["sum"], 42);
}

// ---------------------------------------------------------------------------
// Return shapes
// ---------------------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Flag {
    /// Choose the branch.
    #[serde(default)]
    fail: bool,
}

#[derive(Debug, thiserror::Error)]
#[error("the desk is closed")]
struct DeskClosed(#[source] std::io::Error);

#[derive(Debug, Serialize, JsonSchema)]
struct Ticket {
    id: u32,
    title: String,
}

fn shapes_server() -> Server {
    Server::new("shapes", "0.1.0")
        .tool(tool_async(attrs("object"), |_: Flag, _ctx| async {
            Structured(Ticket {
                id: 7,
                title: "Printer".into(),
            })
        }))
        .tool(tool_blocking(attrs("integer"), |_: Flag, _ctx| {
            Structured(42_i64)
        }))
        .tool(tool_async(attrs("maybe"), |f: Flag, _ctx| async move {
            Optional((!f.fail).then_some(Ticket {
                id: 1,
                title: "x".into(),
            }))
        }))
        .tool(tool_async(attrs("fallible"), |f: Flag, _ctx| async move {
            let result: Result<Ticket, DeskClosed> = if f.fail {
                Err(DeskClosed(std::io::Error::other("power cut")))
            } else {
                Ok(Ticket {
                    id: 2,
                    title: "ok".into(),
                })
            };
            Fallible(result.map(Structured))
        }))
        .tool(tool_async(attrs("contents"), |_: Flag, _ctx| async {
            Contents(vec![
                ContentBlock::text("hello"),
                ContentBlock::image("iVBORw0KGgo=", "image/png"),
            ])
        }))
        .tool(tool_async(attrs("raw"), |_: Flag, _ctx| async {
            Raw(CallToolResult::text("as is"))
        }))
        .tool(tool_async(attrs("unit"), |_: Flag, _ctx| async { Unit }))
        .build()
        .unwrap()
}

#[tokio::test]
async fn output_schemas_follow_the_return_type() {
    let client = client(shapes_server());
    let tools = client.list_tools(None).await;
    let tools = tools.result()["tools"].as_array().unwrap().clone();
    let schema_of = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .get("outputSchema")
            .cloned()
    };
    assert_eq!(
        schema_of("object").unwrap()["required"],
        json!(["id", "title"])
    );
    let integer = schema_of("integer").unwrap();
    assert_eq!(integer["type"], "object");
    assert_eq!(integer["properties"]["result"]["type"], "integer");
    assert_eq!(integer["required"], json!(["result"]));
    let maybe = schema_of("maybe").unwrap();
    assert_eq!(maybe["required"], json!(["result"]), "{maybe}");
    assert_eq!(
        schema_of("fallible").unwrap()["required"],
        json!(["id", "title"])
    );
    for name in ["contents", "raw", "unit"] {
        assert_eq!(schema_of(name), None, "{name}");
    }
}

#[tokio::test]
async fn each_return_shape_replies_as_documented() {
    let client = client(shapes_server());
    let call = |name: &'static str, fail: bool| {
        let client = &client;
        async move {
            client
                .call_tool(name, json!({"fail": fail}))
                .await
                .result()
                .clone()
        }
    };
    let object = call("object", false).await;
    assert_eq!(
        object["structuredContent"],
        json!({"id": 7, "title": "Printer"})
    );
    assert_eq!(
        object["content"][0]["text"],
        r#"{"id":7,"title":"Printer"}"#
    );

    let integer = call("integer", false).await;
    assert_eq!(integer["structuredContent"], json!({"result": 42}));

    let none = call("maybe", true).await;
    assert_eq!(none["structuredContent"], json!({"result": null}));
    assert!(
        none.get("isError").is_none(),
        "None is not an error: {none}"
    );

    let failed = call("fallible", true).await;
    assert_eq!(failed["isError"], true);
    assert_eq!(
        failed["content"][0]["text"],
        "the desk is closed: power cut"
    );
    let ok = call("fallible", false).await;
    assert_eq!(ok["structuredContent"]["id"], 2);

    let contents = call("contents", false).await;
    assert_eq!(contents["content"][1]["type"], "image");
    assert!(contents.get("structuredContent").is_none());
    assert_eq!(call("raw", false).await["content"][0]["text"], "as is");
    assert_eq!(call("unit", false).await["content"], json!([]));
}

#[tokio::test]
async fn a_timed_out_call_is_a_tool_error() {
    let mut slow = attrs("slow");
    slow.timeout_ms = Some(20);
    let server = Server::new("timeouts", "0.1.0")
        .tool(tool_async(slow, |_: Flag, _ctx| async {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            Unit
        }))
        .build()
        .unwrap();
    let result = client(server).call_tool("slow", json!({})).await;
    assert_eq!(result.result()["isError"], true);
    assert_eq!(
        result.result()["content"][0]["text"],
        "tool \"slow\" timed out after 20ms"
    );
}

// ---------------------------------------------------------------------------
// No drift: generated values fit the schema, and what the schema accepts decodes
// ---------------------------------------------------------------------------

fn accepts(schema: &Value, value: &Value) -> Result<(), String> {
    let validator = jsonschema::draft202012::options()
        .build(schema)
        .map_err(|e| e.to_string())?;
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// Serializing `value` gives JSON its schema accepts, and that JSON decodes
/// back to the same value.
fn round_trip<T>(value: &T) -> Result<(), TestCaseError>
where
    T: Serialize + serde::de::DeserializeOwned + JsonSchema + PartialEq + std::fmt::Debug,
{
    let json = serde_json::to_value(value).unwrap();
    let schema = schema_for::<T>();
    accepts(&schema, &json).map_err(|e| TestCaseError::fail(format!("{json}: {e}")))?;
    let back: T = serde_json::from_value(json.clone())
        .map_err(|e| TestCaseError::fail(format!("{json} does not decode: {e}")))?;
    prop_assert_eq!(&back, value);
    Ok(())
}

fn priority() -> impl Strategy<Value = Priority> {
    prop_oneof![Just(Priority::Low), Just(Priority::High)]
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        (-1e9f64..1e9).prop_map(Shape::Circle),
        (any::<u32>(), any::<u32>()).prop_map(|(w, h)| Shape::Rect { w, h }),
    ]
}

fn filter() -> impl Strategy<Value = Filter> {
    (".{0,12}", proptest::option::of(any::<u8>())).prop_map(|(tag, limit)| Filter { tag, limit })
}

proptest! {
    #[test]
    fn integers_of_every_width(a in any::<i8>(), b in any::<i64>(), c in any::<u64>(), d in any::<usize>(), e in any::<i32>()) {
        round_trip(&a)?;
        round_trip(&b)?;
        round_trip(&c)?;
        round_trip(&d)?;
        round_trip(&e)?;
    }

    #[test]
    fn strings_floats_booleans(s in ".{0,40}", f in -1e12f64..1e12, b in any::<bool>()) {
        round_trip(&s)?;
        round_trip(&f)?;
        round_trip(&b)?;
    }

    #[test]
    fn collections(v in proptest::collection::vec(".{0,8}", 0..5), m in proptest::collection::btree_map(".{0,8}", any::<i16>(), 0..5), o in proptest::option::of(any::<u16>())) {
        round_trip(&v)?;
        round_trip(&m)?;
        round_trip(&o)?;
    }

    #[test]
    fn enums_newtypes_and_structs(p in priority(), s in shape(), m in (-1e6f64..1e6).prop_map(Meters), f in filter()) {
        round_trip(&p)?;
        round_trip(&s)?;
        round_trip(&m)?;
        round_trip(&f)?;
    }

    #[test]
    fn what_the_input_schema_accepts_decodes(query in "[a-z ]{2,20}", limit in proptest::option::of(1u32..=50), tag in proptest::option::of(".{0,8}")) {
        let mut args = json!({"query": query});
        if let Some(limit) = limit {
            args["limit"] = json!(limit);
        }
        if let Some(tag) = tag {
            args["filter"] = json!({"tag": tag});
        }
        let schema = input_schema_for::<Search>();
        accepts(&schema, &args).map_err(TestCaseError::fail)?;
        let decoded: Result<Search, _> = serde_json::from_value(args.clone());
        prop_assert!(decoded.is_ok(), "{} does not decode: {:?}", args, decoded.err());
    }
}

#[test]
fn output_schemas_of_wrapped_values_accept_the_wrapped_value() {
    let schema = output_schema_for::<Vec<Priority>>();
    accepts(&schema, &json!({"result": ["Low", "High"]})).unwrap();
    assert!(accepts(&schema, &json!(["Low"])).is_err());
}

// ---------------------------------------------------------------------------
// Answer<T>: a value, or input_required
// ---------------------------------------------------------------------------

fn asking_server() -> Server {
    use typed_mcp::__private::Answered;
    use typed_mcp::{Answer, NeedsInput};
    Server::new("mrtr", "0.1.0")
        .tool(tool_async(attrs("greet"), |f: Flag, _ctx| async move {
            let answer = if f.fail {
                Answer::Done(Ticket { id: 3, title: "done".into() })
            } else {
                Answer::NeedsInput(
                    NeedsInput::new()
                        .elicit(
                            "user_name",
                            "What is your name?",
                            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
                        )
                        .state("round-1"),
                )
            };
            Answered(answer.map(Structured))
        }))
        .build()
        .unwrap()
}

#[tokio::test]
async fn needs_input_is_an_input_required_result() {
    let client =
        crate::schema::client_with_capabilities(asking_server(), json!({"elicitation": {}}));
    let asked = client.call_tool("greet", json!({})).await;
    let result = asked.result();
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(
        result["inputRequests"]["user_name"]["method"],
        "elicitation/create"
    );
    assert_eq!(
        result["inputRequests"]["user_name"]["params"]["mode"],
        "form"
    );
    // Sealed: opaque to the client.
    let state = result["requestState"].as_str().unwrap();
    assert!(!state.is_empty() && !state.contains("round-1"), "{state}");
    assert!(
        result.get("ttlMs").is_none() && result.get("content").is_none(),
        "{result}"
    );
    let done = client.call_tool("greet", json!({"fail": true})).await;
    assert_eq!(done.result()["resultType"], "complete");
    assert_eq!(done.result()["structuredContent"]["id"], 3);
}

#[tokio::test]
async fn input_the_client_cannot_give_is_refused_with_32021() {
    let client = client(asking_server());
    let refused = client.call_tool("greet", json!({})).await;
    let error = refused.error().expect("an error");
    assert_eq!(error["code"], -32021);
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({"elicitation": {}})
    );
}

// ---------------------------------------------------------------------------
// Sealed requestState across rounds
// ---------------------------------------------------------------------------

fn rounds_server(ttl: std::time::Duration) -> Server {
    use typed_mcp::__private::Answered;
    use typed_mcp::wire::ElicitResult;
    use typed_mcp::{Answer, NeedsInput};
    let ask = |_: Flag, ctx: ToolContext| async move {
        let answer = match (
            ctx.request_state(),
            ctx.input_response::<ElicitResult>("name"),
        ) {
            (Some("asked-for-name"), Some(Ok(reply))) => {
                let name = reply
                    .content
                    .and_then(|c| c.get("name").cloned())
                    .unwrap_or_default();
                Answer::Done(format!("Hello, {}!", name.as_str().unwrap_or("?")))
            }
            _ => Answer::NeedsInput(
                NeedsInput::new()
                    .elicit(
                        "name",
                        "Your name?",
                        json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                    )
                    .state("asked-for-name"),
            ),
        };
        Answered(answer.map(Structured))
    };
    Server::new("rounds", "0.1.0")
        .tool(tool_async(attrs("ask"), ask))
        .tool(tool_async(attrs("other"), ask))
        .request_state_ttl(ttl)
        .build()
        .unwrap()
}

async fn first_round(client: &typed_mcp_client::testing::TestClient, tool: &str) -> String {
    let round = client.call_tool(tool, json!({})).await;
    let state = round.result()["requestState"].as_str().unwrap().to_owned();
    assert!(
        !state.contains("asked-for-name"),
        "the state is sealed: {state}"
    );
    state
}

fn retry(tool: &str, state: &str) -> Value {
    json!({
        "name": tool,
        "arguments": {},
        "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
        "requestState": state
    })
}

#[tokio::test]
async fn a_sealed_state_comes_back_to_the_handler_and_nothing_else_does() {
    let client = crate::schema::client_with_capabilities(
        rounds_server(std::time::Duration::from_secs(60)),
        json!({"elicitation": {}}),
    );
    let state = first_round(&client, "ask").await;
    let done = client.request("tools/call", retry("ask", &state)).await;
    assert_eq!(
        done.result()["structuredContent"],
        json!({"result": "Hello, Ada!"})
    );

    let tampered = client
        .request("tools/call", retry("ask", &format!("{state}-TAMPERED")))
        .await;
    assert_eq!(
        tampered.error_code(),
        Some(-32602),
        "{:?}",
        tampered.messages
    );
    let replayed = client.request("tools/call", retry("other", &state)).await;
    assert_eq!(
        replayed.error_code(),
        Some(-32602),
        "{:?}",
        replayed.messages
    );
}

#[tokio::test]
async fn an_expired_state_is_refused() {
    let client = crate::schema::client_with_capabilities(
        rounds_server(std::time::Duration::from_millis(1)),
        json!({"elicitation": {}}),
    );
    let state = first_round(&client, "ask").await;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let expired = client.request("tools/call", retry("ask", &state)).await;
    let error = expired.error().expect("an error");
    assert_eq!(error["code"], -32602);
    assert!(
        error["message"].as_str().unwrap().contains("expired"),
        "{error}"
    );
}

// ---------------------------------------------------------------------------
// A prompt may ask for input too
// ---------------------------------------------------------------------------

/// Draft a note about a topic, asking for the context first.
///
/// # Arguments
/// * `topic` - What the note is about.
#[typed_mcp::prompt]
fn draft(topic: String, ctx: ToolContext) -> typed_mcp::Answer<String> {
    use typed_mcp::wire::ElicitResult;
    let context = ctx
        .input_response::<ElicitResult>("user_context")
        .and_then(Result::ok)
        .and_then(|r| r.content)
        .and_then(|c| c.get("context").and_then(Value::as_str).map(str::to_owned));
    match (ctx.request_state(), context) {
        (Some("asked"), Some(context)) => {
            typed_mcp::Answer::Done(format!("Draft a note on {topic}. Context: {context}"))
        }
        _ => typed_mcp::Answer::NeedsInput(
            typed_mcp::NeedsInput::new()
                .elicit(
                    "user_context",
                    "What is the context?",
                    json!({"type": "object", "properties": {"context": {"type": "string"}}}),
                )
                .state("asked"),
        ),
    }
}

#[tokio::test]
async fn a_prompt_answers_input_required_then_renders() {
    let server = Server::new("prompt-rounds", "0.1.0")
        .prompts(typed_mcp::prompts![draft])
        .build()
        .unwrap();
    let client = crate::schema::client_with_capabilities(server, json!({"elicitation": {}}));
    let first = client
        .get_prompt("draft", json!({"topic": "caching"}))
        .await;
    let asked = first.result();
    assert_eq!(asked["resultType"], "input_required");
    assert_eq!(
        asked["inputRequests"]["user_context"]["method"],
        "elicitation/create"
    );
    let state = asked["requestState"].as_str().unwrap().to_owned();
    let retry = json!({
        "name": "draft",
        "arguments": {"topic": "caching"},
        "inputResponses": {"user_context": {"action": "accept", "content": {"context": "a CDN"}}},
        "requestState": state
    });
    let done = client.request("prompts/get", retry.clone()).await;
    assert_eq!(
        done.result()["messages"][0]["content"]["text"],
        "Draft a note on caching. Context: a CDN"
    );
    // The state is bound to the prompt's arguments.
    let mut other = retry;
    other["arguments"]["topic"] = json!("queues");
    assert_eq!(
        client.request("prompts/get", other).await.error_code(),
        Some(-32602)
    );
    // Without the elicitation capability, asking is refused.
    let plain = client_plain_prompt().await;
    assert_eq!(plain, Some(-32021));
}

async fn client_plain_prompt() -> Option<i64> {
    let server = Server::new("prompt-rounds", "0.1.0")
        .prompts(typed_mcp::prompts![draft])
        .build()
        .unwrap();
    client(server)
        .get_prompt("draft", json!({"topic": "caching"}))
        .await
        .error_code()
}

// ---------------------------------------------------------------------------
// And so may a resource
// ---------------------------------------------------------------------------

/// A document that is shown only after the user confirms.
///
/// # Arguments
/// * `name` - The document.
#[typed_mcp::resource(uri = "vault://{name}", mime_type = "text/plain")]
fn vault(name: String, ctx: ToolContext) -> typed_mcp::Answer<String> {
    use typed_mcp::wire::{ElicitAction, ElicitResult};
    let confirmed = ctx
        .input_response::<ElicitResult>("confirm")
        .and_then(Result::ok)
        .is_some_and(|r| r.action == ElicitAction::Accept);
    if confirmed && ctx.request_state() == Some("confirming") {
        typed_mcp::Answer::Done(format!("the contents of {name}"))
    } else {
        typed_mcp::Answer::NeedsInput(
            typed_mcp::NeedsInput::new()
                .elicit(
                    "confirm",
                    "Show the document?",
                    json!({"type": "object", "properties": {}}),
                )
                .state("confirming"),
        )
    }
}

#[tokio::test]
async fn a_resource_answers_input_required_then_its_contents() {
    let server = Server::new("resource-rounds", "0.1.0")
        .resources(typed_mcp::resources![vault])
        .build()
        .unwrap();
    let client = crate::schema::client_with_capabilities(server, json!({"elicitation": {}}));
    let first = client.read_resource("vault://plans").await;
    let asked = first.result();
    assert_eq!(asked["resultType"], "input_required");
    assert!(
        asked.get("ttlMs").is_none(),
        "no cache hints on input_required: {asked}"
    );
    let state = asked["requestState"].as_str().unwrap().to_owned();
    let retry = json!({
        "uri": "vault://plans",
        "inputResponses": {"confirm": {"action": "accept"}},
        "requestState": state
    });
    let done = client.request("resources/read", retry.clone()).await;
    assert_eq!(
        done.result()["contents"][0]["text"],
        "the contents of plans"
    );
    assert_eq!(done.result()["cacheScope"], "private");
    // The state is bound to the URI it was issued for.
    let mut other = retry;
    other["uri"] = json!("vault://other");
    assert_eq!(
        client.request("resources/read", other).await.error_code(),
        Some(-32602)
    );
}
