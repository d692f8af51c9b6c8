//! The catalog: every tool, resource, resource template and prompt a server
//! offers, validated once, indexed by wire name, with its list pages and its
//! `server/discover` result serialized ahead of time.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, OnceLock};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::SUPPORTED_VERSIONS;
use crate::digest::DeclarationDigest;
use crate::uri_template::{UriTemplate, UriTemplateError};
use crate::wire::{
    CacheHint, CacheScope, DiscoverResult, Implementation, ListChangedCapability, Prompt,
    PromptArgument, Resource, ResourceTemplate, ResourcesCapability, ResultMeta, ResultType,
    ServerCapabilities, Tool,
};

/// The kinds of declaration a catalog holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A tool.
    Tool,
    /// A static resource.
    Resource,
    /// A resource template.
    ResourceTemplate,
    /// A prompt.
    Prompt,
}

impl Kind {
    fn cursor_tag(self) -> &'static str {
        match self {
            Kind::Tool => "t",
            Kind::Resource => "r",
            Kind::ResourceTemplate => "rt",
            Kind::Prompt => "p",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Tool => "tool",
            Kind::Resource => "resource",
            Kind::ResourceTemplate => "resource template",
            Kind::Prompt => "prompt",
        })
    }
}

/// A tool's descriptor plus what the router checks before invoking it.
///
/// The entries are `#[non_exhaustive]`; each has `new(descriptor)` and
/// `with_*` setters:
///
/// ```
/// use typed_mcp_core::catalog::{
///     Catalog, CatalogError, CatalogOptions, Kind, ParameterDoc, PromptEntry, ResourceEntry,
///     TemplateEntry, ToolEntry,
/// };
/// use typed_mcp_core::wire::{
///     CacheHint, CacheScope, Implementation, Prompt, Resource, ResourceTemplate, Tool,
/// };
/// use serde_json::json;
///
/// let tool = ToolEntry::new(Tool::new("ask", json!({"type": "object"})).with_description("Ask."))
///     .with_required_client_capability("sampling");
/// let readme = ResourceEntry::new(Resource::new("desk://readme", "readme").with_description("About."))
///     .with_cache(CacheHint::new(60_000, CacheScope::Public));
/// let ticket = TemplateEntry::new(
///     ResourceTemplate::new("ticket://{id}", "ticket").with_description("A ticket."),
/// )
/// .with_parameter(ParameterDoc::new("id", Some("The ticket id.".into())))
/// .with_completion();
/// let triage = PromptEntry::new(Prompt::new("triage").with_description("Triage."));
/// let options = CatalogOptions::new(Implementation::new("desk", "1.0.0"))
///     .with_instructions("Be brief.")
///     .with_page_size(50);
/// let catalog = Catalog::build(options.clone(), vec![tool], vec![readme], vec![ticket], vec![triage])?;
/// assert_eq!(catalog.tools().len(), 1);
///
/// // Every refusal names its declaration; the enum is matched with a wildcard arm.
/// let undocumented = ToolEntry::new(Tool::new("bare", json!({"type": "object"})));
/// let errors = Catalog::build(options, vec![undocumented], vec![], vec![], vec![]).unwrap_err();
/// match &errors.0[0] {
///     CatalogError::MissingDescription { kind: Kind::Tool, name } => assert_eq!(name, "bare"),
///     other => panic!("{other}"),
/// }
/// # Ok::<(), typed_mcp_core::catalog::CatalogErrors>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolEntry {
    /// The descriptor served by `tools/list`.
    pub tool: Tool,
    /// Top-level client capabilities every call needs (e.g. `"sampling"`);
    /// a call whose `_meta` does not declare them is refused with `-32021`.
    pub required_client_capabilities: Vec<String>,
    /// Skip the check that every input property has a description.
    pub allow_undocumented_inputs: bool,
    /// Parameters mirrored into `Mcp-Param-*` headers (derived from `x-mcp-header`).
    pub header_params: Vec<HeaderParam>,
    /// Extensions every call needs the client to declare (by identifier, e.g.
    /// `io.modelcontextprotocol/tasks` for a tool that only runs as a task);
    /// a call whose `_meta` does not declare them is refused with `-32021`.
    pub required_client_extensions: Vec<String>,
}

impl ToolEntry {
    /// An entry for this descriptor with no further requirements.
    pub fn new(tool: Tool) -> Self {
        ToolEntry {
            tool,
            required_client_capabilities: Vec::new(),
            allow_undocumented_inputs: false,
            header_params: Vec::new(),
            required_client_extensions: Vec::new(),
        }
    }

    /// Refuses calls whose `_meta` does not declare this extension (by
    /// identifier) in its client capabilities.
    #[must_use]
    pub fn with_required_client_extension(mut self, id: impl Into<String>) -> Self {
        self.required_client_extensions.push(id.into());
        self
    }

    /// Refuses calls whose `_meta` does not declare this top-level client
    /// capability (e.g. `"sampling"`).
    #[must_use]
    pub fn with_required_client_capability(mut self, name: impl Into<String>) -> Self {
        self.required_client_capabilities.push(name.into());
        self
    }

    /// Skips the check that every input property has a description.
    #[must_use]
    pub fn with_undocumented_inputs_allowed(mut self) -> Self {
        self.allow_undocumented_inputs = true;
        self
    }

    /// Mirrors one parameter into an `Mcp-Param-*` header.
    #[must_use]
    pub fn with_header_param(mut self, param: HeaderParam) -> Self {
        self.header_params.push(param);
        self
    }
}

/// A tool parameter annotated with `x-mcp-header`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeaderParam {
    /// The header name after `Mcp-Param-`, as declared.
    pub name: String,
    /// The property path from the arguments' root.
    pub path: Vec<String>,
    /// `"string"`, `"integer"` or `"boolean"`.
    pub json_type: String,
}

impl HeaderParam {
    /// The parameter at `path` mirrored into `Mcp-Param-{name}`, of JSON type
    /// `json_type` (`"string"`, `"integer"` or `"boolean"`).
    pub fn new(name: impl Into<String>, path: Vec<String>, json_type: impl Into<String>) -> Self {
        HeaderParam {
            name: name.into(),
            path,
            json_type: json_type.into(),
        }
    }
}

