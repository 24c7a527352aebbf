//! The schema's shared log: where schema changes are committed so that every node applies
//! the same schema, with the same table ids.
//!
//! The schema is a set of entries under [`SCHEMA_PREFIX`] in group 0's replicated dictionary
//! (`raft::command`), with the roles and permissions under [`AUTH_PREFIX`] (auth in group 0, as
//! ScyllaDB 6 has it); what a key and a value mean is `cairn-cql`'s business.
//! A change is a [`Command`] prepared against the state version the statement validated
//! against: it applies only if nothing was committed in between, and otherwise comes back
//! as [`CommandResult::Conflict`] for the statement to be validated again. Two
//! implementations of [`SchemaLog`]:
//!
//! - [`Group0Schema`]: group 0 itself — a change commits once a majority of the group's
//!   voters have it in their logs, every node applies it in the same order, and one asked
//!   while a majority is down fails at once with [`Error::NoSchemaMajority`] (it never
//!   diverges);
//! - [`LocalSchemaLog`]: a log of one in memory, for an executor embedded without a node
//!   (tests, tools): the same commands, the same conflicts, applied at once.
//!
//! Invariant: [`SchemaLog::commit`] returns `Applied { version }` only once this node's state
//! has reached `version` — the caller applies the entries it reads right after.

use crate::error::{Error, Result};
use crate::membership::Membership;
use crate::raft::command::{Command, CommandResult, Op, ReplicatedState};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The prefix of every schema entry in group 0.
pub const SCHEMA_PREFIX: &str = "schema/";
/// The prefix of the roles' and permissions' entries, which go through the same log.
pub const AUTH_PREFIX: &str = "auth/";

/// The schema entries of group 0's state, at the state's version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchemaState {
    /// The state's version (bumped by every command, schema or not).
    pub version: u64,
    /// The entries under [`SCHEMA_PREFIX`] and [`AUTH_PREFIX`].
    pub entries: BTreeMap<String, String>,
}

impl SchemaState {
    /// The schema (and auth) entries of `state`.
    pub fn of(state: &ReplicatedState) -> SchemaState {
        let mut entries = BTreeMap::new();
        for prefix in [SCHEMA_PREFIX, AUTH_PREFIX] {
            entries.extend(
                state
                    .entries
                    .range(prefix.to_string()..)
                    .take_while(|(k, _)| k.starts_with(prefix))
                    .map(|(k, v)| (k.clone(), v.clone())),
            );
        }
        SchemaState {
            version: state.version,
            entries,
        }
    }
}

/// Where schema changes are committed (see the module doc). Its methods block: they are
/// called where waiting is allowed (DDL runs on a blocking thread).
pub trait SchemaLog: Send + Sync {
    /// The schema as this node has it now.
    fn state(&self) -> SchemaState;
    /// Commits `ops` if the state is still at `expect_version`; returns once committed and
    /// applied on this node.
    fn commit(&self, expect_version: u64, ops: Vec<Op>) -> Result<CommandResult>;
    /// After this node applied the schema of `version`: waits, briefly, until the other
    /// nodes that are up have applied it too (so that drivers find the schema agreed).
    fn settle(&self, version: u64);
}

/// A log of one, in memory (see the module doc).
#[derive(Debug, Default)]
pub struct LocalSchemaLog {
    state: parking_lot::Mutex<ReplicatedState>,
}

impl SchemaLog for LocalSchemaLog {
    fn state(&self) -> SchemaState {
        SchemaState::of(&self.state.lock())
    }

    fn commit(&self, expect_version: u64, ops: Vec<Op>) -> Result<CommandResult> {
        Ok(self.state.lock().apply(&Command {
            expect_version: Some(expect_version),
            ops,
        }))
    }

    fn settle(&self, _version: u64) {}
}

/// Group 0 as the schema's log (see the module doc).
pub struct Group0Schema {
    membership: Arc<Membership>,
    runtime: tokio::runtime::Handle,
    /// How long a change may take to commit once a majority is up.
    timeout: Duration,
    /// How long a change waits for the other nodes to apply it before answering.
    settle: Duration,
}

impl Group0Schema {
    /// The schema log of the node `membership` runs; its blocking calls run their waiting
    /// on `runtime` (they must not be called from one of its reactor threads).
    pub fn new(
        membership: Arc<Membership>,
        runtime: tokio::runtime::Handle,
        timeout: Duration,
    ) -> Group0Schema {
        Group0Schema {
            membership,
            runtime,
            timeout,
            settle: Duration::from_secs(2),
        }
    }
}

impl SchemaLog for Group0Schema {
    fn state(&self) -> SchemaState {
        SchemaState::of(&self.membership.group().state())
    }

    fn commit(&self, expect_version: u64, ops: Vec<Op>) -> Result<CommandResult> {
        // Refused at once rather than after the timeout: without a majority nothing commits.
        let (up, voters) = self.membership.voters_up();
        if up * 2 <= voters {
            return Err(Error::NoSchemaMajority { up, voters });
        }
        let group = self.membership.group();
        let cmd = Command {
            expect_version: Some(expect_version),
            ops,
        };
        let result = self
            .runtime
            .block_on(group.propose(cmd, self.timeout))
            .map_err(|e| Error::SchemaNotCommitted {
                millis: self.timeout.as_millis(),
                reason: e.to_string(),
            })?;
        if let CommandResult::Applied { version } = result {
            self.runtime
                .block_on(group.wait_for_version(version, self.timeout))?;
        }
        Ok(result)
    }

    fn settle(&self, version: u64) {
        self.runtime
            .block_on(self.membership.await_schema(version, self.settle));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn put(k: &str) -> Op {
        Op::Put {
            key: k.into(),
            value: "v".into(),
        }
    }

    #[test]
    fn the_local_log_commits_on_its_version_and_shows_schema_entries_only() {
        let log = LocalSchemaLog::default();
        assert_eq!(
            log.commit(
                0,
                vec![put("schema/keyspace/a"), put("node/x"), put("auth/role/r")]
            )
            .unwrap(),
            CommandResult::Applied { version: 1 }
        );
        // Prepared against the old version: a conflict, nothing applied.
        assert_eq!(
            log.commit(0, vec![put("schema/keyspace/b")]).unwrap(),
            CommandResult::Conflict { version: 1 }
        );
        let s = log.state();
        assert_eq!(s.version, 1);
        assert_eq!(
            s.entries.keys().collect::<Vec<_>>(),
            ["auth/role/r", "schema/keyspace/a"]
        );
    }
}
