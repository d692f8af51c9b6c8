//! Authority: the capabilities a declaration needs and the host grants.
//!
//! A model chooses which tool to call, so nothing the model reads — a
//! description, a hint such as `read_only` — may be what lets a call run. A
//! declaration states the [`Capability`]s it needs (`#[tool(caps = [DESK_WRITE])]`
//! or [`ToolBuilder::requires`](crate::declare::ToolBuilder::requires)); the host grants
//! capabilities when it builds the server ([`ServerBuilder::grant`],
//! [`ServerBuilder::allow`], [`ServerBuilder::grant_policy`]). A call runs only
//! when every capability its declaration names is granted; otherwise it is
//! refused before its handler runs, and the refusal leaves a receipt.
//!
//! The capabilities a call declared (all of them granted, or it would not run)
//! are also its ceiling: [`ToolContext::authorize`](crate::ToolContext::authorize)
//! fails for any other capability, even one the host granted. Application state
//! a handler reaches through `&self` is never a grant: if a handler can write to
//! the database, its declaration says so.
//!
//! A grant can be narrowed. A capability declared with a kind of scope —
//! [`Capability::paths`], [`Capability::hosts`], [`Capability::resources`] — is
//! granted for roots, host patterns or resource patterns
//! (`--allow desk.files=/srv/desk`, `net=*.example.com`,
//! `desk.write=ticket:T-10*`, parsed by [`parse_allow_entry`] and
//! [`Scope::parse`]), and the handler reaches them only through handles that
//! check every use against the grant: [`ToolContext::fs`](crate::ToolContext::fs)
//! (feature `fs`), [`ToolContext::net`](crate::ToolContext::net) (feature `net`)
//! and [`ToolContext::authorize_resource`](crate::ToolContext::authorize_resource).
//! A refusal is an [`OutOfScope`] error and a `refused_in_call` receipt; each
//! receipt lists the scopes granted. Code that bypasses the handles (calls
//! `std::fs` directly) is not stopped: see the README for a lint that forbids
//! it in tool modules.
//!
//! [`ServerBuilder::grant`]: crate::ServerBuilder::grant
//! [`ServerBuilder::allow`]: crate::ServerBuilder::allow
//! [`ServerBuilder::grant_policy`]: crate::ServerBuilder::grant_policy

use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::context::Principal;

#[cfg(feature = "fs")]
#[cfg_attr(docsrs, doc(cfg(feature = "fs")))]
pub mod fs;
#[cfg(feature = "net")]
#[cfg_attr(docsrs, doc(cfg(feature = "net")))]
pub mod net;

/// The result `_meta` key listing the capabilities a refused tool call lacked.
pub const MISSING_CAPABILITIES_META_KEY: &str = "rs.typed-mcp/missingCapabilities";

/// The JSON-RPC error code of a refused `resources/read` or `prompts/get`
/// (their results have no error form). Application-defined, so outside the
/// range JSON-RPC and MCP reserve; `data.missingCapabilities` lists the names.
pub const NOT_GRANTED: i32 = -31001;

/// A named authority a declaration needs, declared once by the application:
///
/// ```
/// use typed_mcp::Capability;
///
/// /// Change tickets in the support desk.
/// pub const DESK_WRITE: Capability =
///     Capability::new("desk.write", "Change tickets in the support desk");
/// assert_eq!(DESK_WRITE.name(), "desk.write");
/// ```
///
/// A name is one or more dot-separated segments of lowercase ASCII letters,
/// digits, `_` and `-`, each starting with a letter (`desk.write`,
/// `billing.refund-issue`). A `const` with an invalid name does not compile:
///
/// ```compile_fail
/// const BAD: typed_mcp::Capability = typed_mcp::Capability::new("Desk Write", "Spaces and capitals");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Capability {
    name: &'static str,
    description: &'static str,
    kind: ScopeKind,
}

impl Capability {
    /// A capability with a dotted name and a description for the people who
    /// grant it.
    ///
    /// # Panics
    ///
    /// When the name is not a valid capability name (at compile time in a
    /// `const`).
    pub const fn new(name: &'static str, description: &'static str) -> Self {
        assert!(
            is_valid_name(name),
            "a capability name is dot-separated segments of lowercase letters, digits, `_` and `-`, each starting with a letter (e.g. \"desk.write\")"
        );
        Capability {
            name,
            description,
            kind: ScopeKind::Unscoped,
        }
    }

