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
//! [`ServerBuilder::grant`]: crate::ServerBuilder::grant
//! [`ServerBuilder::allow`]: crate::ServerBuilder::allow
//! [`ServerBuilder::grant_policy`]: crate::ServerBuilder::grant_policy

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::context::Principal;

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
        Capability { name, description }
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
pub(crate) type GrantPolicy = Arc<dyn Fn(Option<&Principal>) -> Vec<Capability> + Send + Sync>;

/// What the host granted: capabilities for every caller, plus an optional
/// policy adding capabilities per principal.
#[derive(Clone, Default)]
pub(crate) struct Grants {
    /// Granted to every caller, by name.
    pub(crate) everyone: BTreeMap<&'static str, Capability>,
    pub(crate) policy: Option<GrantPolicy>,
}

impl Grants {
    /// Whether what is granted depends on who calls.
    pub(crate) fn per_principal(&self) -> bool {
        self.policy.is_some()
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
                    || extra.iter().any(|e| e.name == c.name)
                    || credential.iter().any(|n| n == c.name)
            })
        }
    }

    /// The capabilities of `required` that are not granted to `principal`, in
    /// declaration order; empty when the call may run. The policy runs only
    /// when a static grant does not already cover everything.
    pub(crate) fn missing(
        &self,
        required: &[Capability],
        principal: Option<&Principal>,
    ) -> Vec<Capability> {
        let mut missing: Vec<Capability> = required
            .iter()
            .filter(|c| !self.everyone.contains_key(c.name) && !credential_grants(principal, c))
            .copied()
            .collect();
        if missing.is_empty() {
            return missing;
        }
        if let Some(policy) = &self.policy {
            let extra = policy(principal);
            missing.retain(|c| !extra.iter().any(|e| e.name == c.name));
        }
        missing
    }
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
        grants.everyone.insert(A.name, A);
        assert!(grants.missing(&[A], None).is_empty());
        assert_eq!(grants.missing(&[A, B], None), [B]);
        grants.policy = Some(Arc::new(|p: Option<&Principal>| {
            if p.is_some_and(|p| p.id() == "admin") {
                vec![B]
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
    }
}
