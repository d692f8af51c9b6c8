//! The subset of RFC 6570 URI templates a resource template may use, and
//! matching a concrete URI against one.
//!
//! Supported: literal text, `{name}` (simple expansion: the value holds no
//! reserved character such as `/`) and `{+name}` (reserved expansion: the value
//! may hold `/`, for paths). Values are percent-decoded when matched.

use std::collections::HashSet;
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
    ///
    /// The URI is the client's, so the work is bounded: each (part, position)
    /// is tried at most once, a variable's value ends only where the literal
    /// after it appears, and a URI whose matching would look at more than
    /// [`MATCH_STEPS`] bytes in all is treated as no match. Without the
    /// bound, a template such as `db://{a}.{b}.{c}` against a URI of many dots
    /// took time polynomial in the URI's length (found by the `uri_template`
    /// fuzz target).
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let mut matcher = Matcher {
            parts: &self.parts,
            uri,
            failed: HashSet::new(),
            steps_left: MATCH_STEPS,
        };
        let mut out = Vec::new();
        if matcher.at(0, 0, &mut out) {
            out.reverse();
            Some(out)
        } else {
            None
        }
    }
}

/// The most bytes one [`UriTemplate::matches`] looks at, over all the splits
/// it tries, before it gives up (no match). An instance of a template with a
/// few variables needs about its own length.
pub const MATCH_STEPS: usize = 1_000_000;

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

struct Matcher<'a> {
    parts: &'a [Part],
    uri: &'a str,
    /// (part, position) pairs known not to match the rest: each is tried once.
    failed: HashSet<(usize, usize)>,
    steps_left: usize,
}