    /// This capability, granted for filesystem roots (`--allow NAME=/srv/files`):
    /// a handler reaches them through [`ToolContext::fs`](crate::ToolContext::fs),
    /// with at most `access`.
    pub const fn paths(self, access: Access) -> Self {
        Capability {
            kind: ScopeKind::Paths(access),
            ..self
        }
    }

    /// This capability, granted for host patterns (`--allow NAME=api.example.com`,
    /// `*.example.com`): a handler checks each URL with
    /// [`ToolContext::net`](crate::ToolContext::net).
    pub const fn hosts(self) -> Self {
        Capability {
            kind: ScopeKind::Hosts,
            ..self
        }
    }

    /// This capability, granted for named application resources
    /// (`--allow NAME=ticket:T-1001`, `ticket:*`): a handler checks each one
    /// with [`ToolContext::authorize_resource`](crate::ToolContext::authorize_resource).
    pub const fn resources(self) -> Self {
        Capability {
            kind: ScopeKind::Resources,
            ..self
        }
    }

    /// What a grant of this capability may be narrowed to.
    pub const fn kind(&self) -> ScopeKind {
        self.kind
    }

    /// The dotted name, as grants and receipts spell it.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// What the capability allows.
    pub const fn description(&self) -> &'static str {
        self.description
    }
}

impl fmt::Debug for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Capability({})", self.name)
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// Whether `name` is a valid capability name (see [`Capability`]).
pub const fn is_valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() > 128 {
        return false;
    }
    let mut i = 0;
    let mut segment_start = true;
    while i < bytes.len() {
        let b = bytes[i];
        if segment_start {
            if !b.is_ascii_lowercase() {
                return false;
            }
            segment_start = false;
        } else if b == b'.' {
            segment_start = true;
        } else if !(b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-') {
            return false;
        }
        i += 1;
    }
    !segment_start
}

