//! What a server offers: `server/discover`, the four lists and their
//! pagination, reading resources and templates, completion, and the
//! declarations `Server::build` refuses.

use serde_json::{Value, json};
use typed_mcp::protocol::catalog::{CatalogError, Kind};
use typed_mcp::protocol::uri_template::UriTemplateError;
use typed_mcp::wire::{
    CacheScope, CallToolResult, GetPromptResult, PromptMessage, ResourceContents,
};
use typed_mcp::{
    BuildError, RpcError, Server, ServerBuilder,
    declare::{PromptDecl, ResourceDecl, ResourceTemplateDecl, ToolDecl},
};

use crate::schema::client;
use crate::support::{VERSION, assert_result, enveloped};

fn tool(name: &str) -> ToolDecl {
    ToolDecl::builder(name)
        .description(format!("The tool {name}."))
        .handler(|_args, _ctx| async { Ok(CallToolResult::text("ok")) })
}

fn resource(uri: &str, name: &str) -> typed_mcp::declare::ResourceBuilder {
    ResourceDecl::builder(uri, name).description(format!("The resource {name}."))
}

fn text_resource(builder: typed_mcp::declare::ResourceBuilder) -> ResourceDecl {
    builder.handler(|request, _ctx| async move {
        Ok(vec![ResourceContents::text(
            request.uri,
            Some("text/plain"),
            "content",
        )])
    })
}

fn prompt(name: &str) -> typed_mcp::declare::PromptBuilder {
    PromptDecl::builder(name).description(format!("The prompt {name}."))
}

fn plain_prompt(builder: typed_mcp::declare::PromptBuilder) -> PromptDecl {
    builder.handler(|_args, _ctx| async {
        Ok(GetPromptResult::new(vec![PromptMessage::user_text("hi")]))
    })
}

/// Suggests the languages that start with what was typed.
async fn languages(
    request: typed_mcp::declare::CompletionRequest,
) -> Result<Vec<String>, RpcError> {
    Ok(["rust", "ruby", "python"]
        .into_iter()
        .filter(|l| l.starts_with(&request.value))
        .map(str::to_owned)
        .collect())
}

fn data_template() -> ResourceTemplateDecl {
    ResourceTemplateDecl::builder("test://template/{id}/data", "data")
        .description("Data for an id.")
        .mime_type("application/json")
        .parameter("id", "The id.")
        .cache(5_000, CacheScope::Private)
        .completer(|request, _ctx| async move {
            Ok(["100", "101", "200"]
                .into_iter()
                .filter(|v| v.starts_with(&request.value))
                .map(str::to_owned)
                .collect())
        })
        .handler(|request, _ctx| async move {
            let id = request.variable("id").unwrap_or_default().to_owned();
            Ok(vec![ResourceContents::text(
                request.uri,
                Some("application/json"),
                json!({"id": id}).to_string(),
            )])
        })
}

fn files_template() -> ResourceTemplateDecl {
    ResourceTemplateDecl::builder("test://files/{+path}", "files")
        .description("A file by path.")
        .parameter("path", "The path.")
        .handler(|request, _ctx| {
            typed_mcp::blocking(move || {
                let path = request.variable("path").unwrap_or_default().to_owned();
                Ok(vec![ResourceContents::text(
                    request.uri,
                    Some("text/plain"),
                    path,
                )])
            })
        })
}

/// A server with one of everything, each kind declared out of alphabetical
/// order so that declaration order is observable.
fn full() -> Server {
    Server::new("catalog-fixture", "1.2.3")
        .instructions("Use the tools wisely.")
        .tools([tool("zeta"), tool("alpha"), tool("mid")])
        .resource(text_resource(resource("test://static/b", "b")))
        .resource(text_resource(
            resource("test://static/a", "a").cache(60_000, CacheScope::Public),
        ))
        .resource_template(data_template())
        .resource_template(files_template())
        .prompt(
            prompt("with_completer")
                .argument("lang", "A language.", true)
                .completer(|request, _ctx| languages(request))
                .handler(|args, _ctx| async move {
                    Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                        args.get("lang").cloned().unwrap_or_default(),
                    )]))
                }),
        )
        .prompt(plain_prompt(
            prompt("plain").argument("topic", "A topic.", false),
        ))
        .build()
        .expect("the fixture builds")
}

