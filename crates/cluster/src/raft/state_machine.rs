//! The state machine: the replicated dictionary ([`super::command`]) and the group's
//! membership, as of the last applied entry.
//!
//! The state lives in memory; the log holds what rebuilds it. A snapshot (the whole state
//! as JSON, `snapshot` in the group's directory, replaced atomically) lets openraft purge the
//! log and bring a lagging node up to date. On open, the snapshot is loaded and openraft
//! applies the log entries after it.

use super::command::{CommandResult, ReplicatedState};
use super::types::TypeConfig;
use openraft::storage::{RaftStateMachine, Snapshot};
use openraft::{
    BasicNode, Entry, EntryPayload, LogId, RaftSnapshotBuilder, SnapshotMeta, StorageError,
    StorageIOError, StoredMembership,
};
use parking_lot::RwLock;
use serde::{Deserialize, Serialize};
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::Arc;

type NodeId = u64;

/// What a snapshot holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Stored {
    meta: SnapshotMeta<NodeId, BasicNode>,
    state: ReplicatedState,
}

/// The state machine; clones share it (one is the snapshot builder).
#[derive(Clone)]
pub struct StateMachine {
    dir: PathBuf,
    /// What readers see (shared with [`super::Group0::state`]).
    pub(super) state: Arc<RwLock<ReplicatedState>>,
    applied: Arc<RwLock<Applied>>,
    /// The state's version, sent after every apply and snapshot install (watchers: schema).
    pub(super) versions: Arc<tokio::sync::watch::Sender<u64>>,
}

#[derive(Default)]
struct Applied {
    last: Option<LogId<NodeId>>,
    membership: StoredMembership<NodeId, BasicNode>,
    snapshot: Option<Stored>,
    snapshots_built: u64,
}

impl StateMachine {
    /// Opens the state machine of the group in `dir`, from its snapshot if it has one.
    pub fn open(dir: &Path) -> std::io::Result<StateMachine> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join("snapshot");
        let stored: Option<Stored> = match std::fs::read(&path) {
            Ok(b) => Some(
                serde_json::from_slice(&b)
                    .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))?,
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let mut applied = Applied::default();
        let mut state = ReplicatedState::default();
        if let Some(s) = stored {
            applied.last = s.meta.last_log_id;
            applied.membership = s.meta.last_membership.clone();
            state = s.state.clone();
            applied.snapshot = Some(s);
        }
        let versions = Arc::new(tokio::sync::watch::Sender::new(state.version));
        Ok(StateMachine {
            dir: dir.to_path_buf(),
            versions,
            state: Arc::new(RwLock::new(state)),
            applied: Arc::new(RwLock::new(applied)),
        })
    }

    /// Keeps `stored` as the group's snapshot on disk.
    fn save(&self, stored: &Stored) -> std::io::Result<()> {
        let path = self.dir.join("snapshot");
        let bytes = serde_json::to_vec(stored).map_err(std::io::Error::other)?;
        cairn_engine::io::write_file_atomically(&path, &bytes).map_err(std::io::Error::other)
    }
}

impl RaftSnapshotBuilder<TypeConfig> for StateMachine {
    async fn build_snapshot(&mut self) -> Result<Snapshot<TypeConfig>, StorageError<NodeId>> {
        let (stored, data) = {
            let state = self.state.read().clone();
            let mut applied = self.applied.write();
            applied.snapshots_built += 1;
            let last = applied.last;
            let snapshot_id = match last {
                Some(l) => format!("{}-{}-{}", l.leader_id, l.index, applied.snapshots_built),
                None => format!("--{}", applied.snapshots_built),
            };
            let stored = Stored {
                meta: SnapshotMeta {
                    last_log_id: last,
                    last_membership: applied.membership.clone(),
                    snapshot_id,
                },
                state,
            };
            let data =
                serde_json::to_vec(&stored).map_err(|e| StorageIOError::read_state_machine(&e))?;
            applied.snapshot = Some(stored.clone());
            (stored, data)
        };
        self.save(&stored)
            .map_err(|e| StorageIOError::write_snapshot(Some(stored.meta.signature()), &e))?;
        Ok(Snapshot {
            meta: stored.meta,
            snapshot: Box::new(Cursor::new(data)),
        })
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotBuilder = StateMachine;

    async fn applied_state(
        &mut self,
    ) -> Result<(Option<LogId<NodeId>>, StoredMembership<NodeId, BasicNode>), StorageError<NodeId>>
    {
        let applied = self.applied.read();
        Ok((applied.last, applied.membership.clone()))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<CommandResult>, StorageError<NodeId>>
    where
        I: IntoIterator<Item = Entry<TypeConfig>> + openraft::OptionalSend,
        I::IntoIter: openraft::OptionalSend,
    {
        let mut out = Vec::new();
        let mut state = self.state.write();
        let mut applied = self.applied.write();
        for entry in entries {
            applied.last = Some(entry.log_id);
            let result = match entry.payload {
                EntryPayload::Normal(cmd) => state.apply(&cmd),
                EntryPayload::Membership(m) => {
                    applied.membership = StoredMembership::new(Some(entry.log_id), m);
                    CommandResult::Applied {
                        version: state.version,
                    }
                }
                EntryPayload::Blank => CommandResult::Applied {
                    version: state.version,
                },
            };
            out.push(result);
        }
        self.versions.send_replace(state.version);
        Ok(out)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        self.clone()
    }

    async fn begin_receiving_snapshot(
        &mut self,
    ) -> Result<Box<Cursor<Vec<u8>>>, StorageError<NodeId>> {
        Ok(Box::new(Cursor::new(Vec::new())))
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta<NodeId, BasicNode>,
        snapshot: Box<Cursor<Vec<u8>>>,
    ) -> Result<(), StorageError<NodeId>> {
        let stored: Stored = serde_json::from_slice(snapshot.get_ref())
            .map_err(|e| StorageIOError::read_snapshot(Some(meta.signature()), &e))?;
        let stored = Stored {
            meta: meta.clone(),
            state: stored.state,
        };
        self.save(&stored)
            .map_err(|e| StorageIOError::write_snapshot(Some(meta.signature()), &e))?;
        *self.state.write() = stored.state.clone();
        self.versions.send_replace(stored.state.version);
        let mut applied = self.applied.write();
        applied.last = meta.last_log_id;
        applied.membership = meta.last_membership.clone();
        applied.snapshot = Some(stored);
        Ok(())
    }

    async fn get_current_snapshot(
        &mut self,
    ) -> Result<Option<Snapshot<TypeConfig>>, StorageError<NodeId>> {
        let applied = self.applied.read();
        let Some(stored) = applied.snapshot.clone() else {
            return Ok(None);
        };
        let data =
            serde_json::to_vec(&stored).map_err(|e| StorageIOError::read_state_machine(&e))?;
        Ok(Some(Snapshot {
            meta: stored.meta,
            snapshot: Box::new(Cursor::new(data)),
        }))
    }
}