/// Splits an allow list as written on a command line or in an environment
/// variable: items separated by commas and/or whitespace, empty items skipped
/// (`"desk.write, desk.admin"` → `["desk.write", "desk.admin"]`).
pub fn parse_allow_list(list: &str) -> Vec<&str> {
    list.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Extra grants per caller, decided by the host (see
/// [`ServerBuilder::grant_policy`](crate::ServerBuilder::grant_policy)).
pub(crate) type GrantPolicy = Arc<dyn Fn(Option<&Principal>) -> Vec<Grant> + Send + Sync>;

/// What the host granted: capabilities (with their scopes) for every caller,
/// plus an optional policy adding grants per principal.
#[derive(Clone, Default)]
pub(crate) struct Grants {
    /// Granted to every caller, by name.
    pub(crate) everyone: BTreeMap<&'static str, Grant>,
    pub(crate) policy: Option<GrantPolicy>,
}

impl Grants {
    /// Whether what is granted depends on who calls.
    pub(crate) fn per_principal(&self) -> bool {
        self.policy.is_some()
    }

    /// Grants `grant` to every caller, merged with an earlier grant of the
    /// same capability.
    pub(crate) fn add(&mut self, grant: Grant) {
        match self.everyone.get_mut(grant.capability.name) {
            Some(earlier) => earlier.scope.merge(&grant.scope),
            None => {
                self.everyone.insert(grant.capability.name, grant);
            }
        }
    }

    /// A check of whether `principal` holds every capability of a list, for
    /// many lists at once (the policy runs once).
    pub(crate) fn holder(
        &self,
        principal: Option<&Principal>,
    ) -> impl Fn(&[Capability]) -> bool + '_ {
        let extra = self
            .policy
            .as_ref()
            .map(|p| p(principal))
            .unwrap_or_default();
        let credential: Vec<String> = principal
            .and_then(Principal::granted)
            .map(<[String]>::to_vec)
            .unwrap_or_default();
        move |required: &[Capability]| {
            required.iter().all(|c| {
                self.everyone.contains_key(c.name)
                    || extra.iter().any(|e| e.capability.name == c.name)
                    || (matches!(c.kind, ScopeKind::Unscoped)
                        && credential.iter().any(|n| n == c.name))
            })
        }
    }

    /// The capabilities of `required` that are not granted to `principal`, in
    /// declaration order; empty when the call may run.
    #[cfg(test)]
    pub(crate) fn missing(
        &self,
        required: &[Capability],
        principal: Option<&Principal>,
    ) -> Vec<Capability> {
        self.resolve(required, principal).err().unwrap_or_default()
    }

    /// The grants of `required` that `principal` holds, one per capability in
    /// declaration order with its scopes merged; or the capabilities missing.
    /// The policy runs only when a static grant does not already cover
    /// everything, or when a capability is scoped (the policy may widen it).
    pub(crate) fn resolve(
        &self,
        required: &[Capability],
        principal: Option<&Principal>,
    ) -> Result<Vec<Grant>, Vec<Capability>> {
        let needs_policy = required
            .iter()
            .any(|c| !self.everyone.contains_key(c.name) || !matches!(c.kind, ScopeKind::Unscoped));
        let extra = match &self.policy {
            Some(policy) if needs_policy => policy(principal),
            _ => Vec::new(),
        };
        let mut granted = Vec::with_capacity(required.len());
        let mut missing = Vec::new();
        for c in required {
            let mut grant: Option<Grant> = self.everyone.get(c.name).cloned();
            for e in extra.iter().filter(|e| e.capability.name == c.name) {
                match &mut grant {
                    Some(g) => g.scope.merge(&e.scope),
                    None => grant = Some(Grant::scoped(*c, e.scope.clone())),
                }
            }
            if grant.is_none() && credential_may_grant(c) && credential_grants(principal, c) {
                grant = Some(Grant::unscoped(*c));
            }
            match grant {
                Some(mut g) => {
                    // The declaration's capability (and kind) is the one in force.
                    g.capability = *c;
                    granted.push(g);
                }
                None => missing.push(*c),
            }
        }
        if missing.is_empty() {
            Ok(granted)
        } else {
            Err(missing)
        }
    }
}

/// Whether a credential (a token's scopes) may grant `capability` by
/// itself: it grants a capability whole, as `--allow NAME` does, so a plain
/// or resource-scoped one; paths and hosts take the host's grant and scope.
pub fn credential_may_grant(capability: &Capability) -> bool {
    matches!(capability.kind, ScopeKind::Unscoped | ScopeKind::Resources)
}

/// Whether the principal's own credential grants `capability` (see
/// [`Principal::with_granted`]).
fn credential_grants(principal: Option<&Principal>, capability: &Capability) -> bool {
    principal
        .and_then(Principal::granted)
        .is_some_and(|names| names.iter().any(|n| n == capability.name))
}

/// A capability a handler asked for with
/// [`ToolContext::authorize`](crate::ToolContext::authorize) outside its call's
/// scope (the capabilities its declaration names).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the capability {requested} is outside this call's scope ({})",
    scope_text(.scope)
)]
#[non_exhaustive]
pub struct NotAuthorized {
    /// The capability asked for.
    pub requested: Capability,
    /// The call's scope.
    pub scope: Vec<Capability>,
}

fn scope_text(scope: &[Capability]) -> String {
    if scope.is_empty() {
        "no capabilities: the declaration names none, or this is not a call".to_owned()
    } else {
        let names: Vec<&str> = scope.iter().map(|c| c.name).collect();
        format!("declared: {}", names.join(", "))
    }
}

/// What a grant of a capability may be narrowed to, fixed by its declaration
/// ([`Capability::paths`], [`Capability::hosts`], [`Capability::resources`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ScopeKind {
    /// A plain capability: granted or not, nothing to narrow.
    Unscoped,
    /// Filesystem roots, with at most this access.
    Paths(Access),
    /// Host patterns.
    Hosts,
    /// Named application resources.
    Resources,
}

/// What a filesystem grant lets a handler do under its root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Access {
    /// Read files and list directories.
    Read,
    /// Read, and also create, write and remove files and directories.
    ReadWrite,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Read => "read-only",
            Access::ReadWrite => "read-write",
        })
    }
}

/// One item a grant is narrowed to. Displays as an operator writes it after
/// `NAME=` in `--allow`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScopeEntry {
    /// A directory and everything beneath it.
    Root {
        /// The directory, absolute.
        path: PathBuf,
        /// What the grant allows there.
        access: Access,
    },
    /// Hosts a URL may name.
    Host(HostPattern),
    /// Application resources a handler may act on.
    Resource(ResourcePattern),
}

impl fmt::Display for ScopeEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScopeEntry::Root {
                path,
                access: Access::Read,
            } => write!(f, "ro:{}", path.display()),
            ScopeEntry::Root { path, .. } => write!(f, "{}", path.display()),
            ScopeEntry::Host(h) => h.fmt(f),
            ScopeEntry::Resource(r) => r.fmt(f),
        }
    }
}