/// A static resource's descriptor and cache policy.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ResourceEntry {
    /// The descriptor served by `resources/list`.
    pub resource: Resource,
    /// Cache hint of its `resources/read` results (default private, 0 ms).
    pub cache: CacheHint,
}

impl ResourceEntry {
    /// An entry for this descriptor with the default cache hint (private, 0 ms).
    pub fn new(resource: Resource) -> Self {
        ResourceEntry {
            resource,
            cache: CacheHint::PRIVATE_NOW,
        }
    }

    /// Sets the cache hint of its `resources/read` results.
    #[must_use]
    pub fn with_cache(mut self, cache: CacheHint) -> Self {
        self.cache = cache;
        self
    }
}

/// A resource template's descriptor, its parameters and cache policy.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TemplateEntry {
    /// The descriptor served by `resources/templates/list`.
    pub template: ResourceTemplate,
    /// Its parameters with their descriptions; each must be a `{variable}`.
    pub parameters: Vec<ParameterDoc>,
    /// Cache hint of its `resources/read` results (default private, 0 ms).
    pub cache: CacheHint,
    /// Whether `completion/complete` may target it.
    pub completable: bool,
}

impl TemplateEntry {
    /// An entry for this descriptor with no parameters, the default cache hint
    /// (private, 0 ms) and no completion.
    pub fn new(template: ResourceTemplate) -> Self {
        TemplateEntry {
            template,
            parameters: Vec::new(),
            cache: CacheHint::PRIVATE_NOW,
            completable: false,
        }
    }

    /// Declares one parameter (a `{variable}` of the template).
    #[must_use]
    pub fn with_parameter(mut self, parameter: ParameterDoc) -> Self {
        self.parameters.push(parameter);
        self
    }

    /// Sets the cache hint of its `resources/read` results.
    #[must_use]
    pub fn with_cache(mut self, cache: CacheHint) -> Self {
        self.cache = cache;
        self
    }

    /// Lets `completion/complete` target it.
    #[must_use]
    pub fn with_completion(mut self) -> Self {
        self.completable = true;
        self
    }
}

/// A documented parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParameterDoc {
    /// The parameter's name.
    pub name: String,
    /// What it means.
    pub description: Option<String>,
}

impl ParameterDoc {
    /// A parameter with this name and description.
    pub fn new(name: impl Into<String>, description: Option<String>) -> Self {
        ParameterDoc {
            name: name.into(),
            description,
        }
    }
}

/// A prompt's descriptor and the JSON Schema of each argument.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PromptEntry {
    /// The descriptor served by `prompts/list`.
    pub prompt: Prompt,
    /// The schema of each argument by name, when known; each must be a string.
    pub argument_schemas: Vec<(String, Value)>,
    /// Whether `completion/complete` may target it.
    pub completable: bool,
}

impl PromptEntry {
    /// An entry for this descriptor with no known argument schemas and no
    /// completion.
    pub fn new(prompt: Prompt) -> Self {
        PromptEntry {
            prompt,
            argument_schemas: Vec::new(),
            completable: false,
        }
    }

    /// Records the JSON Schema of one argument (it must be a string schema).
    #[must_use]
    pub fn with_argument_schema(mut self, name: impl Into<String>, schema: Value) -> Self {
        self.argument_schemas.push((name.into(), schema));
        self
    }

    /// Lets `completion/complete` target it.
    #[must_use]
    pub fn with_completion(mut self) -> Self {
        self.completable = true;
        self
    }
}

/// A declaration the catalog refuses, naming the declaration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// Two declarations of one kind share a wire name (or URI).
    #[error("duplicate {kind} {name:?}: wire names must be unique")]
    Duplicate {
        /// The kind.
        kind: Kind,
        /// The repeated name.
        name: String,
    },
    /// A declaration has no description.
    #[error("{kind} {name:?} has no description: describe what it does for the model")]
    MissingDescription {
        /// The kind.
        kind: Kind,
        /// The declaration's name.
        name: String,
    },
    /// An input of a declaration has no description.
    #[error("{kind} {name:?}: input {input:?} has no description")]
    MissingInputDescription {
        /// The kind.
        kind: Kind,
        /// The declaration's name.
        name: String,
        /// The undocumented input.
        input: String,
    },
    /// A tool name outside `[A-Za-z0-9_.-]{1,128}`.
    #[error(
        "tool name {name:?} is invalid: use {}",
        typed_mcp_syntax::TOOL_NAME_RULE
    )]
    InvalidToolName {
        /// The name.
        name: String,
    },
    /// A tool's input schema is not an object schema.
    #[error("tool {name:?}: the input schema must be a JSON object with \"type\": \"object\"")]
    InputSchemaNotObject {
        /// The tool.
        name: String,
    },
    /// An input that is bytes (`Vec<u8>`, `[u8; N]`, `bytes::Bytes`: an
    /// array of `uint8`): JSON has no bytes, and a model cannot be asked to
    /// spell a file as a list of numbers.
    #[error(
        "tool {name:?}: input {path} is bytes (an array of uint8), which JSON cannot carry; take a base64 or text `String` and decode it in the tool"
    )]
    BytesInput {
        /// The tool.
        name: String,
        /// Where, as a readable path (`file`, `parts[].data`).
        path: String,
    },
    /// An output schema that is not a JSON Schema object or boolean.
    #[error("tool {name:?}: the output schema must be a JSON Schema object")]
    OutputSchemaInvalid {
        /// The tool.
        name: String,
    },
    /// An invalid `x-mcp-header` annotation.
    #[error("tool {name:?}: invalid x-mcp-header on {path}: {reason}")]
    InvalidHeaderParam {
        /// The tool.
        name: String,
        /// The property path.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A resource URI that is not absolute (`scheme:...`).
    #[error("resource {name:?}: uri {uri:?} is not an absolute URI (scheme:...)")]
    InvalidResourceUri {
        /// The resource.
        name: String,
        /// The URI.
        uri: String,
    },
    /// A URI template that cannot be parsed.
    #[error("resource template {name:?}: {error}")]
    InvalidUriTemplate {
        /// The template's name.
        name: String,
        /// Why.
        #[source]
        error: UriTemplateError,
    },
    /// A `{variable}` of a URI template that is not a declared parameter.
    #[error(
        "resource template {name:?}: variable {{{variable}}} is not a parameter; declare a parameter named {variable:?}"
    )]
    TemplateVariableNotParameter {
        /// The template's name.
        name: String,
        /// The variable.
        variable: String,
    },
    /// A declared parameter that the URI template never fills.
    #[error(
        "resource template {name:?}: parameter {parameter:?} does not appear in the URI template"
    )]
    ParameterNotInTemplate {
        /// The template's name.
        name: String,
        /// The parameter.
        parameter: String,
    },
    /// A prompt argument whose schema is not a string.
    #[error(
        "prompt {name:?}: argument {argument:?} must be a string (prompt arguments are strings on the wire), found {found}"
    )]
    PromptArgumentNotString {
        /// The prompt.
        name: String,
        /// The argument.
        argument: String,
        /// The schema found.
        found: String,
    },
}