#[track_caller]
fn assert_list_cache(result: &Value) {
    assert_eq!(result["ttlMs"], 3_600_000, "{result}");
    assert_eq!(result["cacheScope"], "public", "{result}");
    assert_eq!(result["resultType"], "complete", "{result}");
}

fn names(items: &Value, key: &str) -> Vec<String> {
    items
        .as_array()
        .unwrap_or_else(|| panic!("expected an array, got {items}"))
        .iter()
        .map(|i| i[key].as_str().unwrap().to_owned())
        .collect()
}

// ---------------------------------------------------------------------------
// server/discover
// ---------------------------------------------------------------------------

#[tokio::test]
async fn discover_describes_the_server() {
    let client = client(full());
    let result = client.discover().await.result().clone();
    assert_eq!(result["supportedVersions"], json!([VERSION]));
    assert_eq!(
        result["capabilities"],
        json!({"tools": {}, "prompts": {}, "resources": {"subscribe": true}, "completions": {}, "logging": {}})
    );
    assert_eq!(result["instructions"], "Use the tools wisely.");
    assert_list_cache(&result);
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "catalog-fixture", "version": "1.2.3"})
    );
}

#[tokio::test]
async fn discover_announces_only_what_is_declared() {
    let tools_only = Server::new("t", "1").tool(tool("a")).build().unwrap();
    let caps = client(tools_only).discover().await.result()["capabilities"].clone();
    assert_eq!(caps, json!({"tools": {}, "logging": {}}));

    // A template alone makes a resource server; without a completer there is
    // nothing to complete.
    let templates_only = Server::new("r", "1")
        .resource_template(files_template())
        .build()
        .unwrap();
    let caps = client(templates_only).discover().await.result()["capabilities"].clone();
    assert_eq!(
        caps,
        json!({"resources": {"subscribe": true}, "logging": {}})
    );

    let empty = Server::new("e", "1").build().unwrap();
    let result = client(empty).discover().await.result().clone();
    assert_eq!(result["capabilities"], json!({"logging": {}}));
    assert!(result.get("instructions").is_none(), "{result}");
}

#[tokio::test]
async fn discover_works_without_client_info_or_capabilities() {
    let client = client(full());
    let message = enveloped(json!("d"), "server/discover", json!({}));
    assert_result(&client.send(&message).await, json!("d"));
}

// ---------------------------------------------------------------------------
// Lists
// ---------------------------------------------------------------------------

#[tokio::test]
async fn every_list_is_served_in_declaration_order_with_public_cache_hints() {
    let client = client(full());
    let tools = client.list_tools(None).await.result().clone();
    assert_eq!(names(&tools["tools"], "name"), ["zeta", "alpha", "mid"]);
    assert_list_cache(&tools);
    assert!(tools.get("nextCursor").is_none(), "{tools}");
    assert_eq!(
        tools["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "catalog-fixture"
    );

    let resources = client.list_resources(None).await.result().clone();
    assert_eq!(
        names(&resources["resources"], "uri"),
        ["test://static/b", "test://static/a"]
    );
    assert_list_cache(&resources);

    let templates = client.list_resource_templates(None).await.result().clone();
    assert_eq!(
        names(&templates["resourceTemplates"], "uriTemplate"),
        ["test://template/{id}/data", "test://files/{+path}"]
    );
    assert_list_cache(&templates);

    let prompts = client.list_prompts(None).await.result().clone();
    assert_eq!(
        names(&prompts["prompts"], "name"),
        ["with_completer", "plain"]
    );
    assert_list_cache(&prompts);
    assert_eq!(
        prompts["prompts"][0]["arguments"],
        json!([{"name": "lang", "description": "A language.", "required": true}])
    );
}

#[tokio::test]
async fn tool_descriptors_carry_their_schemas_verbatim() {
    let schema = json!({
        "type": "object",
        "properties": {"q": {"type": "string", "description": "The query.", "minLength": 1}},
        "required": ["q"],
        "additionalProperties": false
    });
    let server = Server::new("s", "1")
        .tool(
            ToolDecl::builder("search")
                .title("Search")
                .description("Search.")
                .input_schema(schema.clone())
                .output_schema(json!({"type": "object"}))
                .handler(|_a, _c| async { Ok(CallToolResult::structured(json!({}))) }),
        )
        .build()
        .unwrap();
    let tools = client(server).list_tools(None).await.result()["tools"].clone();
    assert_eq!(
        tools,
        json!([{
            "name": "search",
            "title": "Search",
            "description": "Search.",
            "inputSchema": schema,
            "outputSchema": {"type": "object"}
        }])
    );
}

#[tokio::test]
async fn an_empty_list_is_one_empty_page() {
    // A template alone announces resources, so resources/list is offered and
    // has no static resource to list.
    let server = Server::new("s", "1")
        .resource_template(files_template())
        .build()
        .unwrap();
    let result = client(server).list_resources(None).await.result().clone();
    assert_eq!(result["resources"], json!([]));
    assert!(result.get("nextCursor").is_none(), "{result}");
    assert_list_cache(&result);
}

// ---------------------------------------------------------------------------
// Pagination
// ---------------------------------------------------------------------------

fn thousand_tools() -> Server {
    Server::new("many", "1")
        .tools((0..1000).map(|i| tool(&format!("tool_{i:04}"))))
        .prompt(plain_prompt(prompt("p")))
        .build()
        .unwrap()
}

#[tokio::test]
async fn walking_every_page_yields_each_tool_once_in_order() {
    let client = client(thousand_tools());
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let result = client.list_tools(cursor.as_deref()).await.result().clone();
        pages += 1;
        assert_list_cache(&result);
        let page = names(&result["tools"], "name");
        assert!(
            !page.is_empty() && page.len() <= 100,
            "page {pages} has {} tools",
            page.len()
        );
        seen.extend(page);
        match result.get("nextCursor") {
            None => break,
            Some(Value::String(next)) => {
                assert!(!next.is_empty(), "an empty cursor is never an end marker");
                cursor = Some(next.clone());
            }
            Some(other) => panic!("nextCursor must be a string, got {other}"),
        }
        assert!(pages <= 1000, "the walk does not end");
    }
    let expected: Vec<String> = (0..1000).map(|i| format!("tool_{i:04}")).collect();
    assert_eq!(seen, expected);
    assert_eq!(pages, 10);
}