/// What a grant is narrowed to: roots, host patterns or resource patterns.
/// Empty for an unscoped grant, which means what a grant meant before
/// scopes: the capability, with no list to check against (see
/// [`ToolContext::fs`](crate::ToolContext::fs) and its siblings for what each
/// handle does with an unscoped grant).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    entries: Vec<ScopeEntry>,
}

impl Scope {
    /// The unscoped grant's scope (empty).
    pub fn unscoped() -> Scope {
        Scope::default()
    }

    /// A scope of one root.
    pub fn root(path: impl Into<PathBuf>, access: Access) -> Scope {
        Scope::unscoped().and(ScopeEntry::Root {
            path: path.into(),
            access,
        })
    }

    /// A scope of one host pattern.
    pub fn host(pattern: HostPattern) -> Scope {
        Scope::unscoped().and(ScopeEntry::Host(pattern))
    }

    /// A scope of one resource pattern.
    pub fn resource(pattern: ResourcePattern) -> Scope {
        Scope::unscoped().and(ScopeEntry::Resource(pattern))
    }

    /// This scope and one more entry.
    pub fn and(mut self, entry: ScopeEntry) -> Scope {
        if !self.entries.contains(&entry) {
            self.entries.push(entry);
        }
        self
    }

    /// Parses one scope value of `capability` as written after `NAME=`: an
    /// absolute directory (`/srv/files`, or `ro:/srv/files` for read-only
    /// access) for a [`paths`](Capability::paths) capability, a
    /// [`HostPattern`] for a [`hosts`](Capability::hosts) one, a
    /// [`ResourcePattern`] for a [`resources`](Capability::resources) one.
    pub fn parse(capability: &Capability, value: &str) -> Result<Scope, String> {
        let entry = match capability.kind {
            ScopeKind::Unscoped => {
                return Err(format!(
                    "the capability {} takes no scope (it is declared without one)",
                    capability.name
                ));
            }
            ScopeKind::Paths(declared) => {
                let (access, path) = match value.strip_prefix("ro:") {
                    Some(path) => (Access::Read, path),
                    None => (declared, value),
                };
                let path = Path::new(path);
                if !path.is_absolute() {
                    return Err(format!(
                        "expected an absolute directory (or ro: and one), found {value:?}"
                    ));
                }
                if !path.is_dir() {
                    return Err(format!("{} is not a directory", path.display()));
                }
                ScopeEntry::Root {
                    path: path.to_owned(),
                    access,
                }
            }
            ScopeKind::Hosts => ScopeEntry::Host(HostPattern::parse(value)?),
            ScopeKind::Resources => ScopeEntry::Resource(ResourcePattern::parse(value)?),
        };
        Ok(Scope::unscoped().and(entry))
    }

    /// Whether the grant is unscoped.
    pub fn is_unscoped(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, in the order granted.
    pub fn entries(&self) -> &[ScopeEntry] {
        &self.entries
    }

    /// Adds the entries of `other` (a capability granted twice is granted
    /// the union; a scoped grant beside an unscoped one keeps its scope).
    pub(crate) fn merge(&mut self, other: &Scope) {
        for entry in &other.entries {
            if !self.entries.contains(entry) {
                self.entries.push(entry.clone());
            }
        }
    }

    /// The entries as text, as receipts and refusals show them.
    pub(crate) fn texts(&self) -> Vec<String> {
        self.entries.iter().map(ToString::to_string).collect()
    }
}

/// A capability granted by the host, with the scope it is narrowed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The capability granted.
    pub capability: Capability,
    /// What it is narrowed to (empty: unscoped).
    pub scope: Scope,
}

impl Grant {
    /// The capability, unscoped.
    pub fn unscoped(capability: Capability) -> Grant {
        Grant {
            capability,
            scope: Scope::unscoped(),
        }
    }

    /// The capability narrowed to `scope`.
    pub fn scoped(capability: Capability, scope: Scope) -> Grant {
        Grant { capability, scope }
    }
}

impl From<Capability> for Grant {
    fn from(capability: Capability) -> Grant {
        Grant::unscoped(capability)
    }
}