/// Every refusal of a catalog, so one build reports all of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogErrors(pub Vec<CatalogError>);

impl fmt::Display for CatalogErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} invalid declaration(s):", self.0.len())?;
        for e in &self.0 {
            write!(f, "\n  - {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CatalogErrors {}

/// Server-wide settings of a catalog.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CatalogOptions {
    /// The server's identity, sent in every result's `_meta`.
    pub server_info: Implementation,
    /// Guidance for the model, sent by `server/discover`.
    pub instructions: Option<String>,
    /// Items per list page (default 100).
    pub page_size: usize,
    /// Cache hint of lists and `server/discover` (default public, one hour).
    pub list_cache: CacheHint,
    /// Advertise `logging` (the runtime sends `notifications/message` to requests
    /// that ask with `_meta.logLevel`).
    pub logging: bool,
    /// Extensions announced under `capabilities.extensions` in
    /// `server/discover`, by identifier, with their settings.
    pub extensions: Map<String, Value>,
}

impl CatalogOptions {
    /// Options with defaults for this server identity.
    pub fn new(server_info: Implementation) -> Self {
        CatalogOptions {
            server_info,
            instructions: None,
            page_size: 100,
            list_cache: CacheHint::PUBLIC_HOUR,
            logging: true,
            extensions: Map::new(),
        }
    }

    /// Announces an extension (by identifier, e.g.
    /// `io.modelcontextprotocol/tasks`) with its settings (an empty object
    /// when it has none) under `capabilities.extensions` in `server/discover`.
    #[must_use]
    pub fn with_extension(mut self, id: impl Into<String>, settings: Map<String, Value>) -> Self {
        self.extensions.insert(id.into(), Value::Object(settings));
        self
    }

    /// Sets the guidance for the model.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Sets the number of items per list page.
    #[must_use]
    pub fn with_page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size;
        self
    }

    /// Sets the cache hint of lists and `server/discover`.
    #[must_use]
    pub fn with_list_cache(mut self, list_cache: CacheHint) -> Self {
        self.list_cache = list_cache;
        self
    }

    /// Sets whether `logging` is advertised.
    #[must_use]
    pub fn with_logging(mut self, logging: bool) -> Self {
        self.logging = logging;
        self
    }
}

/// A validated, indexed catalog. Built once; read by every request.
#[derive(Debug)]
pub struct Catalog {
    pub(crate) server_info: Arc<Implementation>,
    /// `ResultMeta::server(server_info)` encoded once: every result's `_meta`.
    server_meta: Box<str>,
    pub(crate) tools: Vec<ToolEntry>,
    pub(crate) tool_index: foldhash::HashMap<String, usize>,
    pub(crate) resources: Vec<ResourceEntry>,
    pub(crate) resource_index: foldhash::HashMap<String, usize>,
    pub(crate) templates: Vec<(TemplateEntry, UriTemplate)>,
    pub(crate) prompts: Vec<PromptEntry>,
    pub(crate) prompt_index: foldhash::HashMap<String, usize>,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) discover_result: Box<str>,
    pub(crate) pages: HashMap<Kind, Vec<Box<str>>>,
    /// The same pages in the dated revisions' shape, made when a dated
    /// client first lists (see [`Catalog::legacy_pages`]).
    legacy_pages: OnceLock<HashMap<Kind, Vec<Box<str>>>>,
    /// The guidance `server/discover` and `initialize` give the model.
    pub(crate) instructions: Option<String>,
    pub(crate) page_size: usize,
    /// The fingerprint in cursors (see [`Catalog::fingerprint`]).
    fingerprint: OnceLock<String>,
    pub(crate) list_cache: CacheHint,
    digests: Digests,
}

/// The digest of every declaration, each computed when it is first asked
/// for (a receipt, a lock file): hashing every declaration was a third of a
/// server's work before its first answer. Each list is in declaration order,
/// like the catalog's.
#[derive(Debug)]
struct Digests {
    tools: Vec<OnceLock<DeclarationDigest>>,
    resources: Vec<OnceLock<DeclarationDigest>>,
    templates: Vec<OnceLock<DeclarationDigest>>,
    prompts: Vec<OnceLock<DeclarationDigest>>,
}

