//! The subset of RFC 6570 URI templates a resource template may use, and
//! matching a concrete URI against one.
//!
//! Supported: literal text, `{name}` (simple expansion: the value holds no
//! reserved character such as `/`) and `{+name}` (reserved expansion: the value
//! may hold `/`, for paths). Values are percent-decoded when matched.

use std::fmt;

use typed_mcp_syntax::Piece;

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var { name: String, reserved: bool },
}

/// Why a URI template could not be parsed: the error `#[resource]` reports at
/// compile time for the same template (both parse with `typed-mcp-syntax`).
pub use typed_mcp_syntax::TemplateError as UriTemplateError;

impl UriTemplate {
    /// Parses a template.
    pub fn parse(source: &str) -> Result<UriTemplate, UriTemplateError> {
        let parts = typed_mcp_syntax::parse_template(source)?
            .into_iter()
            .map(|piece| match piece {
                Piece::Literal(text) => Part::Literal(text.to_owned()),
                Piece::Variable { name, reserved } => Part::Var {
                    name: name.to_owned(),
                    reserved,
                },
            })
            .collect();
        Ok(UriTemplate {
            source: source.to_owned(),
            parts,
        })
    }

    /// The template text.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// Matches a URI, returning each variable's percent-decoded value in order,
    /// or `None` when the URI is not an instance of this template.
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let mut out = Vec::new();
        if match_parts(&self.parts, uri, &mut out) {
            out.reverse();
            Some(out)
        } else {
            None
        }
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

fn match_parts(parts: &[Part], uri: &str, out: &mut Vec<(String, String)>) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(lit) => uri
            .strip_prefix(lit.as_str())
            .is_some_and(|tail| match_parts(rest, tail, out)),
        Part::Var { name, reserved } => {
            // The longest run of allowed characters bounds the candidates; try the
            // shortest first so a following literal is found at its first occurrence.
            let allowed = uri
                .char_indices()
                .find(|&(_, c)| !allowed_in_value(c, *reserved))
                .map_or(uri.len(), |(i, _)| i);
            for end in (1..=allowed).filter(|&e| uri.is_char_boundary(e)) {
                if match_parts(rest, &uri[end..], out) {
                    let Some(value) = percent_decode(&uri[..end]) else {
                        return false;
                    };
                    out.push((name.clone(), value));
                    return true;
                }
            }
            false
        }
    }
}

fn allowed_in_value(c: char, reserved: bool) -> bool {
    if reserved {
        !matches!(c, '?' | '#') && !c.is_whitespace()
    } else {
        !matches!(
            c,
            ':' | '/'
                | '?'
                | '#'
                | '['
                | ']'
                | '@'
                | '!'
                | '$'
                | '&'
                | '\''
                | '('
                | ')'
                | '*'
                | '+'
                | ','
                | ';'
                | '='
        ) && !c.is_whitespace()
    }
}

fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_simple_variables() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(
            t.matches("test://template/123/data"),
            Some(vec![("id".into(), "123".into())])
        );
        assert_eq!(t.matches("test://template/1/2/data"), None);
        assert_eq!(t.matches("test://template//data"), None);
        assert_eq!(t.matches("test://template/123/data/x"), None);
    }

    #[test]
    fn reserved_variables_take_slashes_and_values_are_decoded() {
        let t = UriTemplate::parse("file:///{+path}").unwrap();
        assert_eq!(
            t.matches("file:///a/b%20c.txt"),
            Some(vec![("path".into(), "a/b c.txt".into())])
        );
    }

    #[test]
    fn several_variables() {
        let t = UriTemplate::parse("db://{table}/{row}").unwrap();
        assert_eq!(
            t.matches("db://users/42"),
            Some(vec![
                ("table".into(), "users".into()),
                ("row".into(), "42".into())
            ])
        );
        assert_eq!(t.variables().collect::<Vec<_>>(), ["table", "row"]);
    }

    #[test]
    fn rejects_what_it_cannot_match_reliably() {
        assert!(matches!(
            UriTemplate::parse("x://{a"),
            Err(UriTemplateError::Unclosed(_))
        ));
        assert!(matches!(
            UriTemplate::parse("x://{a}{b}"),
            Err(UriTemplateError::Adjacent(..))
        ));
        assert!(matches!(
            UriTemplate::parse("x://{?q}"),
            Err(UriTemplateError::Unsupported(_))
        ));
        assert!(matches!(
            UriTemplate::parse("x://{}"),
            Err(UriTemplateError::BadName(_))
        ));
        // RFC 6570 allows no `}` in literal text; `#[resource]` refused it
        // before the rules were shared, and now `Server::build` does too.
        assert!(matches!(
            UriTemplate::parse("x://id}"),
            Err(UriTemplateError::StrayClose(6))
        ));
        assert!(matches!(
            UriTemplate::parse("x://{a}/{a}"),
            Err(UriTemplateError::Duplicate(_))
        ));
    }
}