/// Hosts a URL may name: `api.example.com` (that host), `*.example.com`
/// (any host under it, not `example.com` itself, nor `example.com.evil.net`),
/// an IP literal `10.0.0.5` or `[::1]` (matched only by that same address:
/// a name never matches an IP, nor an IP a name), each optionally with
/// `:PORT` (that port) or `:*` (any port). Without a port only the URL
/// scheme's default port (80, 443) matches. Names are ASCII, compared
/// case-insensitively; write an internationalised name in its `xn--` form.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HostPattern {
    host: HostMatch,
    port: PortMatch,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum HostMatch {
    Name(String),
    /// The domain under which any host matches (without the `*.`).
    Under(String),
    Ip(IpAddr),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum PortMatch {
    Default,
    Exact(u16),
    Any,
}

/// What a URL names, as a host pattern compares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostRef<'a> {
    /// A name, lowercase ASCII (punycode for an internationalised name).
    Name(&'a str),
    /// An IP literal.
    Ip(IpAddr),
}

impl HostPattern {
    /// Parses a pattern (see [`HostPattern`]).
    pub fn parse(text: &str) -> Result<HostPattern, String> {
        let bad = |why: &str| format!("{text:?} is not a host pattern: {why}");
        if let Some((_, rest)) = text.split_once("://") {
            // A URL pasted where a host belongs: name the host it holds.
            let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
            return Err(bad(&format!(
                "expected a host, `host:port` or `*.suffix`, not a URL (write {host:?})"
            )));
        }
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (ip, after) = rest
                .split_once(']')
                .ok_or_else(|| bad("an IPv6 literal needs its closing `]`"))?;
            let ip: Ipv6Addr = ip.parse().map_err(|_| bad("not an IPv6 address"))?;
            let port = match after {
                "" => None,
                p => Some(
                    p.strip_prefix(':')
                        .ok_or_else(|| bad("expected `:PORT` after `]`"))?,
                ),
            };
            (HostMatch::Ip(IpAddr::V6(ip)), port)
        } else {
            let (host, port) = match text.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (text, None),
            };
            let host = host.to_ascii_lowercase();
            let host = host.strip_suffix('.').unwrap_or(&host);
            let matched = if let Ok(ip) = host.parse::<Ipv4Addr>() {
                HostMatch::Ip(IpAddr::V4(ip))
            } else if let Some(domain) = host.strip_prefix("*.") {
                check_name(domain).map_err(|why| bad(&why))?;
                HostMatch::Under(domain.to_owned())
            } else {
                check_name(host).map_err(|why| bad(&why))?;
                HostMatch::Name(host.to_owned())
            };
            (matched, port)
        };
        let port = match port {
            None => PortMatch::Default,
            Some("*") => PortMatch::Any,
            Some(p) => PortMatch::Exact(
                p.parse()
                    .ok()
                    .filter(|p| *p != 0)
                    .ok_or_else(|| bad("the port is not a number from 1 to 65535, or `*`"))?,
            ),
        };
        Ok(HostPattern { host, port })
    }

    /// Whether a URL's host and port match: `port` is the URL's port,
    /// `default_port` its scheme's.
    pub fn matches(&self, host: HostRef<'_>, port: u16, default_port: u16) -> bool {
        let port_ok = match self.port {
            PortMatch::Default => port == default_port,
            PortMatch::Exact(p) => port == p,
            PortMatch::Any => true,
        };
        let host_ok = match (&self.host, host) {
            (HostMatch::Ip(ip), HostRef::Ip(asked)) => *ip == asked,
            (HostMatch::Name(name), HostRef::Name(asked)) => {
                name.eq_ignore_ascii_case(asked.strip_suffix('.').unwrap_or(asked))
            }
            (HostMatch::Under(domain), HostRef::Name(asked)) => {
                let asked = asked.strip_suffix('.').unwrap_or(asked);
                asked.len() > domain.len() + 1
                    && asked.as_bytes()[asked.len() - domain.len() - 1] == b'.'
                    && asked[asked.len() - domain.len()..].eq_ignore_ascii_case(domain)
            }
            _ => false,
        };
        port_ok && host_ok
    }
}