impl Matcher<'_> {
    /// Whether `parts[part..]` matches `uri[pos..]`; on success `out` holds
    /// the values of those parts' variables, last first.
    fn at(&mut self, part: usize, pos: usize, out: &mut Vec<(String, String)>) -> bool {
        let Some(first) = self.parts.get(part) else {
            return pos == self.uri.len();
        };
        if self.failed.contains(&(part, pos)) {
            return false;
        }
        let rest = &self.uri[pos..];
        // What a failed attempt pushed (the values of later parts, matched
        // before this part failed) is not part of the match.
        let mark = out.len();
        let matched = match first {
            Part::Literal(lit) => {
                rest.starts_with(lit.as_str()) && self.at(part + 1, pos + lit.len(), out)
            }
            Part::Var { name, reserved } => match self.value(part, pos, *reserved, out) {
                Some(value) => {
                    out.push((name.clone(), value));
                    true
                }
                None => false,
            },
        };
        if !matched {
            out.truncate(mark);
            self.failed.insert((part, pos));
        }
        matched
    }

    /// The decoded value of the variable `parts[part]`, starting at `pos`,
    /// that lets the rest match: the shortest such value that decodes (a
    /// following literal is found at its first fitting occurrence).
    /// Candidates end where the next literal occurs (or at the end, for the
    /// last part), found and checked for allowed characters lazily, every
    /// byte looked at charged to the step budget.
    fn value(
        &mut self,
        part: usize,
        pos: usize,
        reserved: bool,
        out: &mut Vec<(String, String)>,
    ) -> Option<String> {
        let rest = &self.uri[pos..];
        let next = self.parts.get(part + 1);
        // A value holds at least one character.
        let mut from = rest.chars().next()?.len_utf8();
        // `rest[..allowed_to]` holds only characters a value may hold.
        let mut allowed_to = 0;
        loop {
            let candidate = match next {
                None => rest.len(),
                Some(Part::Literal(lit)) => match rest[from..].find(lit.as_str()) {
                    Some(at) => from + at,
                    None => {
                        // The search looked at the whole rest.
                        self.steps_left = self.steps_left.saturating_sub(rest.len() - from);
                        return None;
                    }
                },
                // Adjacent variables (the parser refuses them; kept total).
                Some(Part::Var { .. }) => from,
            };
            let looked_at = candidate.saturating_sub(allowed_to.min(from)) + 1;
            self.steps_left = self.steps_left.checked_sub(looked_at)?;
            if rest[allowed_to..candidate]
                .chars()
                .any(|c| !allowed_in_value(c, reserved))
            {
                // No value can reach past a character it may not hold.
                return None;
            }
            allowed_to = candidate;
            let mark = out.len();
            if self.at(part + 1, pos + candidate, out) {
                // Decoding looks at the whole value once more.
                self.steps_left = self.steps_left.checked_sub(candidate)?;
                if let Some(value) = percent_decode(&rest[..candidate]) {
                    return Some(value);
                }
                // An escape cut short (`%4` before a literal `1`) or a bad
                // one: a longer value may still decode, and the later parts
                // are matched again from its end.
                out.truncate(mark);
            }
            if candidate >= rest.len() || next.is_none() {
                return None;
            }
            from = candidate + rest[candidate..].chars().next().map_or(1, char::len_utf8);
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
    fn a_value_ends_at_any_occurrence_of_the_next_literal_overlapping_ones_too() {
        let t = UriTemplate::parse("x://{a}aa{b}").unwrap();
        assert_eq!(
            t.matches("x://1aaa2"),
            Some(vec![("a".into(), "1".into()), ("b".into(), "a2".into())])
        );
        let t = UriTemplate::parse("x://{a}-{b}-end").unwrap();
        assert_eq!(
            t.matches("x://é-1-2-end"),
            Some(vec![("a".into(), "é".into()), ("b".into(), "1-2".into())])
        );
    }

    /// Found by the `uri_template` fuzz target: every split of a URI of many
    /// separators was tried, for each variable (a call took seconds at 400
    /// bytes, and grows with the power of the variable count).
    #[test]
    fn many_separators_are_matched_in_bounded_work() {
        let t = UriTemplate::parse("db://{a}.{b}.{c}.{d}x").unwrap();
        let dots = ".".repeat(20_000);
        assert_eq!(t.matches(&format!("db://{dots}")), None);
        assert_eq!(t.matches(&format!("db://a{dots}b.c.dy")), None);
        // What is an instance still matches, however long.
        let long = "v".repeat(20_000);
        assert_eq!(
            t.matches(&format!("db://{long}.b.c.dx"))
                .map(|m| m[1].1.clone()),
            Some("b".into())
        );
        let t = UriTemplate::parse("db://{table}\u{0}{roe}\u{0}{row}").unwrap();
        let zeros = "\u{0}".repeat(400);
        let matched = t.matches(&format!("db://\u{0}t\u{4}qb{zeros}")).unwrap();
        assert_eq!(matched[0].1, "\u{0}t\u{4}qb");
    }

    /// Found by the `uri_template` fuzz target: a value that did not decode
    /// failed its part after the later parts had pushed their values, and a
    /// match found another way kept them (one variable named many times).
    #[test]
    fn a_failed_attempt_leaves_no_values_behind() {
        let source = "db://{table}\u{0}{+able}%{+roe}\u{0}{row}";
        let t = UriTemplate::parse(source).unwrap();
        let encode = |value: &str| {
            value
                .bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() {
                        (b as char).to_string()
                    } else {
                        format!("%{b:02X}")
                    }
                })
                .collect::<String>()
        };
        let values = [
            ("table", "u\u{2}"),
            (
                "able",
                "\u{10}\0\0\0\0\0\0\0\u{5}\0\0\0\0\u{7f}\0\u{2}\0\0\0ob",
            ),
            ("roe", "3\u{21c}\u{444}x"),
            ("row", "\0\0"),
        ];
        let uri = format!(
            "db://{}\u{0}{}%{}\u{0}{}",
            encode(values[0].1),
            encode(values[1].1),
            encode(values[2].1),
            encode(values[3].1)
        );
        let expected: Vec<(String, String)> = values
            .iter()
            .map(|(n, v)| ((*n).into(), (*v).into()))
            .collect();
        assert_eq!(t.matches(&uri), Some(expected));
    }

    #[test]
    fn a_value_cut_inside_an_escape_grows_until_it_decodes() {
        let t = UriTemplate::parse("x://{a}4{b}").unwrap();
        // "%" alone does not decode; "%41" does, and b starts after the next 4.
        assert_eq!(
            t.matches("x://%41%424z"),
            Some(vec![("a".into(), "AB".into()), ("b".into(), "z".into())])
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
