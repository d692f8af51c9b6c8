//! `mcp.lock`: the digest of every tool, prompt, resource and resource template
//! a server serves, with what a reader needs to see what changed.
//!
//! The digests are those of `typed_mcp::protocol::digest` (SHA-256 over RFC 8785
//! canonical JSON), so a lock written on one machine checks on any other. The
//! file is TOML with every table sorted, and depends on nothing but the served
//! declarations (no server version, no date), so it changes only when they do.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use typed_mcp::protocol::digest::Digest;

use typed_mcp_client::Catalog as ServedCatalog;

/// The format version this build writes and reads.
pub const LOCK_VERSION: u32 = 1;

const HEADER: &str = "\
# mcp.lock: the digest of every tool, prompt and resource this MCP server serves
# (SHA-256 over the RFC 8785 canonical JSON of what a model reads about it).
# Written by `typed-mcp lock`; `typed-mcp lock --check` fails when the served
# catalog no longer matches. Commit it; review its changes like code.

";

/// The whole lock file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// [`LOCK_VERSION`].
    pub version: u32,
    /// Tools by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, ToolLock>,
    /// Prompts by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prompts: BTreeMap<String, PromptLock>,
    /// Static resources by URI.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, ResourceLock>,
    /// Resource templates by URI template.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub templates: BTreeMap<String, ResourceLock>,
}

/// One tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolLock {
    /// The declaration's digest.
    pub digest: Digest,
    /// The description, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The digest of the input schema.
    pub input_schema: Digest,
    /// The digest of the output schema, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Digest>,
    /// Each input property.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, InputLock>,
}

/// One prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptLock {
    /// The declaration's digest.
    pub digest: Digest,
    /// The description, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The digest of the argument list, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Digest>,
    /// Each argument.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, InputLock>,
}

/// One input of a tool or prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputLock {
    /// The digest of its schema (tool) or descriptor (prompt).
    pub digest: Digest,
    /// Its description, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One static resource or resource template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceLock {
    /// The declaration's digest.
    pub digest: Digest,
    /// Its programmatic name.
    pub name: String,
    /// The description, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// A lock file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// It does not exist.
    #[error("{path} does not exist: write it first with `typed-mcp lock -- <server>`")]
    Missing {
        /// The path.
        path: String,
    },
    /// It cannot be read or written.
    #[error("{path}: {error}")]
    Io {
        /// The path.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// It is not a lock file this build understands.
    #[error("{path} is not a valid lock file: {reason}")]
    Invalid {
        /// The path.
        path: String,
        /// Why.
        reason: String,
    },
    /// The server declares one name twice.
    #[error("the server lists {kind} {name:?} twice; a lock needs unique names")]
    Duplicate {
        /// What kind of declaration.
        kind: &'static str,
        /// The name.
        name: String,
    },
}