/// A DNS name as patterns accept it: dot-separated labels of ASCII letters,
/// digits, `-` and `_`, none empty or over 63 bytes nor starting or ending
/// with `-`, and a last label that is
/// not all digits (which would be an IP address written another way).
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 253 {
        return Err("expected a host name of 1 to 253 characters".into());
    }
    for label in name.split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err("a label is empty or longer than 63 characters".into());
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err("a label starts or ends with `-`".into());
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(
                "only ASCII letters, digits, `-` and `_` (and a leading `*.`) may appear; write an internationalised name in its xn-- form".into(),
            );
        }
    }
    if name
        .rsplit('.')
        .next()
        .is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err("the last label is a number: write an IP address as such".into());
    }
    Ok(())
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostMatch::Name(n) => f.write_str(n)?,
            HostMatch::Under(d) => write!(f, "*.{d}")?,
            HostMatch::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]")?,
            HostMatch::Ip(ip) => write!(f, "{ip}")?,
        }
        match self.port {
            PortMatch::Default => Ok(()),
            PortMatch::Exact(p) => write!(f, ":{p}"),
            PortMatch::Any => f.write_str(":*"),
        }
    }
}

/// Application resources a handler may act on: an exact id (`ticket:T-1001`)
/// or a prefix ending in `*` (`ticket:*`, `ticket:T-10*`); `*` alone is every
/// resource. An id is compared byte for byte (case matters). Neither may
/// hold whitespace or `,`, and `*` may appear only at the end.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResourcePattern {
    text: String,
}

impl ResourcePattern {
    /// Parses a pattern (see [`ResourcePattern`]).
    pub fn parse(text: &str) -> Result<ResourcePattern, String> {
        let bad = |why: &str| format!("{text:?} is not a resource pattern: {why}");
        if text.is_empty() || text.len() > 256 {
            return Err(bad("expected 1 to 256 characters"));
        }
        if text
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == ',')
        {
            return Err(bad("whitespace, control characters and `,` may not appear"));
        }
        if text.strip_suffix('*').unwrap_or(text).contains('*') {
            return Err(bad("`*` may appear only once, at the end"));
        }
        Ok(ResourcePattern {
            text: text.to_owned(),
        })
    }

    /// Whether `id` matches.
    pub fn matches(&self, id: &str) -> bool {
        match self.text.strip_suffix('*') {
            Some(prefix) => id.starts_with(prefix),
            None => id == self.text,
        }
    }
}

impl fmt::Display for ResourcePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One `--allow` entry, split: `desk.write` or `desk.files=/srv/files`.
/// Only the syntax is checked here; the name is looked up, and the value
/// parsed for its capability's kind, when the server is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowEntry {
    /// The capability's name.
    pub name: String,
    /// The scope value after `=`, if any.
    pub value: Option<String>,
}

/// An `--allow` entry that cannot be granted: the entry as written, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid grant {entry:?}: {reason}")]
#[non_exhaustive]
pub struct GrantError {
    /// The entry as the operator wrote it.
    pub entry: String,
    /// What was expected, and what was found.
    pub reason: String,
}

/// Splits one `--allow` entry: `NAME` or `NAME=VALUE` (see [`AllowEntry`]).
///
/// ```
/// use typed_mcp::capability::parse_allow_entry;
///
/// let entry = parse_allow_entry("desk.files=/srv/files").unwrap();
/// assert_eq!(entry.name, "desk.files");
/// assert_eq!(entry.value.as_deref(), Some("/srv/files"));
/// let bad = parse_allow_entry("Desk=/x").unwrap_err();
/// assert!(bad.to_string().contains("\"Desk=/x\""));
/// ```
pub fn parse_allow_entry(entry: &str) -> Result<AllowEntry, GrantError> {
    let error = |reason: String| GrantError {
        entry: entry.to_owned(),
        reason,
    };
    let (name, value) = match entry.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (entry, None),
    };
    if !is_valid_name(name) {
        return Err(error(format!(
            "expected a capability name (dot-separated lowercase segments, e.g. desk.write), found {name:?}"
        )));
    }
    if value == Some("") {
        return Err(error(format!(
            "expected a scope after `{name}=`, found nothing (write `{name}` alone for an unscoped grant)"
        )));
    }
    Ok(AllowEntry {
        name: name.to_owned(),
        value: value.map(str::to_owned),
    })
}

/// Resolves one `--allow` entry against the capabilities the declarations
/// name: its grant, or an error naming the entry. `Ok(None)` when the name is
/// not declared (the caller lists every such name at once).
pub(crate) fn resolve_allow_entry(
    entry: &str,
    declared: &BTreeMap<&'static str, Capability>,
) -> Result<Option<Grant>, GrantError> {
    let parsed = parse_allow_entry(entry)?;
    let Some(capability) = declared.get(parsed.name.as_str()) else {
        return Ok(None);
    };
    let scope = match &parsed.value {
        None => Scope::unscoped(),
        Some(value) => Scope::parse(capability, value).map_err(|reason| GrantError {
            entry: entry.to_owned(),
            reason,
        })?,
    };
    Ok(Some(Grant::scoped(*capability, scope)))
}

