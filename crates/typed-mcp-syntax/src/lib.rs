//! The syntax rules typed-mcp checks twice — at compile time, in `#[tool]` and
//! `#[resource]` (typed-mcp-macros), and when a server is built, for
//! declarations made at run time (typed-mcp-core) — written once, here.
//!
//! The crate has no dependencies, so the proc-macro build pays nothing for
//! sharing it.
//!
//! ```
//! use typed_mcp_syntax::{Piece, TemplateError, is_valid_tool_name, parse_template};
//!
//! assert!(is_valid_tool_name("desk.close-ticket_2"));
//! assert!(!is_valid_tool_name("close ticket"));
//!
//! let pieces = parse_template("desk://tickets/{id}/notes/{+path}")?;
//! assert_eq!(pieces[1], Piece::Variable { name: "id", reserved: false });
//! assert_eq!(pieces[3], Piece::Variable { name: "path", reserved: true });
//! assert_eq!(parse_template("x://{a}{b}"), Err(TemplateError::Adjacent("a".into(), "b".into())));
//! # Ok::<(), TemplateError>(())
//! ```

#![warn(missing_docs, unreachable_pub)]
#![forbid(unsafe_code)]

use std::fmt;

/// The tool-name rule in words, for error messages.
pub const TOOL_NAME_RULE: &str = "1 to 128 characters from A-Z a-z 0-9 _ . -";

/// True for a tool name the spec allows: `[A-Za-z0-9_.-]{1,128}`
/// ([`TOOL_NAME_RULE`]).
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// One piece of a parsed URI template, borrowed from its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Text that a URI must contain as written.
    Literal(&'a str),
    /// `{name}`, or `{+name}` when `reserved` (its value may hold `/`).
    Variable {
        /// The variable's name.
        name: &'a str,
        /// Written `{+name}`: RFC 6570 reserved expansion.
        reserved: bool,
    },
}

/// Why a URI template is refused. The messages say what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TemplateError {
    /// A `{` without its `}`, at this byte offset.
    Unclosed(usize),
    /// A `}` without its `{`, at this byte offset (RFC 6570 allows no `}` in
    /// literal text).
    StrayClose(usize),
    /// `{}`, or a name with characters outside `[A-Za-z0-9_.]`.
    BadName(String),
    /// An operator other than `+`, or a variable list (the expression as
    /// written between the braces).
    Unsupported(String),
    /// Two variables with nothing between them cannot be told apart.
    Adjacent(String, String),
    /// The same variable twice.
    Duplicate(String),
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemplateError::Unclosed(at) => write!(f, "a `{{` without its `}}` (at byte {at})"),
            TemplateError::StrayClose(at) => write!(f, "a `}}` without its `{{` (at byte {at})"),
            TemplateError::BadName(name) => write!(
                f,
                "`{{{name}}}` is not a valid variable: use letters, digits, `_` or `.`"
            ),
            TemplateError::Unsupported(expr) => write!(
                f,
                "`{{{expr}}}` is not supported: only `{{name}}` and `{{+name}}` (a value holding `/`) are"
            ),
            TemplateError::Adjacent(first, second) => write!(
                f,
                "`{{{first}}}` and `{{{second}}}` are adjacent, so a URI cannot be split between them; put a literal between them"
            ),
            TemplateError::Duplicate(name) => {
                write!(f, "`{{{name}}}` appears twice; each variable appears once")
            }
        }
    }
}

impl std::error::Error for TemplateError {}

