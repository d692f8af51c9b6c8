//! The arguments of `#[tool(...)]`, `#[resource(...)]`, `#[prompt(...)]` and
//! `#[arg(...)]`: a comma-separated list of `key`, `key = value`.
//!
//! Parsing keeps going past a bad entry so every mistake is reported, and
//! each value is read by a typed accessor that records its own error.

use proc_macro2::TokenStream;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::{Expr, Ident, Lit, LitStr, Token};

use crate::ctxt::Ctxt;

/// One `key` or `key = value`.
pub(crate) struct Arg {
    pub(crate) key: Ident,
    pub(crate) value: Option<Expr>,
}

impl Parse for Arg {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let key = Ident::parse_any(input)?;
        if input.peek(syn::token::Paren) || input.peek(syn::token::Bracket) {
            let group: proc_macro2::Group = input.parse()?;
            return Err(syn::Error::new(
                group.span(),
                format!("write `{key} = value`, not `{key}(...)`"),
            ));
        }
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        Ok(Arg { key, value })
    }
}

/// Parses an argument list; on a syntax error records it and returns what
/// was read before it.
pub(crate) fn parse_args(cx: &Ctxt, tokens: TokenStream) -> Vec<Arg> {
    let mut args = Vec::new();
    let parser = |input: ParseStream<'_>| {
        while !input.is_empty() {
            match input.parse::<Arg>() {
                Ok(arg) => args.push(arg),
                Err(e) => {
                    cx.syn_error(e);
                    // Skip to the next comma and go on.
                    while !input.is_empty() && !input.peek(Token![,]) {
                        input.parse::<proc_macro2::TokenTree>()?;
                    }
                }
            }
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(())
    };
    if let Err(e) = parser.parse2(tokens) {
        cx.syn_error(e);
    }
    args
}

/// Reads a list of arguments against the keys one attribute accepts.
pub(crate) struct Reader<'a> {
    cx: &'a Ctxt,
    attribute: &'static str,
    valid: &'static [&'static str],
    seen: Vec<String>,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(
        cx: &'a Ctxt,
        attribute: &'static str,
        valid: &'static [&'static str],
    ) -> Self {
        Reader {
            cx,
            attribute,
            valid,
            seen: Vec::new(),
        }
    }

    /// The key of `arg` if this attribute accepts it and it was not given
    /// before; records an error otherwise.
    pub(crate) fn key(&mut self, arg: &Arg) -> Option<String> {
        let key = arg.key.unraw().to_string();
        if !self.valid.contains(&key.as_str()) {
            let list = self
                .valid
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let hint = closest(&key, self.valid)
                .map(|k| format!(" (did you mean `{k}`?)"))
                .unwrap_or_default();
            self.cx.error_spanned_by(
                &arg.key,
                format!(
                    "unknown {} argument `{key}`{hint}; expected one of: {list}",
                    self.attribute
                ),
            );
            return None;
        }
        if self.seen.contains(&key) {
            self.cx
                .error_spanned_by(&arg.key, format!("`{key}` is given twice; keep one"));
            return None;
        }
        self.seen.push(key.clone());
        Some(key)
    }

    /// A string literal value: `key = "..."`.
    pub(crate) fn string(&self, arg: &Arg) -> Option<LitStr> {
        match &arg.value {
            Some(Expr::Lit(syn::ExprLit {
                lit: Lit::Str(s), ..
            })) => Some(s.clone()),
            other => {
                self.value_error(arg, other.as_ref(), "a string literal", "\"...\"");
                None
            }
        }
    }

    /// A flag: `key` alone, or `key = true` / `key = false`.
    pub(crate) fn flag(&self, arg: &Arg) -> Option<bool> {
        match &arg.value {
            None => Some(true),
            Some(Expr::Lit(syn::ExprLit {
                lit: Lit::Bool(b), ..
            })) => Some(b.value),
            other => {
                self.value_error(arg, other.as_ref(), "a flag", "true");
                None
            }
        }
    }

    /// An integer literal value.
    pub(crate) fn integer(&self, arg: &Arg) -> Option<u64> {
        match &arg.value {
            Some(Expr::Lit(syn::ExprLit {
                lit: Lit::Int(i), ..
            })) => match i.base10_parse::<u64>() {
                Ok(v) => Some(v),
                Err(e) => {
                    self.cx.syn_error(e);
                    None
                }
            },
            other => {
                self.value_error(arg, other.as_ref(), "an integer", "30000");
                None
            }
        }
    }

    fn value_error(&self, arg: &Arg, value: Option<&Expr>, what: &str, example: &str) {
        let key = arg.key.unraw();
        let message = format!(
            "`{key}` takes {what}: write `{key} = {example}`{}",
            if what == "a flag" {
                format!(" or just `{key}`")
            } else {
                String::new()
            }
        );
        match value {
            Some(v) => self.cx.error_spanned_by(v, message),
            None => self.cx.error_spanned_by(&arg.key, message),
        }
    }
}

/// The valid key nearest to a misspelt one, when it is close enough to be a
/// likely typo.
fn closest<'k>(key: &str, valid: &[&'k str]) -> Option<&'k str> {
    valid
        .iter()
        .map(|v| (distance(key, v), *v))
        .filter(|(d, v)| *d <= 2.max(v.len() / 4) && *d < v.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, v)| v)
}

/// Levenshtein distance.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// A duration literal such as `"30s"`, `"500ms"`, `"2m"` or `"1h"`, in
/// milliseconds.
pub(crate) fn parse_duration_ms(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().ok()?;
    let factor = match unit.trim() {
        "ms" => 1,
        "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    number.checked_mul(factor)
}

/// The text of a path as written (`crate::caps::DESK_WRITE`).
pub(crate) fn path_text(path: &syn::Path) -> String {
    let mut text = String::new();
    if path.leading_colon.is_some() {
        text.push_str("::");
    }
    for (i, segment) in path.segments.iter().enumerate() {
        if i > 0 {
            text.push_str("::");
        }
        text.push_str(&segment.ident.unraw().to_string());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("30s"), Some(30_000));
        assert_eq!(parse_duration_ms("500ms"), Some(500));
        assert_eq!(parse_duration_ms("2m"), Some(120_000));
        assert_eq!(parse_duration_ms("2min"), Some(120_000));
        assert_eq!(parse_duration_ms("1h"), Some(3_600_000));
        assert_eq!(parse_duration_ms("30"), None);
        assert_eq!(parse_duration_ms("s"), None);
        assert_eq!(parse_duration_ms("1.5s"), None);
        assert_eq!(parse_duration_ms("3d"), None);
    }

    #[test]
    fn typo_hints() {
        let keys = &["name", "title", "read_only", "destructive", "timeout"];
        assert_eq!(closest("nmae", keys), Some("name"));
        assert_eq!(closest("readonly", keys), Some("read_only"));
        assert_eq!(closest("timout", keys), Some("timeout"));
        assert_eq!(closest("colour", keys), None);
        assert_eq!(closest("x", keys), None);
    }
}