#[tokio::test]
async fn cursors_are_stable() {
    let client = client(thousand_tools());
    let first = client.list_tools(None).await.result()["nextCursor"].clone();
    let again = client.list_tools(None).await.result()["nextCursor"].clone();
    assert_eq!(first, again);
    let page = client.list_tools(first.as_str()).await.result()["tools"][0]["name"].clone();
    assert_eq!(page, "tool_0100");
}

#[tokio::test]
async fn a_smaller_page_size_is_honoured() {
    let server = Server::new("s", "1")
        .page_size(7)
        .tools((0..20).map(|i| tool(&format!("t{i}"))))
        .build()
        .unwrap();
    let client = client(server);
    let mut sizes = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let result = client.list_tools(cursor.as_deref()).await.result().clone();
        sizes.push(result["tools"].as_array().unwrap().len());
        match result["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(sizes, [7, 7, 6]);
}

// ---------------------------------------------------------------------------
// Resources and templates
// ---------------------------------------------------------------------------

#[tokio::test]
async fn reading_a_resource_defaults_to_private_and_stale() {
    let client = client(full());
    let result = client
        .read_resource("test://static/b")
        .await
        .result()
        .clone();
    assert_eq!(result["ttlMs"], 0);
    assert_eq!(result["cacheScope"], "private");
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["contents"],
        json!([{"uri": "test://static/b", "mimeType": "text/plain", "text": "content"}])
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"],
        "1.2.3"
    );
}

#[tokio::test]
async fn reading_a_resource_uses_its_declared_cache_hint() {
    let client = client(full());
    let result = client
        .read_resource("test://static/a")
        .await
        .result()
        .clone();
    assert_eq!(result["ttlMs"], 60_000);
    assert_eq!(result["cacheScope"], "public");
}

#[tokio::test]
async fn a_template_matches_and_passes_the_decoded_variable() {
    let client = client(full());
    let result = client
        .read_resource("test://template/abc%20def/data")
        .await
        .result()
        .clone();
    let contents = &result["contents"][0];
    assert_eq!(contents["uri"], "test://template/abc%20def/data");
    assert_eq!(contents["text"], json!({"id": "abc def"}).to_string());
    assert_eq!(result["ttlMs"], 5_000);
    assert_eq!(result["cacheScope"], "private");

    let result = client
        .read_resource("test://template/42/data")
        .await
        .result()
        .clone();
    assert_eq!(
        result["contents"][0]["text"],
        json!({"id": "42"}).to_string()
    );

    // A reserved variable takes slashes; a simple one does not.
    let result = client
        .read_resource("test://files/a/b/c.txt")
        .await
        .result()
        .clone();
    assert_eq!(result["contents"][0]["text"], "a/b/c.txt");
    for uri in [
        "test://template/a/b/data",
        "test://template//data",
        "test://template/42/data/x",
    ] {
        let error = client.read_resource(uri).await.error().cloned().unwrap();
        assert_eq!(error["code"], -32602);
        assert_eq!(error["data"]["uri"], uri);
    }
}