impl Catalog {
    /// Validates every declaration and builds the catalog, or returns every
    /// refusal found.
    pub fn build(
        options: CatalogOptions,
        tools: Vec<ToolEntry>,
        resources: Vec<ResourceEntry>,
        templates: Vec<TemplateEntry>,
        prompts: Vec<PromptEntry>,
    ) -> Result<Catalog, CatalogErrors> {
        let mut errors = Vec::new();
        let mut tools = tools;
        for entry in &mut tools {
            check_tool(entry, &mut errors);
        }
        for entry in &resources {
            check_resource(entry, &mut errors);
        }
        let mut parsed_templates = Vec::with_capacity(templates.len());
        for entry in templates {
            if let Some(parsed) = check_template(&entry, &mut errors) {
                parsed_templates.push((entry, parsed));
            }
        }
        for entry in &prompts {
            check_prompt(entry, &mut errors);
        }
        let tool_index = index(Kind::Tool, tools.iter().map(|t| &t.tool.name), &mut errors);
        let resource_index = index(
            Kind::Resource,
            resources.iter().map(|r| &r.resource.uri),
            &mut errors,
        );
        index(
            Kind::ResourceTemplate,
            parsed_templates
                .iter()
                .map(|(t, _)| &t.template.uri_template),
            &mut errors,
        );
        let prompt_index = index(
            Kind::Prompt,
            prompts.iter().map(|p| &p.prompt.name),
            &mut errors,
        );
        if !errors.is_empty() {
            return Err(CatalogErrors(errors));
        }

        let server_info = Arc::new(options.server_info);
        let completable = prompts.iter().any(|p| p.completable)
            || parsed_templates.iter().any(|(t, _)| t.completable);
        let capabilities = ServerCapabilities {
            tools: (!tools.is_empty()).then(ListChangedCapability::default),
            prompts: (!prompts.is_empty()).then(ListChangedCapability::default),
            // Updates of any resource can be published, so subscriptions are
            // offered whenever there are resources; the lists themselves are fixed.
            resources: (!resources.is_empty() || !parsed_templates.is_empty()).then_some(
                ResourcesCapability {
                    subscribe: Some(true),
                    list_changed: None,
                },
            ),
            completions: completable.then(Default::default),
            logging: options.logging.then(Default::default),
            extensions: (!options.extensions.is_empty()).then(|| options.extensions.clone()),
            ..Default::default()
        };
        let page_size = options.page_size.max(1);
        // The fingerprint (a hash of every declaration's JSON) is only in
        // cursors: made when the first one is (a list with a second page) or
        // read (a tenth of a small server's start-up otherwise).
        let fingerprint = OnceLock::new();
        let meta = ResultMeta::server(server_info.clone());
        let cache = options.list_cache;
        let discover = DiscoverResult {
            result_type: ResultType::Complete,
            supported_versions: SUPPORTED_VERSIONS.iter().map(|v| (*v).to_owned()).collect(),
            capabilities: capabilities.clone(),
            instructions: options.instructions.clone(),
            ttl_ms: cache.ttl_ms,
            cache_scope: cache.scope,
            meta: meta.clone(),
        };
        let page_ctx = PageContext {
            page_size,
            fingerprint: &fingerprint,
            make_fingerprint: &|| {
                catalog_fingerprint(&tools, &resources, &parsed_templates, &prompts)
            },
            cache,
            meta: &meta,
        };
        let pages = page_ctx.all_pages(
            tools.iter().map(|t| &t.tool),
            resources.iter().map(|r| &r.resource),
            parsed_templates.iter().map(|(t, _)| &t.template),
            prompts.iter().map(|p| &p.prompt),
        );
        let unset = |count: usize| (0..count).map(|_| OnceLock::new()).collect();
        let digests = Digests {
            tools: unset(tools.len()),
            resources: unset(resources.len()),
            templates: unset(parsed_templates.len()),
            prompts: unset(prompts.len()),
        };
        Ok(Catalog {
            server_meta: to_json(&meta),
            server_info,
            tools,
            tool_index,
            resources,
            resource_index,
            templates: parsed_templates,
            prompts,
            prompt_index,
            capabilities,
            discover_result: to_json(&discover),
            legacy_pages: OnceLock::new(),
            instructions: options.instructions,
            pages,
            page_size,
            fingerprint,
            list_cache: cache,
            digests,
        })
    }

    /// The cache hint of the lists and `server/discover`.
    pub fn list_cache(&self) -> CacheHint {
        self.list_cache
    }

    /// The server's identity.
    pub fn server_info(&self) -> &Arc<Implementation> {
        &self.server_info
    }

    /// The `_meta` of a result that names the server and nothing else,
    /// encoded once as JSON: what [`ResultMeta::server`] with
    /// [`Catalog::server_info`] serializes as, for
    /// [`encode::result_with_meta`](crate::encode::result_with_meta).
    pub fn server_meta_json(&self) -> &str {
        &self.server_meta
    }