fn text_of(value: &Value) -> Option<String> {
    value
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn insert<T>(
    map: &mut BTreeMap<String, T>,
    kind: &'static str,
    name: &str,
    value: T,
) -> Result<(), LockError> {
    if map.insert(name.to_owned(), value).is_some() {
        return Err(LockError::Duplicate {
            kind,
            name: name.to_owned(),
        });
    }
    Ok(())
}

impl Lock {
    /// The lock of what a server serves.
    pub fn of(catalog: &ServedCatalog) -> Result<Lock, LockError> {
        let mut lock = Lock {
            version: LOCK_VERSION,
            tools: BTreeMap::new(),
            prompts: BTreeMap::new(),
            resources: BTreeMap::new(),
            templates: BTreeMap::new(),
        };
        for tool in &catalog.tools {
            let parts = tool.declaration_digest();
            let properties = tool.input_schema.get("properties");
            let inputs = parts
                .inputs
                .iter()
                .map(|(name, digest)| {
                    let description = properties.and_then(|p| text_of(&p[name.as_str()]));
                    (
                        name.clone(),
                        InputLock {
                            digest: *digest,
                            description,
                        },
                    )
                })
                .collect();
            let entry = ToolLock {
                digest: parts.digest,
                description: tool.description.clone(),
                input_schema: parts.fields["inputSchema"],
                output_schema: parts.fields.get("outputSchema").copied(),
                inputs,
            };
            insert(&mut lock.tools, "tool", &tool.name, entry)?;
        }
        for prompt in &catalog.prompts {
            let parts = prompt.declaration_digest();
            let inputs = prompt
                .arguments
                .iter()
                .flatten()
                .map(|arg| {
                    (
                        arg.name.clone(),
                        InputLock {
                            digest: parts.inputs[&arg.name],
                            description: arg.description.clone(),
                        },
                    )
                })
                .collect();
            let entry = PromptLock {
                digest: parts.digest,
                description: prompt.description.clone(),
                arguments: parts.fields.get("arguments").copied(),
                inputs,
            };
            insert(&mut lock.prompts, "prompt", &prompt.name, entry)?;
        }
        for resource in &catalog.resources {
            let entry = ResourceLock {
                digest: resource.digest(),
                name: resource.name.clone(),
                description: resource.description.clone(),
                mime_type: resource.mime_type.clone(),
            };
            insert(&mut lock.resources, "resource", &resource.uri, entry)?;
        }
        for template in &catalog.templates {
            let entry = ResourceLock {
                digest: template.digest(),
                name: template.name.clone(),
                description: template.description.clone(),
                mime_type: template.mime_type.clone(),
            };
            insert(
                &mut lock.templates,
                "resource template",
                &template.uri_template,
                entry,
            )?;
        }
        Ok(lock)
    }

    /// The file's text: a comment, then sorted TOML.
    pub fn to_toml(&self) -> String {
        let body = toml::to_string_pretty(self).expect("a lock serializes to TOML");
        format!("{HEADER}{body}")
    }

    /// Parses a lock file's text (`path` names it in errors).
    pub fn parse(text: &str, path: &str) -> Result<Lock, LockError> {
        #[derive(Deserialize)]
        struct Version {
            version: Option<u32>,
        }
        let invalid = |reason: String| LockError::Invalid {
            path: path.to_owned(),
            reason,
        };
        let version: Version = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        match version.version {
            Some(LOCK_VERSION) => {}
            Some(other) => {
                return Err(invalid(format!(
                    "it is format version {other}; this typed-mcp reads version {LOCK_VERSION}"
                )));
            }
            None => return Err(invalid("it has no `version`".into())),
        }
        toml::from_str(text).map_err(|e| invalid(e.to_string()))
    }

    /// Reads a lock file.
    pub fn read(path: &Path) -> Result<Lock, LockError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| {
            if error.kind() == std::io::ErrorKind::NotFound {
                LockError::Missing {
                    path: shown.clone(),
                }
            } else {
                LockError::Io {
                    path: shown.clone(),
                    error,
                }
            }
        })?;
        Lock::parse(&text, &shown)
    }

    /// Writes the lock file (through a temporary file, so a reader never sees
    /// half of it).
    pub fn write(&self, path: &Path) -> Result<(), LockError> {
        let io = |error| LockError::Io {
            path: path.display().to_string(),
            error,
        };
        let mut temp = path.as_os_str().to_owned();
        temp.push(".tmp");
        std::fs::write(&temp, self.to_toml()).map_err(io)?;
        std::fs::rename(&temp, path).map_err(io)
    }

    /// How many declarations of each kind, for a summary line.
    pub fn summary(&self) -> String {
        let count =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        [
            count(self.tools.len(), "tool", "tools"),
            count(self.prompts.len(), "prompt", "prompts"),
            count(self.resources.len(), "resource", "resources"),
            count(
                self.templates.len(),
                "resource template",
                "resource templates",
            ),
        ]
        .join(", ")
    }
}

/// How a declaration or one of its parts changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// Served, not in the lock.
    Added,
    /// In the lock, no longer served.
    Removed,
    /// Both, different.
    Changed,
}