/// A URI of many separators against a template of several variables: each
/// split used to be tried for each variable (seconds at a few hundred bytes).
/// It is answered, as not found, and the server goes on serving.
#[tokio::test]
async fn a_uri_that_would_backtrack_without_end_is_not_found_and_the_server_still_serves() {
    let server = Server::new("s", "1")
        .resource_template(
            ResourceTemplateDecl::builder("db://{a}.{b}.{c}.{d}x", "rows")
                .description("A row.")
                .parameter("a", "A.")
                .parameter("b", "B.")
                .parameter("c", "C.")
                .parameter("d", "D.")
                .handler(|request, _ctx| async move {
                    let b = request.variable("b").unwrap_or_default().to_owned();
                    Ok(vec![ResourceContents::text(
                        request.uri,
                        Some("text/plain"),
                        b,
                    )])
                }),
        )
        .build()
        .unwrap();
    let client = client(server);
    let uri = format!("db://{}", ".".repeat(50_000));
    let error = client.read_resource(&uri).await.error().cloned().unwrap();
    assert_eq!(error["code"], -32602, "{error}");
    let result = client.read_resource("db://1.2.3.4x").await.result().clone();
    assert_eq!(result["contents"][0]["text"], "2");
}

#[tokio::test]
async fn an_empty_read_is_resource_not_found() {
    let server = Server::new("s", "1")
        .resource(resource("test://empty", "empty").handler(|_r, _c| async { Ok(vec![]) }))
        .build()
        .unwrap();
    let error = client(server)
        .read_resource("test://empty")
        .await
        .error()
        .cloned()
        .unwrap();
    assert_eq!(error["code"], -32602);
    assert_eq!(error["data"]["uri"], "test://empty");
}

// ---------------------------------------------------------------------------
// Completion
// ---------------------------------------------------------------------------

#[tokio::test]
async fn completion_uses_the_completer_of_a_prompt() {
    let client = client(full());
    let result = client
        .complete_prompt_argument("with_completer", "lang", "ru")
        .await
        .result()
        .clone();
    assert_eq!(result["completion"]["values"], json!(["rust", "ruby"]));
    assert_eq!(result["completion"]["total"], 2);
    assert_eq!(result["completion"]["hasMore"], false);
    assert_eq!(result["resultType"], "complete");
}

#[tokio::test]
async fn completion_uses_the_completer_of_a_template() {
    let client = client(full());
    let message = enveloped(
        json!(1),
        "completion/complete",
        json!({
            "ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
            "argument": {"name": "id", "value": "10"},
            "context": {"arguments": {}}
        }),
    );
    let result = assert_result(&client.send(&message).await, json!(1));
    assert_eq!(result["completion"]["values"], json!(["100", "101"]));
    assert_eq!(
        result["_meta"],
        json!({"io.modelcontextprotocol/serverInfo": {"name": "catalog-fixture", "version": "1.2.3"}})
    );
}

#[tokio::test]
async fn completion_without_a_completer_is_empty() {
    let client = client(full());
    let result = client
        .complete_prompt_argument("plain", "topic", "x")
        .await
        .result()
        .clone();
    assert_eq!(result["completion"]["values"], json!([]));

    let message = enveloped(
        json!(1),
        "completion/complete",
        json!({
            "ref": {"type": "ref/resource", "uri": "test://files/{+path}"},
            "argument": {"name": "path", "value": ""}
        }),
    );
    let result = assert_result(&client.send(&message).await, json!(1));
    assert_eq!(result["completion"]["values"], json!([]));
}