    /// The capabilities `server/discover` announces.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.capabilities
    }

    /// The tools, in declaration order.
    pub fn tools(&self) -> &[ToolEntry] {
        &self.tools
    }

    /// The static resources, in declaration order.
    pub fn resources(&self) -> &[ResourceEntry] {
        &self.resources
    }

    /// The resource templates, in declaration order.
    pub fn templates(&self) -> impl ExactSizeIterator<Item = &TemplateEntry> {
        self.templates.iter().map(|(t, _)| t)
    }

    /// The resource template at `index` (as in [`Catalog::templates`]).
    ///
    /// # Panics
    ///
    /// When `index` is out of range.
    pub fn template(&self, index: usize) -> &TemplateEntry {
        &self.templates[index].0
    }

    /// The prompts, in declaration order.
    pub fn prompts(&self) -> &[PromptEntry] {
        &self.prompts
    }

    /// The digest of the tool at `index` (as in [`Catalog::tools`]), computed
    /// when first asked for (see [`crate::digest`]).
    ///
    /// # Panics
    ///
    /// When `index` is out of range.
    pub fn tool_digest(&self, index: usize) -> &DeclarationDigest {
        self.digests.tools[index].get_or_init(|| self.tools[index].tool.declaration_digest())
    }

    /// The digest of the static resource at `index` (as in [`Catalog::resources`]).
    ///
    /// # Panics
    ///
    /// When `index` is out of range.
    pub fn resource_digest(&self, index: usize) -> &DeclarationDigest {
        self.digests.resources[index]
            .get_or_init(|| self.resources[index].resource.declaration_digest())
    }

    /// The digest of the resource template at `index` (as in [`Catalog::templates`]).
    ///
    /// # Panics
    ///
    /// When `index` is out of range.
    pub fn template_digest(&self, index: usize) -> &DeclarationDigest {
        self.digests.templates[index]
            .get_or_init(|| self.templates[index].0.template.declaration_digest())
    }

    /// The digest of the prompt at `index` (as in [`Catalog::prompts`]).
    ///
    /// # Panics
    ///
    /// When `index` is out of range.
    pub fn prompt_digest(&self, index: usize) -> &DeclarationDigest {
        self.digests.prompts[index].get_or_init(|| self.prompts[index].prompt.declaration_digest())
    }

    /// The index of a tool by wire name.
    pub fn tool_index(&self, name: &str) -> Option<usize> {
        self.tool_index.get(name).copied()
    }

    /// True when `resources/read` of `uri` would find a declaration (a static
    /// resource or a template match).
    pub fn serves_uri(&self, uri: &str) -> bool {
        self.resource_index.contains_key(uri)
            || self.templates.iter().any(|(_, t)| t.matches(uri).is_some())
    }

    /// The index of a prompt by wire name.
    pub fn prompt_index(&self, name: &str) -> Option<usize> {
        self.prompt_index.get(name).copied()
    }

    /// The pages in the dated revisions' shape, made when a dated client
    /// first lists: a server that serves none never pays for them, and none
    /// delays its start.
    pub(crate) fn legacy_pages(&self) -> &HashMap<Kind, Vec<Box<str>>> {
        self.legacy_pages.get_or_init(|| legacy_pages(&self.pages))
    }

    /// The page a cursor points at, or `None` for a cursor this catalog did not issue.
    pub(crate) fn page_for_cursor(&self, kind: Kind, cursor: &str) -> Option<usize> {
        page_for_cursor(
            &self.pages,
            self.page_size,
            self.fingerprint(),
            kind,
            cursor,
        )
    }

    /// The fingerprint in this catalog's cursors, computed when first needed.
    fn fingerprint(&self) -> &str {
        self.fingerprint.get_or_init(|| {
            catalog_fingerprint(&self.tools, &self.resources, &self.templates, &self.prompts)
        })
    }

    /// The lists of the declarations `visible` keeps (called with each kind
    /// and index), pre-serialized like the catalog's own, with their own
    /// cursors and this cache hint: what one caller may use, say.
    pub fn view(&self, visible: impl Fn(Kind, usize) -> bool, cache: CacheHint) -> ListView {
        let mut hasher = Sha256::new();
        hasher.update(self.fingerprint().as_bytes());
        let mut keep = |kind: Kind, count: usize| -> Vec<usize> {
            let kept: Vec<usize> = (0..count).filter(|&i| visible(kind, i)).collect();
            for i in &kept {
                hasher.update(format!("{}:{i};", kind.cursor_tag()));
            }
            kept
        };
        let tools = keep(Kind::Tool, self.tools.len());
        let resources = keep(Kind::Resource, self.resources.len());
        let templates = keep(Kind::ResourceTemplate, self.templates.len());
        let prompts = keep(Kind::Prompt, self.prompts.len());
        let digest = hasher.finalize();
        let fingerprint: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        let meta = ResultMeta::server(self.server_info.clone());
        // The view's cursors carry its own fingerprint.
        let in_cursors = OnceLock::new();
        let page_ctx = PageContext {
            page_size: self.page_size,
            fingerprint: &in_cursors,
            make_fingerprint: &|| fingerprint.clone(),
            cache,
            meta: &meta,
        };
        let pages = page_ctx.all_pages(
            tools.iter().map(|&i| &self.tools[i].tool),
            resources.iter().map(|&i| &self.resources[i].resource),
            templates.iter().map(|&i| &self.templates[i].0.template),
            prompts.iter().map(|&i| &self.prompts[i].prompt),
        );
        ListView {
            legacy_pages: OnceLock::new(),
            pages,
            page_size: self.page_size,
            fingerprint,
        }
    }
}

/// Lists restricted to part of a catalog (see [`Catalog::view`]); the router
/// answers list requests from it when [`RouteContext::lists`](crate::RouteContext::lists)
/// carries one.
#[derive(Debug)]
pub struct ListView {
    pub(crate) pages: HashMap<Kind, Vec<Box<str>>>,
    legacy_pages: OnceLock<HashMap<Kind, Vec<Box<str>>>>,
    page_size: usize,
    fingerprint: String,
}

impl ListView {
    /// The pages in the dated revisions' shape, made on first use.
    pub(crate) fn legacy_pages(&self) -> &HashMap<Kind, Vec<Box<str>>> {
        self.legacy_pages.get_or_init(|| legacy_pages(&self.pages))
    }

    pub(crate) fn page_for_cursor(&self, kind: Kind, cursor: &str) -> Option<usize> {
        page_for_cursor(&self.pages, self.page_size, &self.fingerprint, kind, cursor)
    }
}

fn page_for_cursor(
    pages: &HashMap<Kind, Vec<Box<str>>>,
    page_size: usize,
    fingerprint: &str,
    kind: Kind,
    cursor: &str,
) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let mut fields = text.splitn(3, ':');
    let (tag, offset, print) = (fields.next()?, fields.next()?, fields.next()?);
    if tag != kind.cursor_tag() || print != fingerprint {
        return None;
    }
    let offset: usize = offset.parse().ok()?;
    let pages = pages.get(&kind)?;
    (offset.is_multiple_of(page_size) && offset / page_size < pages.len())
        .then_some(offset / page_size)
}

fn make_cursor(kind: Kind, offset: usize, fingerprint: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{}:{offset}:{fingerprint}", kind.cursor_tag()))
}

struct PageContext<'a> {
    page_size: usize,
    /// The fingerprint in cursors, made by `make_fingerprint` when the first
    /// cursor is.
    fingerprint: &'a OnceLock<String>,
    make_fingerprint: &'a dyn Fn() -> String,
    cache: CacheHint,
    meta: &'a ResultMeta,
}

