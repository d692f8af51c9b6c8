//! Reading a rustdoc comment: the first paragraph (the description) and the
//! `# Arguments` list (`` * `name` - text ``, rustdoc's convention).
//!
//! The parser works on plain lines tagged with the index of the `#[doc]`
//! attribute they came from, so it can be unit-tested without spans; the
//! caller maps an index back to the attribute's span for diagnostics.

use proc_macro2::Span;
use syn::spanned::Spanned;

/// One line of a doc comment and the index of the attribute it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DocLine {
    pub(crate) text: String,
    pub(crate) origin: usize,
}

/// One entry of the `# Arguments` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) name: String,
    /// The entry's text, continuation lines joined with spaces.
    pub(crate) text: String,
    pub(crate) origin: usize,
}

/// What a doc comment says.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Docs {
    /// The first paragraph, lines joined with spaces; `None` when empty.
    pub(crate) description: Option<String>,
    /// Whether a `# Arguments` heading exists.
    pub(crate) has_arguments_section: bool,
    /// The entries of every `# Arguments` section, in order.
    pub(crate) entries: Vec<Entry>,
    /// Bullet lines in an `# Arguments` section that are not `` * `name` - text ``.
    pub(crate) malformed: Vec<DocLine>,
}

impl Docs {
    /// The entry documenting `name`, if any.
    pub(crate) fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }
}

/// The doc comment of an item: its lines and the span of each `#[doc]`
/// attribute they came from.
pub(crate) struct DocComment {
    pub(crate) docs: Docs,
    spans: Vec<Span>,
}

impl DocComment {
    /// Reads every `#[doc = "..."]` attribute. Docs that are not string
    /// literals (`#[doc = include_str!(..)]`) cannot be read by a macro and
    /// are skipped.
    pub(crate) fn from_attrs(attrs: &[syn::Attribute]) -> Self {
        let mut lines = Vec::new();
        let mut spans = Vec::new();
        for attr in attrs {
            if !attr.path().is_ident("doc") {
                continue;
            }
            let syn::Meta::NameValue(nv) = &attr.meta else {
                continue;
            };
            let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
            else {
                continue;
            };
            let origin = spans.len();
            spans.push(attr.span());
            for line in s.value().split('\n') {
                lines.push(DocLine {
                    text: line.trim_end_matches('\r').to_owned(),
                    origin,
                });
            }
        }
        DocComment {
            docs: parse(&lines),
            spans,
        }
    }

    /// True when the item has no readable doc comment at all.
    pub(crate) fn is_absent(&self) -> bool {
        self.spans.is_empty()
    }

    /// The span of the attribute a line came from.
    pub(crate) fn span(&self, origin: usize) -> Span {
        self.spans
            .get(origin)
            .copied()
            .unwrap_or_else(Span::call_site)
    }
}

/// Removes the indentation common to every non-blank line, as rustdoc does
/// (a `///` comment's lines each start with one space).
fn unindent(lines: &[DocLine]) -> Vec<DocLine> {
    let indent = lines
        .iter()
        .filter(|l| !l.text.trim().is_empty())
        .map(|l| l.text.len() - l.text.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| DocLine {
            text: if l.text.trim().is_empty() {
                String::new()
            } else {
                l.text[indent..].to_owned()
            },
            origin: l.origin,
        })
        .collect()
}

fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// The text of a Markdown ATX heading (`# Arguments` → `Arguments`).
fn heading(line: &str) -> Option<&str> {
    let indent = line.len() - line.trim_start().len();
    if indent > 3 {
        return None;
    }
    let t = line.trim_start();
    let hashes = t.bytes().take_while(|&b| b == b'#').count();
    if hashes == 0 || hashes > 6 {
        return None;
    }
    let rest = &t[hashes..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    Some(rest.trim().trim_end_matches('#').trim())
}

/// After a list bullet (`*`, `-` or `+` and a space), the rest of the line.
fn bullet(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let rest = t
        .strip_prefix('*')
        .or_else(|| t.strip_prefix('-'))
        .or_else(|| t.strip_prefix('+'))?;
    if rest.is_empty() {
        Some(rest)
    } else if rest.starts_with([' ', '\t']) {
        Some(rest.trim_start())
    } else {
        None
    }
}

/// `` `name` - text `` → `(name, text)`; `None` when the line does not
/// follow the convention. Besides `-`, the separators `:`, `–` and `—` are
/// read too.
fn entry(after_bullet: &str) -> Option<(String, String)> {
    let rest = after_bullet.strip_prefix('`')?;
    let close = rest.find('`')?;
    let name = rest[..close].trim();
    if name.is_empty() {
        return None;
    }
    let after = rest[close + 1..].trim_start();
    let text = if after.is_empty() {
        ""
    } else {
        let sep = ['-', ':', '–', '—']
            .into_iter()
            .find(|&c| after.starts_with(c))?;
        after[sep.len_utf8()..].trim()
    };
    Some((name.to_owned(), text.to_owned()))
}

/// Parses the lines of a doc comment.
pub(crate) fn parse(lines: &[DocLine]) -> Docs {
    let lines = unindent(lines);
    let mut docs = Docs::default();

    // The description: the first paragraph, unless the comment opens with a
    // heading or a code block.
    let mut i = 0;
    while i < lines.len() && lines[i].text.is_empty() {
        i += 1;
    }
    let mut paragraph = Vec::new();
    while i < lines.len() {
        let text = &lines[i].text;
        if text.is_empty() || heading(text).is_some() || is_fence(text) {
            break;
        }
        paragraph.push(text.trim());
        i += 1;
    }
    if !paragraph.is_empty() {
        docs.description = Some(paragraph.join(" "));
    }

    // The `# Arguments` sections, skipping fenced code blocks (whose `# `
    // lines are hidden code, not headings).
    let mut in_fence = false;
    let mut in_arguments = false;
    // The entry being read, and whether a blank line followed it.
    let mut current: Option<usize> = None;
    let mut blank_since = false;
    for line in &lines[i..] {
        let text = &line.text;
        if is_fence(text) {
            in_fence = !in_fence;
            current = None;
            continue;
        }
        if in_fence {
            continue;
        }
        if let Some(title) = heading(text) {
            in_arguments = title.eq_ignore_ascii_case("arguments");
            docs.has_arguments_section |= in_arguments;
            current = None;
            continue;
        }
        if !in_arguments {
            continue;
        }
        if text.is_empty() {
            blank_since = true;
            continue;
        }
        let indented = text.starts_with([' ', '\t']);
        if let Some(after) = bullet(text).filter(|_| !indented || current.is_none()) {
            match entry(after) {
                Some((name, text)) => {
                    docs.entries.push(Entry {
                        name,
                        text,
                        origin: line.origin,
                    });
                    current = Some(docs.entries.len() - 1);
                }
                None => {
                    docs.malformed.push(line.clone());
                    current = None;
                }
            }
            blank_since = false;
            continue;
        }
        match current {
            Some(index) if indented || !blank_since => {
                let entry = &mut docs.entries[index];
                if !entry.text.is_empty() {
                    entry.text.push(' ');
                }
                entry.text.push_str(text.trim());
            }
            // Prose between or after the entries.
            _ => current = None,
        }
        blank_since = false;
    }
    docs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(comment: &str) -> Docs {
        // As `///` comments arrive: one attribute per line, each with the
        // space that follows the slashes.
        let lines: Vec<DocLine> = comment
            .lines()
            .enumerate()
            .map(|(origin, l)| DocLine {
                text: if l.is_empty() {
                    String::new()
                } else {
                    format!(" {l}")
                },
                origin,
            })
            .collect();
        parse(&lines)
    }

    fn entries(d: &Docs) -> Vec<(&str, &str, usize)> {
        d.entries
            .iter()
            .map(|e| (e.name.as_str(), e.text.as_str(), e.origin))
            .collect()
    }

    #[test]
    fn description_is_the_first_paragraph_joined() {
        let d = docs("Add two\nintegers.\n\nMore detail that is not sent.");
        assert_eq!(d.description.as_deref(), Some("Add two integers."));
        assert!(!d.has_arguments_section);
        assert!(d.entries.is_empty());
    }

    #[test]
    fn leading_blank_lines_are_skipped() {
        let d = docs("\n\n  Indented first line.\nSecond.");
        assert_eq!(
            d.description.as_deref(),
            Some("Indented first line. Second.")
        );
    }

    #[test]
    fn no_comment_no_description() {
        assert_eq!(docs(""), Docs::default());
    }

    #[test]
    fn a_heading_first_means_no_description() {
        let d = docs("# Arguments\n* `a` - The first.");
        assert_eq!(d.description, None);
        assert!(d.has_arguments_section);
        assert_eq!(entries(&d), [("a", "The first.", 1)]);
    }

    #[test]
    fn a_heading_ends_the_description() {
        let d = docs("Add.\n# Arguments\n* `a` - The first.");
        assert_eq!(d.description.as_deref(), Some("Add."));
        assert_eq!(entries(&d), [("a", "The first.", 2)]);
    }

    #[test]
    fn arguments_in_rustdoc_convention() {
        let d = docs(
            "Add two integers.\n\n# Arguments\n\n* `a` - The first addend.\n* `b` - The second addend.\n",
        );
        assert_eq!(d.description.as_deref(), Some("Add two integers."));
        assert_eq!(
            entries(&d),
            [
                ("a", "The first addend.", 4),
                ("b", "The second addend.", 5)
            ]
        );
        assert!(d.malformed.is_empty());
    }

    #[test]
    fn other_bullets_and_separators() {
        let d =
            docs("X.\n# Arguments\n- `a`: colon\n+ `b` — em dash\n* `c` – en dash\n*\t`d`-tight");
        assert_eq!(
            entries(&d),
            [
                ("a", "colon", 2),
                ("b", "em dash", 3),
                ("c", "en dash", 4),
                ("d", "tight", 5)
            ]
        );
    }

    #[test]
    fn continuation_lines_belong_to_the_previous_entry() {
        let d = docs(
            "X.\n\n# Arguments\n* `query` - What to look for,\n  in the title or body.\n* `limit` - At most\nthis many (lazy continuation).\n\n    Indented after a blank line.\n* `page` - Page.",
        );
        assert_eq!(
            entries(&d),
            [
                ("query", "What to look for, in the title or body.", 3),
                (
                    "limit",
                    "At most this many (lazy continuation). Indented after a blank line.",
                    5
                ),
                ("page", "Page.", 9)
            ]
        );
    }

    #[test]
    fn prose_after_a_blank_line_ends_an_entry() {
        let d = docs("X.\n# Arguments\n* `a` - A.\n\nEvery argument is optional.\n* `b` - B.");
        assert_eq!(entries(&d), [("a", "A.", 2), ("b", "B.", 5)]);
    }

    #[test]
    fn an_indented_bullet_continues_the_entry() {
        // A nested list is part of the entry's text.
        let d = docs("X.\n# Arguments\n* `mode` - One of:\n  - `fast`\n  - `slow`");
        assert_eq!(entries(&d), [("mode", "One of: - `fast` - `slow`", 2)]);
    }

    #[test]
    fn entries_without_text_are_kept_empty() {
        let d = docs("X.\n# Arguments\n* `a`\n* `b` -");
        assert_eq!(entries(&d), [("a", "", 2), ("b", "", 3)]);
    }

    #[test]
    fn malformed_bullets_are_reported() {
        let d = docs("X.\n# Arguments\n* a - no backticks\n* `b` because\n* `` - empty name");
        assert!(d.entries.is_empty());
        let malformed: Vec<_> = d.malformed.iter().map(|l| l.origin).collect();
        assert_eq!(malformed, [2, 3, 4]);
    }

    #[test]
    fn other_sections_are_ignored() {
        let d = docs(
            "X.\n\n# Errors\n* `a` - not an argument\n\n# Arguments\n* `b` - B.\n\n## Examples\n* `c` - not one either",
        );
        assert_eq!(entries(&d), [("b", "B.", 6)]);
    }

    #[test]
    fn heading_case_and_level_are_free() {
        let d = docs("X.\n### arguments ###\n* `a` - A.");
        assert!(d.has_arguments_section);
        assert_eq!(entries(&d), [("a", "A.", 2)]);
    }

    #[test]
    fn code_blocks_are_skipped() {
        let d = docs(
            "X.\n# Arguments\n* `a` - A.\n```\n# Arguments\n* `b` - hidden code\n```\n* `c` - C.",
        );
        assert_eq!(entries(&d), [("a", "A.", 2), ("c", "C.", 7)]);
        let d = docs("```\nlet x = 1;\n```\nAfter the code.");
        assert_eq!(d.description, None);
    }

    #[test]
    fn not_headings() {
        assert_eq!(heading("#Arguments"), None);
        assert_eq!(heading("    # Arguments"), None);
        assert_eq!(heading("####### Arguments"), None);
        assert_eq!(heading("## Arguments ##"), Some("Arguments"));
        assert_eq!(heading("#"), Some(""));
    }

    #[test]
    fn block_comments_share_one_origin() {
        // `/** ... */` arrives as one attribute holding every line.
        let lines: Vec<DocLine> = "\n   Search tickets.\n\n   # Arguments\n   * `q` - Query.\n"
            .split('\n')
            .map(|l| DocLine {
                text: l.to_owned(),
                origin: 0,
            })
            .collect();
        let d = parse(&lines);
        assert_eq!(d.description.as_deref(), Some("Search tickets."));
        assert_eq!(entries(&d), [("q", "Query.", 0)]);
    }
}