#[tokio::test]
async fn completion_values_are_capped_at_one_hundred() {
    let server = Server::new("s", "1")
        .prompt(
            prompt("many")
                .argument("n", "A number.", false)
                .completer(|_r, _c| async { Ok((0..250).map(|i| i.to_string()).collect()) })
                .handler(|_a, _c| async { Ok(GetPromptResult::new(vec![])) }),
        )
        .build()
        .unwrap();
    let result = client(server)
        .complete_prompt_argument("many", "n", "")
        .await
        .result()
        .clone();
    assert_eq!(
        result["completion"]["values"].as_array().unwrap().len(),
        100
    );
    assert_eq!(result["completion"]["total"], 250);
    assert_eq!(result["completion"]["hasMore"], true);
}

// ---------------------------------------------------------------------------
// Server::build
// ---------------------------------------------------------------------------

#[track_caller]
fn build_errors(builder: ServerBuilder) -> (BuildError, Vec<CatalogError>) {
    let error = builder.build().expect_err("the build must fail");
    let errors = error.catalog_errors().to_vec();
    assert!(!errors.is_empty(), "{error}");
    (error, errors)
}

/// Asserts that the build fails with exactly `expected`, and that both the
/// error and the whole BuildError name `declaration`.
#[track_caller]
fn assert_refused(builder: ServerBuilder, expected: CatalogError, declaration: &str) {
    let (error, errors) = build_errors(builder);
    assert_eq!(errors, vec![expected.clone()], "{error}");
    assert!(expected.to_string().contains(declaration), "{expected}");
    assert!(error.to_string().contains(declaration), "{error}");
}

fn server() -> ServerBuilder {
    Server::new("s", "1")
}

#[test]
fn a_duplicate_tool_name_is_refused() {
    assert_refused(
        server().tools([tool("same"), tool("other"), tool("same")]),
        CatalogError::Duplicate {
            kind: Kind::Tool,
            name: "same".into(),
        },
        "same",
    );
}

#[test]
fn duplicate_prompts_resources_and_templates_are_refused() {
    let (_, errors) = build_errors(
        server()
            .resources([
                text_resource(resource("test://r", "r1")),
                text_resource(resource("test://r", "r2")),
            ])
            .resource_template(files_template())
            .resource_template(files_template())
            .prompts([plain_prompt(prompt("p")), plain_prompt(prompt("p"))]),
    );
    assert_eq!(
        errors,
        vec![
            CatalogError::Duplicate {
                kind: Kind::Resource,
                name: "test://r".into()
            },
            CatalogError::Duplicate {
                kind: Kind::ResourceTemplate,
                name: "test://files/{+path}".into()
            },
            CatalogError::Duplicate {
                kind: Kind::Prompt,
                name: "p".into()
            },
        ]
    );
}

#[test]
fn a_missing_description_is_refused() {
    let undescribed =
        ToolDecl::builder("mute").handler(|_a, _c| async { Ok(CallToolResult::text("")) });
    assert_refused(
        server().tool(undescribed),
        CatalogError::MissingDescription {
            kind: Kind::Tool,
            name: "mute".into(),
        },
        "mute",
    );
    let blank = ToolDecl::builder("blank")
        .description("   ")
        .handler(|_a, _c| async { Ok(CallToolResult::text("")) });
    assert_refused(
        server().tool(blank),
        CatalogError::MissingDescription {
            kind: Kind::Tool,
            name: "blank".into(),
        },
        "blank",
    );
    let resource =
        ResourceDecl::builder("test://x", "quiet").handler(|_r, _c| async { Ok(vec![]) });
    assert_refused(
        server().resource(resource),
        CatalogError::MissingDescription {
            kind: Kind::Resource,
            name: "quiet".into(),
        },
        "quiet",
    );
}

fn undocumented_input() -> typed_mcp::declare::ToolBuilder {
    ToolDecl::builder("loose")
        .description("Loose inputs.")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "documented": {"type": "string", "description": "Fine."},
                "bare": {"type": "string"}
            }
        }))
}

#[test]
fn an_undocumented_input_property_is_refused_unless_allowed() {
    let decl = undocumented_input().handler(|_a, _c| async { Ok(CallToolResult::text("")) });
    assert_refused(
        server().tool(decl),
        CatalogError::MissingInputDescription {
            kind: Kind::Tool,
            name: "loose".into(),
            input: "bare".into(),
        },
        "loose",
    );
    let allowed = undocumented_input()
        .allow_undocumented_inputs()
        .handler(|_a, _c| async { Ok(CallToolResult::text("")) });
    let built = server()
        .tool(allowed)
        .build()
        .expect("opted out of the check");
    assert_eq!(built.catalog().tools().len(), 1);
}