impl PageContext<'_> {
    fn fingerprint(&self) -> &str {
        self.fingerprint.get_or_init(self.make_fingerprint)
    }

    /// The pages of the four lists.
    fn all_pages<'i>(
        &self,
        tools: impl Iterator<Item = &'i Tool>,
        resources: impl Iterator<Item = &'i Resource>,
        templates: impl Iterator<Item = &'i ResourceTemplate>,
        prompts: impl Iterator<Item = &'i Prompt>,
    ) -> HashMap<Kind, Vec<Box<str>>> {
        HashMap::from([
            (Kind::Tool, self.paginate(Kind::Tool, "tools", tools)),
            (
                Kind::Resource,
                self.paginate(Kind::Resource, "resources", resources),
            ),
            (
                Kind::ResourceTemplate,
                self.paginate(Kind::ResourceTemplate, "resourceTemplates", templates),
            ),
            (
                Kind::Prompt,
                self.paginate(Kind::Prompt, "prompts", prompts),
            ),
        ])
    }

    /// Serializes every page of a list result ahead of time. An empty list is one
    /// empty page.
    fn paginate<'i, T: Serialize + 'i>(
        &self,
        kind: Kind,
        field: &'static str,
        items: impl Iterator<Item = &'i T>,
    ) -> Vec<Box<str>> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Page<'a, T> {
            result_type: ResultType,
            #[serde(skip)]
            field: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            next_cursor: Option<String>,
            ttl_ms: u64,
            cache_scope: CacheScope,
            #[serde(rename = "_meta")]
            meta: &'a ResultMeta,
            #[serde(skip)]
            items: &'a [&'a T],
        }
        let items: Vec<&T> = items.collect();
        let chunks: Vec<&[&T]> = if items.is_empty() {
            vec![&[]]
        } else {
            items.chunks(self.page_size).collect()
        };
        let count = chunks.len();
        chunks
            .into_iter()
            .enumerate()
            .map(|(i, chunk)| {
                let next_cursor = (i + 1 < count)
                    .then(|| make_cursor(kind, (i + 1) * self.page_size, self.fingerprint()));
                let page = Page {
                    result_type: ResultType::Complete,
                    field,
                    next_cursor,
                    ttl_ms: self.cache.ttl_ms,
                    cache_scope: self.cache.scope,
                    meta: self.meta,
                    items: chunk,
                };
                // Serialize the fixed members, then splice the items array in as the
                // first member under its wire name.
                let rest = serde_json::to_string(&page).expect("list pages serialize");
                let items = serde_json::to_string(page.items).expect("descriptors serialize");
                format!("{{\"{}\":{},{}", page.field, items, &rest[1..]).into_boxed_str()
            })
            .collect()
    }
}

/// Every page in the dated revisions' shape.
fn legacy_pages(pages: &HashMap<Kind, Vec<Box<str>>>) -> HashMap<Kind, Vec<Box<str>>> {
    pages
        .iter()
        .map(|(kind, pages)| {
            let legacy = pages.iter().map(|p| crate::legacy::downgrade_page(p));
            (*kind, legacy.collect())
        })
        .collect()
}

fn to_json<T: Serialize>(value: &T) -> Box<str> {
    serde_json::to_string(value)
        .expect("wire types serialize")
        .into_boxed_str()
}

fn catalog_fingerprint(
    tools: &[ToolEntry],
    resources: &[ResourceEntry],
    templates: &[(TemplateEntry, UriTemplate)],
    prompts: &[PromptEntry],
) -> String {
    let mut hasher = Sha256::new();
    for t in tools {
        hasher.update(serde_json::to_vec(&t.tool).unwrap_or_default());
    }
    for r in resources {
        hasher.update(serde_json::to_vec(&r.resource).unwrap_or_default());
    }
    for (t, _) in templates {
        hasher.update(serde_json::to_vec(&t.template).unwrap_or_default());
    }
    for p in prompts {
        hasher.update(serde_json::to_vec(&p.prompt).unwrap_or_default());
    }
    let digest = hasher.finalize();
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

fn index<'a>(
    kind: Kind,
    names: impl Iterator<Item = &'a String>,
    errors: &mut Vec<CatalogError>,
) -> foldhash::HashMap<String, usize> {
    let mut map = foldhash::HashMap::default();
    let mut reported = HashSet::new();
    for (i, name) in names.enumerate() {
        if map.insert(name.clone(), i).is_some() && reported.insert(name.clone()) {
            errors.push(CatalogError::Duplicate {
                kind,
                name: name.clone(),
            });
        }
    }
    map
}

/// True for a tool name the spec allows: `[A-Za-z0-9_.-]{1,128}`. The same
/// rule `#[tool]` applies at compile time (both come from `typed-mcp-syntax`).
pub use typed_mcp_syntax::is_valid_tool_name;

fn missing(text: &Option<String>) -> bool {
    text.as_deref().is_none_or(|t| t.trim().is_empty())
}

fn check_tool(entry: &mut ToolEntry, errors: &mut Vec<CatalogError>) {
    let tool = &entry.tool;
    let name = tool.name.clone();
    if !is_valid_tool_name(&name) {
        errors.push(CatalogError::InvalidToolName { name: name.clone() });
    }
    if missing(&tool.description) {
        errors.push(CatalogError::MissingDescription {
            kind: Kind::Tool,
            name: name.clone(),
        });
    }
    let Some(schema) = tool.input_schema.as_object() else {
        errors.push(CatalogError::InputSchemaNotObject { name });
        return;
    };
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        errors.push(CatalogError::InputSchemaNotObject { name: name.clone() });
    }
    if let Some(output) = &tool.output_schema
        && !(output.is_object() || output.is_boolean())
    {
        errors.push(CatalogError::OutputSchemaInvalid { name: name.clone() });
    }
    if !entry.allow_undocumented_inputs
        && let Some(props) = schema.get("properties").and_then(Value::as_object)
    {
        for (input, prop) in props {
            let documented = prop
                .get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| !d.trim().is_empty());
            if !documented {
                errors.push(CatalogError::MissingInputDescription {
                    kind: Kind::Tool,
                    name: name.clone(),
                    input: input.clone(),
                });
            }
        }
    }
    let mut bytes = Vec::new();
    find_bytes_inputs(
        &tool.input_schema,
        &tool.input_schema,
        &mut Vec::new(),
        &mut Vec::new(),
        &mut bytes,
    );
    for path in bytes {
        errors.push(CatalogError::BytesInput {
            name: name.clone(),
            path,
        });
    }
    let mut header_params = Vec::new();
    collect_header_params(
        &name,
        &tool.input_schema,
        &mut Vec::new(),
        &mut header_params,
        errors,
    );
    let mut seen = HashSet::new();
    for p in &header_params {
        if !seen.insert(p.name.to_ascii_lowercase()) {
            errors.push(CatalogError::InvalidHeaderParam {
                name: name.clone(),
                path: p.path.join("."),
                reason: format!("header name {:?} is used twice", p.name),
            });
        }
    }
    entry.header_params = header_params;
}

