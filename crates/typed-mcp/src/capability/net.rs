//! The host checker of a host-scoped grant (feature `net`).
//!
//! typed-mcp sends no HTTP itself: the application's own client asks
//! [`ScopedNet::check`] before each request and [`ScopedNet::check_redirect`]
//! on each redirect it would follow (turn the client's automatic redirects
//! off, or check in its redirect policy), and sends the [`Url`] the check
//! returns, so the URL checked is the URL sent. URLs are parsed as WHATWG
//! says (with the `url` crate most Rust HTTP clients use), so userinfo
//! (`http://example.com@evil.net` names `evil.net`), numeric IPv4 forms
//! (`http://2130706433/` is `127.0.0.1`), percent-encoded and
//! internationalised names are compared as the client will resolve them.
//!
//! What it does not do: it checks names, not addresses; a granted name that
//! resolves to an internal address is reached (grant IP literals, or resolve
//! and check in the client's connector, for that). A client that skips the
//! check is not stopped.

use url::{Host, Url};

use crate::ToolContext;
use crate::capability::{Capability, HostRef, OutOfScope, Refusal, ScopeEntry, ScopeKind};

pub use url;

/// Checks URLs against the host patterns a grant lists (see the module).
#[derive(Debug, Clone)]
pub struct ScopedNet {
    ctx: ToolContext,
    capability: Capability,
}

pub(crate) fn checker(ctx: &ToolContext, capability: &Capability) -> Result<ScopedNet, OutOfScope> {
    ctx.scope_for(capability, |k| matches!(k, ScopeKind::Hosts), "")?;
    Ok(ScopedNet {
        ctx: ctx.clone(),
        capability: *capability,
    })
}

impl ScopedNet {
    /// Parses `url` and checks its host and port: the URL to send, or the
    /// refusal (noted for the receipt, which shows `scheme://host:port`
    /// only, never credentials, path or query). Only `http` and `https`
    /// URLs are accepted; an unscoped grant reaches no host.
    pub fn check(&self, url: &str) -> Result<Url, OutOfScope> {
        match Url::parse(url) {
            Ok(parsed) => self.check_url(&parsed).map(|()| parsed),
            Err(e) => Err(self.ctx.refuse(
                &self.capability,
                "(an unparsable URL)",
                Refusal::Invalid(format!("expected an absolute http(s) URL: {e}")),
            )),
        }
    }

    /// Checks the target of a redirect from `from` (its `Location`, relative
    /// or absolute): the URL to follow, or the refusal.
    pub fn check_redirect(&self, from: &Url, location: &str) -> Result<Url, OutOfScope> {
        match from.join(location) {
            Ok(next) => self.check_url(&next).map(|()| next),
            Err(e) => Err(self.ctx.refuse(
                &self.capability,
                "(an unparsable redirect)",
                Refusal::Invalid(format!("expected a URL or a reference in Location: {e}")),
            )),
        }
    }

    /// Checks a parsed URL's scheme, host and port.
    pub fn check_url(&self, url: &Url) -> Result<(), OutOfScope> {
        let asked = origin(url);
        let default_port = match url.scheme() {
            "http" => 80,
            "https" => 443,
            other => {
                return Err(self.ctx.refuse(
                    &self.capability,
                    asked,
                    Refusal::Invalid(format!("expected an http or https URL, found {other}:")),
                ));
            }
        };
        let host = match url.host() {
            Some(Host::Domain(name)) => HostRef::Name(name),
            Some(Host::Ipv4(ip)) => HostRef::Ip(ip.into()),
            Some(Host::Ipv6(ip)) => HostRef::Ip(ip.into()),
            None => {
                return Err(self.ctx.refuse(
                    &self.capability,
                    asked,
                    Refusal::Invalid("the URL names no host".into()),
                ));
            }
        };
        let port = url.port().unwrap_or(default_port);
        let scope = self
            .ctx
            .granted_scope(&self.capability)
            .map(|s| s.entries().to_vec())
            .unwrap_or_default();
        if scope.is_empty() {
            return Err(self.ctx.refuse(&self.capability, asked, Refusal::NoScope));
        }
        let allowed = scope.iter().any(|entry| {
            matches!(entry, ScopeEntry::Host(pattern) if pattern.matches(host, port, default_port))
        });
        if allowed {
            Ok(())
        } else {
            Err(self.ctx.refuse(&self.capability, asked, Refusal::Outside))
        }
    }
}

/// `scheme://host[:port]`: what a refusal shows of a URL.
fn origin(url: &Url) -> String {
    let host = match url.host() {
        Some(Host::Ipv6(ip)) => format!("[{ip}]"),
        Some(host) => host.to_string(),
        None => String::new(),
    };
    match url.port() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}