#[test]
fn an_invalid_tool_name_is_refused() {
    let long = "x".repeat(129);
    for name in ["has space", long.as_str(), "", "slash/name", "ünï"] {
        assert_refused(
            server().tool(tool(name)),
            CatalogError::InvalidToolName { name: name.into() },
            name,
        );
    }
    // 128 characters and the whole allowed alphabet are fine.
    let longest = "y".repeat(128);
    server()
        .tool(tool(&longest))
        .tool(tool("A-z_0.9"))
        .build()
        .expect("valid names");
}

#[test]
fn an_input_schema_that_is_not_an_object_schema_is_refused() {
    for schema in [
        json!({"type": "string"}),
        json!({"properties": {}}),
        json!(true),
        json!([]),
    ] {
        let decl = ToolDecl::builder("odd")
            .description("Odd schema.")
            .input_schema(schema.clone())
            .handler(|_a, _c| async { Ok(CallToolResult::text("")) });
        assert_refused(
            server().tool(decl),
            CatalogError::InputSchemaNotObject { name: "odd".into() },
            "odd",
        );
    }
}

fn template(uri: &str, parameters: &[&str]) -> ResourceTemplateDecl {
    let mut builder = ResourceTemplateDecl::builder(uri, "tpl").description("A template.");
    for p in parameters {
        builder = builder.parameter(*p, "A parameter.");
    }
    builder.handler(|_r, _c| async { Ok(vec![]) })
}

#[test]
fn a_template_variable_that_is_not_a_parameter_is_refused() {
    assert_refused(
        server().resource_template(template("test://{a}/{b}", &["a"])),
        CatalogError::TemplateVariableNotParameter {
            name: "tpl".into(),
            variable: "b".into(),
        },
        "tpl",
    );
}

#[test]
fn a_parameter_not_in_the_template_is_refused() {
    assert_refused(
        server().resource_template(template("test://{a}", &["a", "c"])),
        CatalogError::ParameterNotInTemplate {
            name: "tpl".into(),
            parameter: "c".into(),
        },
        "tpl",
    );
}

#[test]
fn a_bad_uri_template_is_refused() {
    let cases = [
        ("test://{a", UriTemplateError::Unclosed(7)),
        (
            "test://{a}{b}",
            UriTemplateError::Adjacent("a".into(), "b".into()),
        ),
        ("test://{?q}", UriTemplateError::Unsupported("?q".into())),
        ("test://{a}/{a}", UriTemplateError::Duplicate("a".into())),
        ("test://{}", UriTemplateError::BadName(String::new())),
    ];
    for (uri, error) in cases {
        assert_refused(
            server().resource_template(template(uri, &[])),
            CatalogError::InvalidUriTemplate {
                name: "tpl".into(),
                error,
            },
            "tpl",
        );
    }
}

#[test]
fn a_prompt_argument_that_is_not_a_string_is_refused() {
    let decl = prompt("typed")
        .typed_argument("count", "How many.", true, json!({"type": "integer"}))
        .handler(|_a, _c| async { Ok(GetPromptResult::new(vec![])) });
    assert_refused(
        server().prompt(decl),
        CatalogError::PromptArgumentNotString {
            name: "typed".into(),
            argument: "count".into(),
            found: json!({"type": "integer"}).to_string(),
        },
        "typed",
    );
    // Strings and nullable strings are fine.
    let fine = prompt("fine")
        .typed_argument("a", "A.", true, json!({"type": "string"}))
        .typed_argument("b", "B.", false, json!({"type": ["string", "null"]}))
        .handler(|_a, _c| async { Ok(GetPromptResult::new(vec![])) });
    server().prompt(fine).build().expect("string arguments");
}

#[test]
fn a_resource_uri_that_is_not_absolute_is_refused() {
    for uri in [
        "relative/path",
        "/absolute/path",
        "1abc:x",
        "test://has space",
    ] {
        assert_refused(
            server().resource(text_resource(resource(uri, "rel"))),
            CatalogError::InvalidResourceUri {
                name: "rel".into(),
                uri: uri.into(),
            },
            "rel",
        );
    }
}