/// The local `$ref` target of `schema`, if it has one.
fn ref_target<'a>(root: &'a Value, schema: &Value) -> Option<(&'a Value, String)> {
    let reference = schema.get("$ref")?.as_str()?;
    let pointer = reference.strip_prefix('#')?;
    Some((root.pointer(pointer)?, pointer.to_owned()))
}

/// True when `schema` is an array of `uint8` (schemars' schema of `Vec<u8>`).
fn is_byte_array(root: &Value, schema: &Value) -> bool {
    let Some(items) = schema.get("items") else {
        return false;
    };
    let items = ref_target(root, items).map_or(items, |(target, _)| target);
    schema.get("type").and_then(Value::as_str) == Some("array")
        && items.get("format").and_then(Value::as_str) == Some("uint8")
}

/// Adds the readable path of every bytes input under `schema` to `out`,
/// following `properties`, map values (`name.*`), array items (`name[]`),
/// unions and local `$ref`s (each at most once on a path, so a recursive
/// type ends).
fn find_bytes_inputs(
    root: &Value,
    schema: &Value,
    path: &mut Vec<String>,
    refs: &mut Vec<String>,
    out: &mut Vec<String>,
) {
    if is_byte_array(root, schema) {
        let at = path.join(".").replace(".[]", "[]");
        if !out.contains(&at) {
            out.push(at);
        }
        return;
    }
    if let Some((target, pointer)) = ref_target(root, schema)
        && !refs.contains(&pointer)
    {
        refs.push(pointer);
        find_bytes_inputs(root, target, path, refs, out);
        refs.pop();
    }
    for keyword in ["anyOf", "oneOf", "allOf"] {
        for branch in schema
            .get(keyword)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            find_bytes_inputs(root, branch, path, refs, out);
        }
    }
    let mut nested = |key: String, sub: &Value, out: &mut Vec<String>| {
        path.push(key);
        find_bytes_inputs(root, sub, path, refs, out);
        path.pop();
    };
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (key, prop) in props {
            nested(key.clone(), prop, out);
        }
    }
    if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        nested("*".into(), values, out);
    }
    if let Some(items) = schema.get("items").filter(|v| v.is_object()) {
        nested("[]".into(), items, out);
    }
    for item in schema
        .get("prefixItems")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        nested("[]".into(), item, out);
    }
}

/// Finds `x-mcp-header` annotations reachable from the root through `properties`
/// alone, and flags ones placed where the spec forbids them.
fn collect_header_params(
    tool: &str,
    schema: &Value,
    path: &mut Vec<String>,
    out: &mut Vec<HeaderParam>,
    errors: &mut Vec<CatalogError>,
) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, prop) in props {
        path.push(key.clone());
        if let Some(header) = prop.get("x-mcp-header") {
            let json_type = prop.get("type").and_then(Value::as_str).unwrap_or("");
            let reason = match header.as_str() {
                None => Some("the value must be a string".to_owned()),
                Some(h) if h.is_empty() || !h.bytes().all(is_tchar) => {
                    Some(format!("{h:?} is not an HTTP header token"))
                }
                Some(_) if !matches!(json_type, "string" | "integer" | "boolean") => Some(format!(
                    "only string, integer and boolean properties may be headers, found {json_type:?}"
                )),
                Some(_) => None,
            };
            match reason {
                Some(reason) => errors.push(CatalogError::InvalidHeaderParam {
                    name: tool.to_owned(),
                    path: path.join("."),
                    reason,
                }),
                None => out.push(HeaderParam {
                    name: header.as_str().unwrap_or_default().to_owned(),
                    path: path.clone(),
                    json_type: json_type.to_owned(),
                }),
            }
        }
        collect_header_params(tool, prop, path, out, errors);
        path.pop();
    }
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn check_resource(entry: &ResourceEntry, errors: &mut Vec<CatalogError>) {
    let r = &entry.resource;
    if missing(&r.description) {
        errors.push(CatalogError::MissingDescription {
            kind: Kind::Resource,
            name: r.name.clone(),
        });
    }
    if !is_absolute_uri(&r.uri) {
        errors.push(CatalogError::InvalidResourceUri {
            name: r.name.clone(),
            uri: r.uri.clone(),
        });
    }
}

/// True when `uri` starts with an RFC 3986 scheme followed by `:`.
pub fn is_absolute_uri(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut bytes = scheme.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        && !uri.chars().any(char::is_whitespace)
}

fn check_template(entry: &TemplateEntry, errors: &mut Vec<CatalogError>) -> Option<UriTemplate> {
    let t = &entry.template;
    if missing(&t.description) {
        errors.push(CatalogError::MissingDescription {
            kind: Kind::ResourceTemplate,
            name: t.name.clone(),
        });
    }
    for p in &entry.parameters {
        if missing(&p.description) {
            errors.push(CatalogError::MissingInputDescription {
                kind: Kind::ResourceTemplate,
                name: t.name.clone(),
                input: p.name.clone(),
            });
        }
    }
    let parsed = match UriTemplate::parse(&t.uri_template) {
        Ok(parsed) => parsed,
        Err(error) => {
            errors.push(CatalogError::InvalidUriTemplate {
                name: t.name.clone(),
                error,
            });
            return None;
        }
    };
    for var in parsed.variables() {
        if !entry.parameters.iter().any(|p| p.name == var) {
            errors.push(CatalogError::TemplateVariableNotParameter {
                name: t.name.clone(),
                variable: var.to_owned(),
            });
        }
    }
    for p in &entry.parameters {
        if !parsed.variables().any(|v| v == p.name) {
            errors.push(CatalogError::ParameterNotInTemplate {
                name: t.name.clone(),
                parameter: p.name.clone(),
            });
        }
    }
    Some(parsed)
}

