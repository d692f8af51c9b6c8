//! Do the replicas share the `requestState` keyring? Each replica announces
//! its keys' fingerprints (never the keys) in Redis and compares them with
//! the others'.

use std::collections::BTreeSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use typed_mcp::Server;
use typed_mcp::state::{KeyFingerprint, StateKeys};

use crate::{Error, Redis};

/// How long an announcement lives without being refreshed (a stopped
/// replica drops out of the comparison after it).
const ANNOUNCEMENT_TTL: Duration = Duration::from_secs(90);

/// How often a replica refreshes its announcement and compares again.
const REFRESH: Duration = Duration::from_secs(30);

/// What one replica says of its keyring.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Announcement {
    /// The sealing key's fingerprint first, then the other keys'.
    keys: Vec<String>,
    /// The per-process random key (no keyring configured).
    random: bool,
}

/// A disagreement between this replica's keyring and another's.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyringProblem {
    /// This replica seals with a per-process random key while other
    /// replicas share a configured keyring: a retry reaching this replica
    /// with another's `requestState` is refused, and the reverse.
    RandomHereSharedThere {
        /// Replicas with a configured keyring.
        others: Vec<String>,
    },
    /// Another replica seals with a key this replica cannot open: states
    /// it issues are refused here (a rotation done in one step, or a
    /// different keyring).
    CannotOpen {
        /// The replica whose sealing key is not in this keyring.
        replica: String,
    },
    /// Another replica seals with its own per-process random key.
    RandomThere {
        /// That replica.
        replica: String,
    },
}

impl std::fmt::Display for KeyringProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyringProblem::RandomHereSharedThere { others } => write!(
                f,
                "this replica seals requestState with a per-process random key, but replicas {} share a configured keyring: a multi round-trip retry that reaches this replica from another (or the reverse) will be refused; give every replica the same keys in {} or {}",
                others.join(", "),
                typed_mcp::state::STATE_KEYS_ENV,
                typed_mcp::state::STATE_KEYS_FILE_ENV,
            ),
            KeyringProblem::CannotOpen { replica } => write!(
                f,
                "replica {replica} seals requestState with a key this replica's keyring does not hold: its retries will be refused here; add that key to this replica's keyring (when rotating, add the new key second everywhere before putting it first)"
            ),
            KeyringProblem::RandomThere { replica } => write!(
                f,
                "replica {replica} seals requestState with its own per-process random key: its retries will be refused by every other replica"
            ),
        }
    }
}

/// Announces this replica's keyring in Redis, compares it with the other
/// replicas' now and every 30 s after, and logs a warning for each
/// [`KeyringProblem`] found (once per problem).
#[derive(Debug)]
pub struct KeyringCheck {
    first: Vec<KeyringProblem>,
}

impl KeyringCheck {
    /// Announces `server`'s keyring as `replica` (a name unique in the
    /// deployment) and compares. The problems found at start are returned
    /// ([`problems`](Self::problems)) and logged; a task keeps the
    /// announcement fresh and logs problems that appear later. Must be
    /// called within a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`Error::Unreachable`] when Redis does not answer.
    pub async fn start(redis: &Redis, server: &Server, replica: &str) -> Result<Self, Error> {
        let keys = server.request_state_keys().clone();
        let mut warned = BTreeSet::new();
        let first = check(redis, &keys, replica)
            .await
            .map_err(Error::Unreachable)?;
        for problem in &first {
            tracing::warn!("{problem}");
            warned.insert(problem.to_string());
        }
        let (redis, replica) = (redis.clone(), replica.to_owned());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(REFRESH).await;
                match check(&redis, &keys, &replica).await {
                    Ok(problems) => {
                        for problem in problems {
                            if warned.insert(problem.to_string()) {
                                tracing::warn!("{problem}");
                            }
                        }
                    }
                    Err(e) => tracing::debug!(error = %e, "could not compare keyrings in Redis"),
                }
            }
        });
        Ok(KeyringCheck { first })
    }

    /// What the comparison at start found.
    pub fn problems(&self) -> &[KeyringProblem] {
        &self.first
    }
}

/// Announces `keys` as `replica`'s and compares with every other announcement.
async fn check(
    redis: &Redis,
    keys: &StateKeys,
    replica: &str,
) -> redis::RedisResult<Vec<KeyringProblem>> {
    let mine = Announcement {
        keys: keys
            .fingerprints()
            .iter()
            .map(ToString::to_string)
            .collect(),
        random: keys.is_random(),
    };
    let hash = redis.key(&["keyring"]);
    let encoded = serde_json::to_string(&mine).unwrap_or_default();
    // One hash of announcements; each field expires on its own (Redis 7.4's
    // HEXPIRE is not assumed: the value carries its own deadline).
    let deadline = now_s() + ANNOUNCEMENT_TTL.as_secs();
    let _: () = redis
        .query(
            redis::cmd("HSET")
                .arg(&hash)
                .arg(replica)
                .arg(format!("{deadline} {encoded}")),
        )
        .await?;
    let all: Vec<(String, String)> = redis.query(redis::cmd("HGETALL").arg(&hash)).await?;
    let mut problems = Vec::new();
    let mut shared_there = Vec::new();
    for (other, value) in all {
        if other == replica {
            continue;
        }
        let Some((deadline, encoded)) = value.split_once(' ') else {
            continue;
        };
        if deadline.parse::<u64>().is_ok_and(|d| d < now_s()) {
            let _: () = redis
                .query(redis::cmd("HDEL").arg(&hash).arg(&other))
                .await?;
            continue;
        }
        let Ok(theirs) = serde_json::from_str::<Announcement>(encoded) else {
            continue;
        };
        if theirs.random {
            if !mine.random {
                problems.push(KeyringProblem::RandomThere { replica: other });
            }
            continue;
        }
        if mine.random {
            shared_there.push(other);
            continue;
        }
        let sealing = theirs
            .keys
            .first()
            .and_then(|f| f.parse::<KeyFingerprint>().ok());
        if sealing.is_some_and(|f| !keys.opens(&f)) {
            problems.push(KeyringProblem::CannotOpen { replica: other });
        }
    }
    if !shared_there.is_empty() {
        shared_there.sort();
        problems.insert(
            0,
            KeyringProblem::RandomHereSharedThere {
                others: shared_there,
            },
        );
    }
    Ok(problems)
}

fn now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
