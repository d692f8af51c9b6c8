//! How the CLI connects: a thin layer over typed-mcp-client that maps the
//! command line onto its [`Options`], prints the notifications asked for, and
//! words errors with the flags that change them.

use std::time::Duration;

use serde_json::Value;
use typed_mcp_client::era::{Because, LegacySession};
use typed_mcp_client::{Client, ClientError, Era, Options, Spoken, StdioCommand};

use crate::target::Target;

/// Which era to speak (`--era`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum EraArg {
    /// Try 2026-07-28 (`server/discover`); fall back to `initialize` when the
    /// server shows it does not speak it.
    #[default]
    Auto,
    /// 2026-07-28 only.
    Modern,
    /// The dated handshake only (`initialize`, 2025-11-25 offered).
    Legacy,
}

impl From<EraArg> for Era {
    fn from(era: EraArg) -> Era {
        match era {
            EraArg::Auto => Era::Auto,
            EraArg::Modern => Era::Modern,
            EraArg::Legacy => Era::Legacy,
        }
    }
}

/// What the command line asks of every connection.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How long one request may take.
    pub timeout: Duration,
    /// Which era to speak.
    pub era: EraArg,
    /// Ask for progress notifications (printed to stderr).
    pub progress: bool,
    /// Ask for log messages at this level (printed to stderr).
    pub log_level: Option<String>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            timeout: typed_mcp_client::DEFAULT_TIMEOUT,
            era: EraArg::Auto,
            progress: false,
            log_level: None,
        }
    }
}

/// Connects to the target (for a command, starts it, with the environment
/// the person running the CLI has, as their shell would) and settles the era.
pub async fn connect(target: &Target, settings: &Settings) -> Result<Client, ClientError> {
    let mut options = Options::new()
        .timeout(settings.timeout)
        .era(settings.era.into())
        .progress(settings.progress)
        .client_info("typed-mcp-cli", env!("CARGO_PKG_VERSION"));
    if let Some(level) = &settings.log_level {
        options = options.log_level(level);
    }
    if settings.progress || settings.log_level.is_some() {
        options = options.on_notification(crate::show::notification);
    }
    let client = match target {
        Target::Http(url) => Client::http(url, options).await?,
        Target::Command(words) => {
            Client::stdio(StdioCommand::from_words(words)?.inherit_env(true), options).await?
        }
    };
    if let (Some(level), Spoken::Legacy(session)) = (&settings.log_level, client.spoken())
        && session.initialized["capabilities"].get("logging").is_none()
    {
        eprintln!(
            "typed-mcp: --log-level {level}: the server declares no logging capability, so \
                 no log messages were asked for"
        );
    }
    Ok(client)
}

/// The legacy era, worded with the flag that chose it: `legacy (2025-11-25,
/// a session opened by initialize; --era legacy)`.
pub fn describe(session: &LegacySession) -> String {
    let because = match &session.because {
        Because::Asked => "--era legacy".to_owned(),
        other => other.to_string(),
    };
    format!(
        "legacy ({}, a session opened by initialize; {because})",
        session.version
    )
}

/// An error, worded for the command line: with the flag that would help.
pub fn words(error: &ClientError) -> String {
    match error {
        ClientError::Timeout { seconds, .. } => {
            let said = error.to_string();
            let limit = format!("no answer within {seconds} s");
            said.replacen(&limit, &format!("{limit} (raise it with --timeout)"), 1)
        }
        ClientError::ModernRefused(inner) => format!(
            "{}\nif this server speaks only a dated revision (2025-11-25 or older), try --era \
             auto or --era legacy",
            words(inner)
        ),
        // The CLI connects anew on each run.
        ClientError::Http { status: 404, .. } => error.to_string().replace(
            "(it expired or was ended); connect again",
            "(it expired or was ended); run the command again",
        ),
        other => other.to_string(),
    }
}

/// The `isError` flag of a `CallToolResult`.
pub fn is_error(result: &Value) -> bool {
    result["isError"] == Value::Bool(true)
}