#[test]
fn an_invalid_x_mcp_header_is_refused() {
    let header_tool = |property: Value| {
        ToolDecl::builder("hdr")
            .description("Headers.")
            .input_schema(json!({"type": "object", "properties": {"p": property}}))
            .handler(|_a, _c| async { Ok(CallToolResult::text("")) })
    };
    for property in [
        json!({"type": "number", "description": "A ratio.", "x-mcp-header": "Ratio"}),
        json!({"type": "string", "description": "Spaced.", "x-mcp-header": "Has Space"}),
        json!({"type": "string", "description": "Empty.", "x-mcp-header": ""}),
        json!({"type": "string", "description": "Not a string.", "x-mcp-header": 5}),
        json!({"type": "object", "description": "An object.", "x-mcp-header": "Obj"}),
    ] {
        let (error, errors) = build_errors(server().tool(header_tool(property.clone())));
        assert!(
            matches!(&errors[..], [CatalogError::InvalidHeaderParam { name, path, .. }] if name == "hdr" && path == "p"),
            "{property}: {error}"
        );
        assert!(error.to_string().contains("hdr"), "{error}");
    }
}

#[test]
fn every_invalid_declaration_is_reported_in_one_build_error() {
    let (error, errors) = build_errors(
        server()
            .tool(tool("bad name"))
            .tool(
                ToolDecl::builder("undescribed")
                    .handler(|_a, _c| async { Ok(CallToolResult::text("")) }),
            )
            .resource(text_resource(resource("relative", "rel")))
            .resource_template(template("test://{x}", &[]))
            .prompt(plain_prompt(PromptDecl::builder("silent"))),
    );
    assert_eq!(errors.len(), 5, "{error}");
    let text = error.to_string();
    for declaration in ["bad name", "undescribed", "rel", "tpl", "silent"] {
        assert!(
            text.contains(declaration),
            "{declaration} missing from:\n{text}"
        );
    }
    assert!(matches!(error, BuildError::Catalog(_)));
}

#[test]
fn a_header_name_used_twice_is_refused() {
    let decl = ToolDecl::builder("twice")
        .description("Two properties, one header.")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "description": "A.", "x-mcp-header": "Same"},
                "b": {"type": "string", "description": "B.", "x-mcp-header": "same"}
            }
        }))
        .handler(|_a, _c| async { Ok(CallToolResult::text("")) });
    let (error, errors) = build_errors(server().tool(decl));
    assert!(
        matches!(&errors[..], [CatalogError::InvalidHeaderParam { name, .. }] if name == "twice"),
        "{error}"
    );
}

#[test]
fn an_output_schema_that_is_not_a_schema_is_refused() {
    let decl = ToolDecl::builder("out")
        .description("Bad output schema.")
        .output_schema(json!("object"))
        .handler(|_a, _c| async { Ok(CallToolResult::structured(json!({}))) });
    assert_refused(
        server().tool(decl),
        CatalogError::OutputSchemaInvalid { name: "out".into() },
        "out",
    );
}

#[test]
fn undocumented_template_parameters_and_prompt_arguments_are_refused() {
    let tpl = ResourceTemplateDecl::builder("test://{id}", "tpl")
        .description("A template.")
        .parameter("id", " ")
        .handler(|_r, _c| async { Ok(vec![]) });
    assert_refused(
        server().resource_template(tpl),
        CatalogError::MissingInputDescription {
            kind: Kind::ResourceTemplate,
            name: "tpl".into(),
            input: "id".into(),
        },
        "tpl",
    );
    let p = plain_prompt(prompt("pr").argument("topic", "", true));
    assert_refused(
        server().prompt(p),
        CatalogError::MissingInputDescription {
            kind: Kind::Prompt,
            name: "pr".into(),
            input: "topic".into(),
        },
        "pr",
    );
}

/// A tool that needs `capability`.
fn tool_requiring(name: &str, capability: typed_mcp::Capability) -> ToolDecl {
    ToolDecl::builder(name)
        .description(format!("The tool {name}."))
        .requires(capability)
        .handler(|_args, _ctx| async { Ok(CallToolResult::text("ok")) })
}