fn check_prompt(entry: &PromptEntry, errors: &mut Vec<CatalogError>) {
    let p = &entry.prompt;
    if missing(&p.description) {
        errors.push(CatalogError::MissingDescription {
            kind: Kind::Prompt,
            name: p.name.clone(),
        });
    }
    for arg in p.arguments.iter().flatten() {
        if missing(&arg.description) {
            errors.push(CatalogError::MissingInputDescription {
                kind: Kind::Prompt,
                name: p.name.clone(),
                input: arg.name.clone(),
            });
        }
    }
    for (argument, schema) in &entry.argument_schemas {
        if !is_string_schema(schema) {
            errors.push(CatalogError::PromptArgumentNotString {
                name: p.name.clone(),
                argument: argument.clone(),
                found: schema.to_string(),
            });
        }
    }
}

/// True for `{"type": "string"}` or a nullable string (`["string", "null"]`,
/// or typed-mcp's spelling `{"anyOf": [{"type": "string"}, {"type": "null"}]}`).
pub fn is_string_schema(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(types)) => {
            types.iter().any(|t| t == "string")
                && types.iter().all(|t| t == "string" || t == "null")
        }
        None => match schema.get("anyOf").and_then(Value::as_array) {
            Some(branches) => {
                let types: Vec<Option<&str>> = branches
                    .iter()
                    .map(|b| b.get("type").and_then(Value::as_str))
                    .collect();
                types.contains(&Some("string"))
                    && types.iter().all(|t| matches!(t, Some("string" | "null")))
            }
            None => false,
        },
        _ => false,
    }
}

/// The descriptor-level argument list of a prompt, for the router's
/// required-argument check.
pub(crate) fn required_prompt_arguments(prompt: &Prompt) -> impl Iterator<Item = &PromptArgument> {
    prompt
        .arguments
        .iter()
        .flatten()
        .filter(|a| a.required == Some(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Tools `t0`, `t1`, ... with an open object schema.
    fn numbered_tools(count: usize) -> Vec<ToolEntry> {
        (0..count)
            .map(|i| {
                ToolEntry::new(
                    Tool::new(format!("t{i}"), json!({"type": "object"}))
                        .with_description("A tool."),
                )
            })
            .collect()
    }

    #[test]
    fn the_cursor_fingerprint_is_made_when_a_cursor_is_and_is_the_same_made_late() {
        let catalog = |page_size: usize| {
            let tools = numbered_tools(3);
            let options =
                CatalogOptions::new(Implementation::new("fp", "1")).with_page_size(page_size);
            Catalog::build(options, tools, vec![], vec![], vec![]).unwrap()
        };
        // Two pages: the first page's cursor needed it at build.
        let paged = catalog(2);
        assert!(paged.fingerprint.get().is_some());
        // One page: no cursor, no fingerprint until one is read.
        let single = catalog(100);
        assert!(single.fingerprint.get().is_none());
        assert_eq!(single.page_for_cursor(Kind::Tool, "not a cursor"), None);
        assert_eq!(single.fingerprint.get(), paged.fingerprint.get());
        // The paged catalog's own cursor is accepted, and names page 1.
        let cursor = make_cursor(Kind::Tool, 2, paged.fingerprint());
        assert_eq!(paged.page_for_cursor(Kind::Tool, &cursor), Some(1));
    }

    /// A restricted view's pages carry cursors with the view's own
    /// fingerprint: the view takes them back, and a cursor of the whole
    /// catalog (other lists, other offsets) is not one of the view's.
    #[test]
    fn a_view_pages_with_its_own_fingerprint() {
        let tools = numbered_tools(5);
        let options = CatalogOptions::new(Implementation::new("fp", "1")).with_page_size(2);
        let catalog = Catalog::build(options, tools, vec![], vec![], vec![]).unwrap();
        let view = catalog.view(|_, i| i != 1, CacheHint::PRIVATE_NOW);
        let pages = &view.pages[&Kind::Tool];
        assert_eq!(pages.len(), 2);
        let first: Value = serde_json::from_str(&pages[0]).unwrap();
        let cursor = first["nextCursor"].as_str().expect("a next cursor");
        assert_eq!(view.page_for_cursor(Kind::Tool, cursor), Some(1));
        assert_eq!(catalog.page_for_cursor(Kind::Tool, cursor), None);
        let whole = make_cursor(Kind::Tool, 2, catalog.fingerprint());
        assert_eq!(view.page_for_cursor(Kind::Tool, &whole), None);
        assert!(!pages[1].contains("nextCursor"));
    }

    #[test]
    fn nullable_strings_are_strings_in_either_spelling() {
        assert!(is_string_schema(&json!({"type": "string"})));
        assert!(is_string_schema(&json!({"type": ["string", "null"]})));
        assert!(is_string_schema(
            &json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
        ));
        assert!(!is_string_schema(
            &json!({"anyOf": [{"type": "integer"}, {"type": "null"}]})
        ));
        assert!(!is_string_schema(&json!({"anyOf": [{"type": "null"}]})));
        assert!(!is_string_schema(
            &json!({"anyOf": [{"type": "string"}, {}]})
        ));
    }

    #[test]
    fn bytes_inputs_are_found_through_refs_maps_and_unions_and_recursion_ends() {
        let bytes = json!({"type": "array", "items": {"type": "integer", "format": "uint8"}});
        let schema = json!({
            "type": "object",
            "properties": {
                "tree": {"$ref": "#/$defs/Node"},
                "blobs": {"type": "object", "additionalProperties": bytes},
                "maybe": {"anyOf": [{"$ref": "#/$defs/Blob"}, {"type": "null"}]},
                "numbers": {"type": "array", "items": {"type": "integer", "format": "uint16"}}
            },
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                        "data": {"type": "array", "items": {"$ref": "#/$defs/Byte"}}
                    }
                },
                "Byte": {"type": "integer", "format": "uint8"},
                "Blob": bytes
            }
        });
        let mut found = Vec::new();
        find_bytes_inputs(
            &schema,
            &schema,
            &mut Vec::new(),
            &mut Vec::new(),
            &mut found,
        );
        // A recursive type is entered once per path: `tree.children[].data`
        // is the same field as `tree.data`, reported once.
        assert_eq!(found, ["tree.data", "blobs.*", "maybe"]);
    }
}