/// One difference between a lock and the served catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Change {
    /// `tool`, `prompt`, `resource` or `resource template`.
    pub kind: String,
    /// Its name (a resource's URI, a template's URI template).
    pub name: String,
    /// The part that changed (`description`, `input schema`, `input "limit"`,
    /// ...), or none when the whole declaration was added or removed.
    pub field: Option<String>,
    /// Added, removed or changed.
    pub change: ChangeKind,
    /// The locked value: text verbatim, schemas as their digest.
    pub old: Option<String>,
    /// The served value.
    pub new: Option<String>,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let subject = format!("{} {:?}", self.kind, self.name);
        let verb = match self.change {
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::Changed => "changed",
        };
        let Some(field) = &self.field else {
            return match self.change {
                ChangeKind::Added => write!(f, "{subject}: added (served, not in the lock)"),
                ChangeKind::Removed => {
                    write!(f, "{subject}: removed (in the lock, no longer served)")
                }
                ChangeKind::Changed => write!(f, "{subject}: changed"),
            };
        };
        if self.old.is_none() && self.new.is_none() {
            return write!(f, "{subject}: {field} {verb}");
        }
        let is_digest =
            |v: &Option<String>| v.as_deref().is_some_and(|v| v.starts_with(Digest::PREFIX));
        if is_digest(&self.old) || is_digest(&self.new) {
            // Schemas are recorded as digests: the short form says that they
            // differ; the served schema is one `typed-mcp list` away.
            let short = |v: &Option<String>| match v {
                Some(v) => {
                    v.chars()
                        .take(Digest::PREFIX.len() + 12)
                        .collect::<String>()
                        + "…"
                }
                None => "(none)".into(),
            };
            return write!(
                f,
                "{subject}: {field} {verb} ({} → {})",
                short(&self.old),
                short(&self.new)
            );
        }
        write!(f, "{subject}: {field} {verb}")?;
        for (sign, value) in [("-", &self.old), ("+", &self.new)] {
            match value.as_deref() {
                None => write!(f, "\n    {sign} (none)")?,
                Some("") => write!(f, "\n    {sign} (empty)")?,
                Some(text) => {
                    for line in text.lines() {
                        write!(f, "\n    {sign} {line}")?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Collects the changes of one declaration.
struct Differ<'a> {
    kind: &'static str,
    name: &'a str,
    changes: Vec<Change>,
}

impl Differ<'_> {
    fn push(
        &mut self,
        field: Option<String>,
        change: ChangeKind,
        old: Option<String>,
        new: Option<String>,
    ) {
        self.changes.push(Change {
            kind: self.kind.to_owned(),
            name: self.name.to_owned(),
            field,
            change,
            old,
            new,
        });
    }

    fn kind_of(old: &Option<String>, new: &Option<String>) -> ChangeKind {
        match (old, new) {
            (None, Some(_)) => ChangeKind::Added,
            (Some(_), None) => ChangeKind::Removed,
            _ => ChangeKind::Changed,
        }
    }

    fn text(&mut self, field: &str, old: &Option<String>, new: &Option<String>) {
        if old != new {
            let change = Self::kind_of(old, new);
            self.push(Some(field.to_owned()), change, old.clone(), new.clone());
        }
    }

    fn digest(&mut self, field: &str, old: Option<Digest>, new: Option<Digest>) {
        if old != new {
            let (old, new) = (old.map(|d| d.to_string()), new.map(|d| d.to_string()));
            let change = Self::kind_of(&old, &new);
            self.push(Some(field.to_owned()), change, old, new);
        }
    }

    /// Per-input changes; true when any was found.
    fn inputs(
        &mut self,
        noun: &str,
        old: &BTreeMap<String, InputLock>,
        new: &BTreeMap<String, InputLock>,
    ) -> bool {
        let before = self.changes.len();
        let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
        for name in names {
            let field = format!("{noun} {name:?}");
            match (old.get(name), new.get(name)) {
                (Some(_), None) => self.push(Some(field), ChangeKind::Removed, None, None),
                (None, Some(_)) => self.push(Some(field), ChangeKind::Added, None, None),
                (Some(o), Some(n)) if o.description != n.description => {
                    self.text(
                        &format!("{field} description"),
                        &o.description,
                        &n.description,
                    );
                }
                (Some(o), Some(n)) => {
                    self.digest(&format!("{field} schema"), Some(o.digest), Some(n.digest));
                }
                (None, None) => {}
            }
        }
        self.changes.len() > before
    }

    /// The digests differ and no part explains it (a hand-edited lock).
    fn unexplained(&mut self, old: Digest, new: Digest) {
        if self.changes.is_empty() {
            self.digest("digest", Some(old), Some(new));
        }
    }
}

fn diff_maps<T: PartialEq>(
    kind: &'static str,
    old: &BTreeMap<String, T>,
    new: &BTreeMap<String, T>,
    changes: &mut Vec<Change>,
    mut fields: impl FnMut(&mut Differ<'_>, &T, &T),
) {
    let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for name in names {
        let mut differ = Differ {
            kind,
            name,
            changes: Vec::new(),
        };
        match (old.get(name), new.get(name)) {
            (Some(_), None) => differ.push(None, ChangeKind::Removed, None, None),
            (None, Some(_)) => differ.push(None, ChangeKind::Added, None, None),
            (Some(o), Some(n)) if o != n => fields(&mut differ, o, n),
            _ => {}
        }
        changes.append(&mut differ.changes);
    }
}

/// Every difference between the lock (`old`) and what is served (`new`), in
/// a stable order: tools, prompts, resources, templates; by name; by field.
pub fn diff(old: &Lock, new: &Lock) -> Vec<Change> {
    let mut changes = Vec::new();
    diff_maps("tool", &old.tools, &new.tools, &mut changes, |d, o, n| {
        d.text("description", &o.description, &n.description);
        // Input-level changes say more than "the input schema changed"; the
        // schema-level line is for what no input explains (e.g. `required`).
        if !d.inputs("input", &o.inputs, &n.inputs) {
            d.digest("input schema", Some(o.input_schema), Some(n.input_schema));
        }
        d.digest("output schema", o.output_schema, n.output_schema);
        d.unexplained(o.digest, n.digest);
    });
    diff_maps(
        "prompt",
        &old.prompts,
        &new.prompts,
        &mut changes,
        |d, o, n| {
            d.text("description", &o.description, &n.description);
            if !d.inputs("argument", &o.inputs, &n.inputs) {
                d.digest("arguments", o.arguments, n.arguments);
            }
            d.unexplained(o.digest, n.digest);
        },
    );
    for (kind, old, new) in [
        ("resource", &old.resources, &new.resources),
        ("resource template", &old.templates, &new.templates),
    ] {
        diff_maps(kind, old, new, &mut changes, |d, o, n| {
            d.text("name", &Some(o.name.clone()), &Some(n.name.clone()));
            d.text("description", &o.description, &n.description);
            d.text("MIME type", &o.mime_type, &n.mime_type);
            d.unexplained(o.digest, n.digest);
        });
    }
    changes
}

/// The readable outcome of a check of the lock at `path`.
pub fn report(path: &Path, changes: &[Change]) -> String {
    let path = path.display();
    if changes.is_empty() {
        return format!("{path} matches the served catalog\n");
    }
    let mut out = format!(
        "{path} does not match the served catalog: {} change{}\n",
        changes.len(),
        if changes.len() == 1 { "" } else { "s" }
    );
    for change in changes {
        out.push_str("  ");
        out.push_str(&change.to_string().replace('\n', "\n  "));
        out.push('\n');
    }
    out.push_str(&format!(
        "If these changes are intended, run `typed-mcp lock -- <server>` and commit {path}.\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use typed_mcp::wire::{Prompt, PromptArgument, Resource, ResourceTemplate, Tool};

    fn tool(name: &str, description: &str, limit_doc: &str) -> Tool {
        Tool::new(
            name,
            json!({"type": "object", "properties": {
                "query": {"type": "string", "description": "Words to look for."},
                "limit": {"type": "integer", "description": limit_doc}
            }}),
        )
        .with_description(description)
        .with_output_schema(json!({"type": "object"}))
    }

    fn catalog() -> ServedCatalog {
        ServedCatalog {
            tools: vec![
                tool(
                    "search",
                    "Find tickets.\n\nRead-only.",
                    "At most this many.",
                ),
                tool("other.tool", "Something else.", "Limit."),
            ],
            prompts: vec![
                Prompt::new("triage")
                    .with_description("Triage a ticket.")
                    .with_argument(
                        PromptArgument::new("ticket_id")
                            .with_description("The ticket.")
                            .with_required(true),
                    ),
            ],
            resources: vec![
                Resource::new("desk://readme", "readme")
                    .with_description("About.")
                    .with_mime_type("text/plain"),
            ],
            templates: vec![
                ResourceTemplate::new("ticket://{id}", "ticket")
                    .with_description("A ticket.")
                    .with_mime_type("application/json"),
            ],
        }
    }

    #[test]
    fn the_file_round_trips_and_is_sorted() {
        let lock = Lock::of(&catalog()).expect("a lock");
        let text = lock.to_toml();
        assert!(text.starts_with("# mcp.lock"));
        assert_eq!(Lock::parse(&text, "mcp.lock").ok().as_ref(), Some(&lock));
        // Sorted: "other.tool" before "search", whatever the served order.
        let other = text
            .find("[tools.\"other.tool\"]")
            .expect("quoted dotted name");
        let search = text.find("[tools.search]").expect("search table");
        assert!(other < search, "{text}");
        assert!(text.contains("version = 1\n"));
        assert!(text.contains("[tools.search.inputs.limit]"), "{text}");
        assert!(text.contains("[resources.\"desk://readme\"]"), "{text}");
        assert!(text.contains("[templates.\"ticket://{id}\"]"), "{text}");
        // The digest recorded is the library's.
        assert!(text.contains(&format!("digest = \"{}\"", catalog().tools[0].digest())));
    }

    #[test]
    fn equal_catalogs_have_no_changes() {
        let a = Lock::of(&catalog()).expect("a lock");
        let b = Lock::of(&catalog()).expect("a lock");
        assert_eq!(a.to_toml(), b.to_toml());
        assert!(diff(&a, &b).is_empty());
    }

    #[test]
    fn a_changed_description_names_the_tool_and_the_field() {
        let old = Lock::of(&catalog()).expect("a lock");
        let mut served = catalog();
        served.tools[0].description = Some("Find tickets.\n\nWrites nothing.".into());
        let new = Lock::of(&served).expect("a lock");
        let changes = diff(&old, &new);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(changes[0].kind, "tool");
        assert_eq!(changes[0].name, "search");
        assert_eq!(changes[0].field.as_deref(), Some("description"));
        assert_eq!(
            changes[0].to_string(),
            "tool \"search\": description changed\n    - Find tickets.\n    - \n    - Read-only.\n    + Find tickets.\n    + \n    + Writes nothing."
        );
        assert_eq!(new.tools["other.tool"], old.tools["other.tool"]);
    }

    #[test]
    fn input_changes_are_named() {
        let old = Lock::of(&catalog()).expect("a lock");
        let mut served = catalog();
        served.tools[0].input_schema["properties"]["limit"]["description"] = json!("Fewer.");
        served.tools[0].input_schema["properties"]["new"] =
            json!({"type": "boolean", "description": "New."});
        served.tools[0].input_schema["properties"]
            .as_object_mut()
            .map(|p| p.remove("query"));
        served.tools[0].output_schema = None;
        let new = Lock::of(&served).expect("a lock");
        let lines: Vec<String> = diff(&old, &new).iter().map(ToString::to_string).collect();
        assert_eq!(lines.len(), 4, "{lines:#?}");
        assert_eq!(
            lines[0],
            "tool \"search\": input \"limit\" description changed\n    - At most this many.\n    + Fewer."
        );
        assert_eq!(lines[1], "tool \"search\": input \"new\" added");
        assert!(
            lines[2].starts_with("tool \"search\": input \"query\" removed"),
            "{}",
            lines[2]
        );
        assert!(
            lines[3].starts_with("tool \"search\": output schema removed (sha256:"),
            "{}",
            lines[3]
        );
    }

    #[test]
    fn added_and_removed_declarations_are_reported() {
        let old = Lock::of(&catalog()).expect("a lock");
        let mut served = catalog();
        served.tools.remove(1);
        served.tools.push(tool("fresh", "New.", "Limit."));
        served.templates[0].mime_type = Some("text/plain".into());
        served.prompts[0].arguments = None;
        let new = Lock::of(&served).expect("a lock");
        let lines: Vec<String> = diff(&old, &new).iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "tool \"fresh\": added (served, not in the lock)",
                "tool \"other.tool\": removed (in the lock, no longer served)",
                "prompt \"triage\": argument \"ticket_id\" removed",
                "resource template \"ticket://{id}\": MIME type changed\n    - application/json\n    + text/plain",
            ]
        );
    }

    #[test]
    fn bad_lock_files_are_refused_clearly() {
        let err = |text: &str| Lock::parse(text, "mcp.lock").err().map(|e| e.to_string());
        assert!(err("version = 2").is_some_and(|e| e.contains("format version 2")));
        assert!(err("").is_some_and(|e| e.contains("no `version`")));
        assert!(err("version = 1\n[tools.x]\ndigest = \"md5:1\"\ninput_schema = \"x\"").is_some());
        assert!(err("version = 1\nsurprise = true").is_some());
        assert!(Lock::parse("version = 1", "mcp.lock").is_ok());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn the_digests_read_off_the_wire_are_the_servers() {
        use typed_mcp::tool;

        /// Scale a number.
        ///
        /// # Arguments
        /// * `x` - The number, 0.1 to 1e21.
        /// * `factor` - By how much.
        #[tool]
        fn scale(x: f64, #[arg(default)] factor: Option<f64>) -> f64 {
            x * factor.unwrap_or(1.5)
        }

        let server = typed_mcp::Server::new("digests", "1.0.0")
            .tools(typed_mcp::tools![scale])
            .build()
            .expect("a valid server");
        let expected = server.catalog().tool_digest(0).clone();
        // Read off the wire by the client the CLI uses, in process.
        let client = typed_mcp_client::Client::in_process(server, Default::default())
            .await
            .expect("connected");
        let served = client.catalog().await.expect("the catalog");
        assert_eq!(served.tools.len(), 1);
        let lock = Lock::of(&served).expect("a lock");
        let entry = &lock.tools["scale"];
        assert_eq!(entry.digest, expected.digest);
        assert_eq!(entry.input_schema, expected.fields["inputSchema"]);
        assert_eq!(
            entry.output_schema,
            expected.fields.get("outputSchema").copied()
        );
        assert_eq!(entry.inputs["x"].digest, expected.inputs["x"]);
    }
}