/// Each setting `Server::build` refuses has its own variant, carrying the value
/// found, and no catalog errors.
#[test]
fn each_invalid_setting_is_its_own_build_error() {
    use std::error::Error as _;
    use std::time::Duration;
    const MAX_DEPTH_CEILING: usize = ServerBuilder::MAX_DEPTH_CEILING;
    use typed_mcp::secret::RedactorError;

    const WRITE: typed_mcp::Capability =
        typed_mcp::Capability::new("desk.write", "Change tickets.");
    const WRITE_AGAIN: typed_mcp::Capability =
        typed_mcp::Capability::new("desk.write", "Edit tickets.");
    let refused = |builder: ServerBuilder| {
        let error = builder.build().expect_err("an invalid setting");
        assert!(error.catalog_errors().is_empty(), "{error}");
        error
    };

    assert_eq!(
        refused(server().max_message_bytes(0)),
        BuildError::ZeroMaxMessageBytes
    );
    for depth in [0, MAX_DEPTH_CEILING + 1] {
        assert_eq!(
            refused(server().max_depth(depth)),
            BuildError::MaxDepthOutOfRange {
                found: depth,
                ceiling: MAX_DEPTH_CEILING
            }
        );
    }
    assert!(matches!(
        refused(server().max_concurrent(0)),
        BuildError::MaxConcurrentOutOfRange { found: 0, max } if max > 0
    ));
    assert!(matches!(
        refused(server().max_concurrent(usize::MAX)),
        BuildError::MaxConcurrentOutOfRange { found: usize::MAX, max } if max < usize::MAX
    ));
    assert_eq!(refused(server().max_pending(0)), BuildError::ZeroMaxPending);
    assert!(matches!(
        refused(server().max_message_bytes(1000).max_pending_bytes(999)),
        BuildError::MaxPendingBytesOutOfRange {
            found: 999,
            min: 1000,
            ..
        }
    ));
    assert!(matches!(
        refused(server().max_pending_bytes(usize::MAX)),
        BuildError::MaxPendingBytesOutOfRange { found: usize::MAX, max, .. } if max <= u32::MAX as usize
    ));
    assert_eq!(refused(server().page_size(0)), BuildError::ZeroPageSize);
    assert_eq!(
        refused(server().default_timeout(Duration::ZERO)),
        BuildError::ZeroDefaultTimeout
    );

    let secret = refused(server().secret_values(["xq7zv"]));
    assert!(
        matches!(
            &secret,
            BuildError::InvalidSecretValues(RedactorError::TooShort { index: 0, chars: 5 })
        ),
        "{secret:?}"
    );
    // The cause stays reachable, and the message never echoes the value.
    let source = secret
        .source()
        .expect("the redactor's refusal is the source");
    assert!(source.to_string().contains("#0"), "{source}");
    assert!(!format!("{secret} {source}").contains("xq7zv"));

    assert_eq!(
        refused(server().tools([
            tool_requiring("first", WRITE),
            tool_requiring("second", WRITE_AGAIN),
        ])),
        BuildError::CapabilityDescribedTwice {
            name: "desk.write",
            first: "Change tickets.",
            second: "Edit tickets.",
        }
    );

    let unknown = refused(
        server()
            .tool(tool_requiring("first", WRITE))
            .allow(["desk.wrte, desk.admin"]),
    );
    assert_eq!(
        unknown,
        BuildError::UnknownCapabilities {
            unknown: vec!["desk.wrte".into(), "desk.admin".into()],
            declared: vec!["desk.write"],
        }
    );
    assert!(
        unknown.to_string().contains("desk.wrte, desk.admin"),
        "{unknown}"
    );

    server()
        .max_depth(MAX_DEPTH_CEILING)
        .max_concurrent(1)
        .page_size(1)
        .max_message_bytes(1)
        .max_pending(1)
        .max_pending_bytes(1)
        .default_timeout(Duration::from_millis(1))
        .build()
        .expect("the bounds themselves are valid");
}

/// A catalog error is the whole message and keeps its own causes reachable.
#[test]
fn catalog_errors_keep_their_causes() {
    use std::error::Error as _;
    let template = ResourceTemplateDecl::builder("test://{", "broken")
        .description("A broken template.")
        .handler(|_request, _ctx| async { Ok(vec![]) });
    let error = server()
        .resource_template(template)
        .build()
        .expect_err("an unparsable template");
    let [CatalogError::InvalidUriTemplate { error: cause, .. }] = error.catalog_errors() else {
        panic!("{error:?}");
    };
    assert_eq!(cause, &UriTemplateError::Unclosed(7));
    let inner = error.catalog_errors()[0]
        .source()
        .expect("the template error is the source");
    assert_eq!(inner.to_string(), cause.to_string());
}