/// Why a handle refused what a handler asked for while it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The call's declaration does not name the capability (granted or not).
    NotDeclared {
        /// The capabilities the declaration names.
        declared: Vec<Capability>,
    },
    /// The capability is not of the kind the handle needs (a handle of roots
    /// for a capability of hosts, say).
    WrongKind,
    /// The grant has no scope, and this handle reaches nothing without one.
    NoScope,
    /// What was asked is outside every entry of the scope.
    Outside,
    /// A write through a read-only grant.
    ReadOnly,
    /// What was asked cannot be checked (a URL that does not parse, a scheme
    /// other than http and https); the reason says why.
    Invalid(String),
}

/// A refusal of a scoped handle inside a call: the capability, what was asked
/// (a path, a host or a resource id; never a URL's credentials or query) and
/// the scope granted. A tool returning it (through its own error type, with
/// `#[from]`) answers `isError` with this message, and the call's receipt
/// says `refused_in_call`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", refusal_text(self))]
#[non_exhaustive]
pub struct OutOfScope {
    /// The capability the handler used.
    pub capability: Capability,
    /// What it asked for.
    pub asked: String,
    /// The scope granted for this call, as text.
    pub scope: Vec<String>,
    /// Why it was refused.
    pub refusal: Refusal,
}

fn refusal_text(e: &OutOfScope) -> String {
    let granted = if e.scope.is_empty() {
        "granted without a scope".to_owned()
    } else {
        format!("granted: {}", e.scope.join(", "))
    };
    let cap = e.capability.name;
    let asked = &e.asked;
    match &e.refusal {
        Refusal::NotDeclared { declared } => format!(
            "refused: {asked:?} needs the capability {cap}, which is outside this call's scope ({})",
            scope_text(declared)
        ),
        Refusal::WrongKind => format!(
            "refused: the capability {cap} is not scoped to {} ({asked:?} cannot be checked against it)",
            match e.capability.kind {
                ScopeKind::Paths(_) => "hosts or resources",
                ScopeKind::Hosts => "paths or resources",
                ScopeKind::Resources => "paths or hosts",
                ScopeKind::Unscoped => "anything",
            }
        ),
        Refusal::NoScope => format!(
            "refused: {asked:?} is not reachable through the capability {cap}: it was granted without a scope, and this handle reaches only what a scope lists"
        ),
        Refusal::Outside => {
            format!("refused: {asked:?} is outside the scope of the capability {cap} ({granted})")
        }
        Refusal::ReadOnly => format!(
            "refused: writing {asked:?} needs write access, and the capability {cap} grants read-only access ({granted})"
        ),
        Refusal::Invalid(why) => {
            format!("refused: {asked:?} cannot be checked against the capability {cap}: {why}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["desk", "desk.write", "billing.refund-issue", "a1.b_2"] {
            assert!(is_valid_name(ok), "{ok}");
        }
        for bad in [
            "",
            ".desk",
            "desk.",
            "desk..write",
            "Desk.write",
            "1desk",
            "desk write",
            "desk.-x",
        ] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn allow_lists() {
        assert_eq!(
            parse_allow_list(" desk.write,desk.admin ,, x"),
            ["desk.write", "desk.admin", "x"]
        );
        assert!(parse_allow_list("").is_empty());
    }

    const A: Capability = Capability::new("a.read", "Read A");
    const B: Capability = Capability::new("a.write", "Write A");

    #[test]
    fn grants_and_policy() {
        let mut grants = Grants::default();
        grants.add(A.into());
        assert!(grants.missing(&[A], None).is_empty());
        assert_eq!(grants.missing(&[A, B], None), [B]);
        grants.policy = Some(Arc::new(|p: Option<&Principal>| {
            if p.is_some_and(|p| p.id() == "admin") {
                vec![B.into()]
            } else {
                vec![]
            }
        }));
        assert_eq!(grants.missing(&[A, B], None), [B]);
        assert!(
            grants
                .missing(&[A, B], Some(&Principal::new("admin")))
                .is_empty()
        );
    }

    #[test]
    fn a_credential_grants_what_it_names() {
        let grants = Grants::default();
        let token = Principal::new("t").with_granted(["a.write"]);
        assert_eq!(grants.missing(&[A, B], Some(&token)), [A]);
        assert!(grants.holder(Some(&token))(&[B]));
        assert!(!grants.holder(Some(&token))(&[A, B]));
        assert_eq!(grants.missing(&[B], Some(&Principal::new("t"))), [B]);
        // Filesystem roots are never granted by a credential alone.
        const FILES: Capability = Capability::new("a.files", "Files").paths(Access::Read);
        let token = Principal::new("t").with_granted(["a.files"]);
        assert_eq!(grants.missing(&[FILES], Some(&token)), [FILES]);
        assert!(!grants.holder(Some(&token))(&[FILES]));
    }

    #[test]
    fn host_patterns_display_as_written_and_match_strictly() {
        for text in [
            "api.example.com",
            "*.example.com",
            "10.0.0.5:8080",
            "[::1]:*",
            "a_b.example.com:443",
        ] {
            assert_eq!(HostPattern::parse(text).unwrap().to_string(), text);
        }
        // Parsed lowercase, without a trailing dot.
        assert_eq!(
            HostPattern::parse("API.Example.com.").unwrap().to_string(),
            "api.example.com"
        );
        let under = HostPattern::parse("*.example.com").unwrap();
        let name = |n| HostRef::Name(n);
        assert!(under.matches(name("a.example.com"), 443, 443));
        assert!(under.matches(name("A.B.EXAMPLE.COM."), 80, 80));
        for other in [
            "example.com",
            "aexample.com",
            "example.com.evil.net",
            ".example.com",
        ] {
            assert!(!under.matches(name(other), 443, 443), "{other}");
        }
        assert!(
            !under.matches(name("a.example.com"), 8443, 443),
            "another port"
        );
        let ip = HostPattern::parse("10.0.0.5").unwrap();
        assert!(ip.matches(HostRef::Ip("10.0.0.5".parse().unwrap()), 80, 80));
        assert!(!ip.matches(name("10.0.0.5"), 80, 80), "a name is not an IP");
        for bad in [
            "",
            "*",
            "*.",
            "a..b",
            "-",
            "a b",
            "exa$mple.com",
            "1.2.3",
            "[::1",
            "[::1]x",
            "h:0",
            "h:65536",
            "h:",
            "*.*.x",
            "https://api.example.com/v1",
        ] {
            assert!(HostPattern::parse(bad).is_err(), "{bad:?}");
        }
        let url = HostPattern::parse("https://api.example.com:8443/v1").unwrap_err();
        assert!(
            url.contains("not a URL (write \"api.example.com:8443\")"),
            "{url}"
        );
    }

    #[test]
    fn resource_patterns_and_allow_entries() {
        let prefix = ResourcePattern::parse("ticket:*").unwrap();
        assert!(prefix.matches("ticket:") && prefix.matches("ticket:T-1"));
        assert!(!prefix.matches("tickets:T-1"));
        assert!(ResourcePattern::parse("*").unwrap().matches("anything"));
        for bad in ["", "a*b", "**", "a b", "a,b", "é*é*"] {
            assert!(ResourcePattern::parse(bad).is_err(), "{bad:?}");
        }
        let entry = parse_allow_entry("net=a.example.com=x").unwrap();
        assert_eq!(entry.value.as_deref(), Some("a.example.com=x"));
        for bad in ["=x", "net=", "Net", "net..x=y"] {
            let e = parse_allow_entry(bad).unwrap_err();
            assert_eq!(e.entry, bad);
        }
    }

    #[test]
    fn scopes_merge_and_a_policy_widens_a_static_grant() {
        const R: Capability = Capability::new("r", "R").resources();
        let one = Scope::resource(ResourcePattern::parse("a:*").unwrap());
        let two = Scope::resource(ResourcePattern::parse("b:*").unwrap());
        let mut grants = Grants::default();
        grants.add(Grant::scoped(R, one.clone()));
        grants.add(Grant::scoped(R, one.clone()));
        grants.add(Grant::unscoped(R));
        assert_eq!(grants.everyone["r"].scope.texts(), ["a:*"]);
        grants.policy = Some(Arc::new(move |_: Option<&Principal>| {
            vec![Grant::scoped(R, two.clone())]
        }));
        let granted = grants.resolve(&[R], None).unwrap();
        assert_eq!(granted[0].scope.texts(), ["a:*", "b:*"]);
    }
}
