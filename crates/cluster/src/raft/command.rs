//! What the Raft group replicates: commands on a small versioned dictionary.
//!
//! Schema and topology are kept as entries of one replicated dictionary (`schema/…`,
//! `node/…` keys, their values serialized definitions), changed only by commands committed
//! to the log. A command carries the state version it was prepared against: applied on the
//! same version it takes effect and bumps the version; otherwise it is refused as a conflict,
//! so two DDL statements prepared concurrently never both apply on a stale view (ScyllaDB's
//! group 0 "state ids"). Applying is deterministic: every node reaches the same state.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One change of an entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    /// Sets `key` to `value`.
    Put {
        /// Key.
        key: String,
        /// Value.
        value: String,
    },
    /// Removes `key`.
    Delete {
        /// Key.
        key: String,
    },
}

/// A command: changes applied together, if the state is still at `expect_version`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Command {
    /// The version the command was prepared against; `None` applies on any version.
    pub expect_version: Option<u64>,
    /// The changes.
    pub ops: Vec<Op>,
}

/// What applying a command did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CommandResult {
    /// Applied; the state is now at `version`.
    Applied {
        /// The new version.
        version: u64,
    },
    /// Not applied: the state was at `version`, not the one expected.
    Conflict {
        /// The current version.
        version: u64,
    },
}

/// The replicated dictionary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicatedState {
    /// Bumped by every applied command.
    pub version: u64,
    /// The entries.
    pub entries: BTreeMap<String, String>,
}

impl ReplicatedState {
    /// Applies `cmd` (see the module doc).
    pub fn apply(&mut self, cmd: &Command) -> CommandResult {
        if let Some(v) = cmd.expect_version {
            if v != self.version {
                return CommandResult::Conflict {
                    version: self.version,
                };
            }
        }
        for op in &cmd.ops {
            match op {
                Op::Put { key, value } => {
                    self.entries.insert(key.clone(), value.clone());
                }
                Op::Delete { key } => {
                    self.entries.remove(key);
                }
            }
        }
        self.version += 1;
        CommandResult::Applied {
            version: self.version,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn put(k: &str, v: &str) -> Op {
        Op::Put {
            key: k.into(),
            value: v.into(),
        }
    }

    #[test]
    fn commands_apply_on_their_version_only() {
        let mut s = ReplicatedState::default();
        let a = Command {
            expect_version: Some(0),
            ops: vec![put("schema/ks", "1"), put("node/a", "x")],
        };
        assert_eq!(s.apply(&a), CommandResult::Applied { version: 1 });
        // Prepared against version 0 too: refused, nothing changes.
        let b = Command {
            expect_version: Some(0),
            ops: vec![Op::Delete {
                key: "schema/ks".into(),
            }],
        };
        assert_eq!(s.apply(&b), CommandResult::Conflict { version: 1 });
        assert_eq!(s.entries.len(), 2);
        let c = Command {
            expect_version: None,
            ops: vec![Op::Delete {
                key: "node/a".into(),
            }],
        };
        assert_eq!(s.apply(&c), CommandResult::Applied { version: 2 });
        assert_eq!(s.entries.keys().collect::<Vec<_>>(), ["schema/ks"]);
    }
}
