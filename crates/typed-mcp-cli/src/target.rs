//! Which server to talk to: a Streamable HTTP endpoint or a command to spawn.

use std::fmt;

use crate::error::ClientError;

/// A server, as given after `--`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A Streamable HTTP endpoint, e.g. `http://127.0.0.1:8000/mcp`.
    Http(String),
    /// A program and its arguments, spoken to over stdio.
    Command(Vec<String>),
}

impl Target {
    /// One URL, or a command line.
    pub fn parse(words: &[String]) -> Result<Target, ClientError> {
        let Some(first) = words.first() else {
            return Err(ClientError::Usage(
                "no server given: put a URL or a command after `--`".into(),
            ));
        };
        let lower = first.to_ascii_lowercase();
        if lower.starts_with("https://") {
            return Err(ClientError::Usage(format!(
                "{first}: https is not supported (this client speaks plain HTTP, for servers on \
                 this machine); use http://, or run the server as a command after `--`"
            )));
        }
        if lower.starts_with("http://") {
            if words.len() > 1 {
                return Err(ClientError::Usage(format!(
                    "unexpected words after the URL {first}: {:?}",
                    &words[1..]
                )));
            }
            return Ok(Target::Http(first.clone()));
        }
        Ok(Target::Command(words.to_vec()))
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Http(url) => f.write_str(url),
            Target::Command(words) => f.write_str(&words.join(" ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn urls_and_commands() {
        assert_eq!(
            Target::parse(&words(&["http://127.0.0.1:1/mcp"])).ok(),
            Some(Target::Http("http://127.0.0.1:1/mcp".into()))
        );
        assert_eq!(
            Target::parse(&words(&["cargo", "run", "--example", "quickstart"])).ok(),
            Some(Target::Command(words(&[
                "cargo",
                "run",
                "--example",
                "quickstart"
            ])))
        );
        assert!(Target::parse(&[]).is_err());
        assert!(Target::parse(&words(&["https://example.com/mcp"])).is_err());
        assert!(Target::parse(&words(&["http://127.0.0.1:1/mcp", "extra"])).is_err());
    }
}