/// Parses the subset of RFC 6570 a resource template may use: literal text,
/// `{name}` and `{+name}`, names of letters, digits, `_` and `.`, no two
/// variables adjacent or repeated.
pub fn parse_template(template: &str) -> Result<Vec<Piece<'_>>, TemplateError> {
    let mut pieces = Vec::new();
    let mut rest = template;
    let mut offset = 0;
    while let Some(open) = rest.find('{') {
        if let Some(close) = rest[..open].find('}') {
            return Err(TemplateError::StrayClose(offset + close));
        }
        if open > 0 {
            pieces.push(Piece::Literal(&rest[..open]));
        }
        let close = rest[open..]
            .find('}')
            .ok_or(TemplateError::Unclosed(offset + open))?
            + open;
        let expr = &rest[open + 1..close];
        let (reserved, name) = match expr.strip_prefix('+') {
            Some(name) => (true, name),
            None => (false, expr),
        };
        if name.contains(',') || name.starts_with(['#', '.', '/', ';', '?', '&', '=', '+']) {
            return Err(TemplateError::Unsupported(expr.to_owned()));
        }
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
        {
            return Err(TemplateError::BadName(name.to_owned()));
        }
        if let Some(Piece::Variable { name: previous, .. }) = pieces.last() {
            return Err(TemplateError::Adjacent(
                (*previous).to_owned(),
                name.to_owned(),
            ));
        }
        if pieces
            .iter()
            .any(|p| matches!(p, Piece::Variable { name: n, .. } if *n == name))
        {
            return Err(TemplateError::Duplicate(name.to_owned()));
        }
        pieces.push(Piece::Variable { name, reserved });
        offset += close + 1;
        rest = &rest[close + 1..];
    }
    if let Some(close) = rest.find('}') {
        return Err(TemplateError::StrayClose(offset + close));
    }
    if !rest.is_empty() {
        pieces.push(Piece::Literal(rest));
    }
    Ok(pieces)
}

/// The variable names of a template, in order.
pub fn template_variables(template: &str) -> Result<Vec<&str>, TemplateError> {
    Ok(parse_template(template)?
        .into_iter()
        .filter_map(|piece| match piece {
            Piece::Variable { name, .. } => Some(name),
            Piece::Literal(_) => None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        for good in ["add", "desk.close-ticket_2", "A", &"a".repeat(128)] {
            assert!(is_valid_tool_name(good), "{good}");
        }
        for bad in ["", "close ticket", "é", "a/b", &"a".repeat(129)] {
            assert!(!is_valid_tool_name(bad), "{bad}");
        }
    }

    #[test]
    fn templates_and_their_variables() {
        assert_eq!(
            template_variables("file:///readme").unwrap(),
            Vec::<&str>::new()
        );
        assert_eq!(
            template_variables("desk://tickets/{id}/notes/{+path}").unwrap(),
            ["id", "path"]
        );
        assert_eq!(template_variables("x://{user.id}").unwrap(), ["user.id"]);
        assert_eq!(
            parse_template("db://{table}/{row}").unwrap(),
            [
                Piece::Literal("db://"),
                Piece::Variable {
                    name: "table",
                    reserved: false
                },
                Piece::Literal("/"),
                Piece::Variable {
                    name: "row",
                    reserved: false
                },
            ]
        );
    }

    #[test]
    fn refused_templates_say_why() {
        let cases = [
            ("x://{id", TemplateError::Unclosed(4)),
            ("x://id}", TemplateError::StrayClose(6)),
            ("x://{a}/b}", TemplateError::StrayClose(9)),
            ("x://b}/{a}", TemplateError::StrayClose(5)),
            ("x://{}", TemplateError::BadName(String::new())),
            ("x://{a-b}", TemplateError::BadName("a-b".into())),
            ("x://{a,b}", TemplateError::Unsupported("a,b".into())),
            ("x://{?q}", TemplateError::Unsupported("?q".into())),
            ("x://{++q}", TemplateError::Unsupported("++q".into())),
            (
                "x://{a}{b}",
                TemplateError::Adjacent("a".into(), "b".into()),
            ),
            ("x://{a}/{a}", TemplateError::Duplicate("a".into())),
        ];
        for (template, expected) in cases {
            assert_eq!(parse_template(template), Err(expected), "{template}");
        }
        assert_eq!(
            TemplateError::Unsupported("?q".into()).to_string(),
            "`{?q}` is not supported: only `{name}` and `{+name}` (a value holding `/`) are"
        );
    }
}
