//! The Raft log and vote, kept on disk.
//!
//! Files in the group's directory:
//! - `log`: one JSON entry per line, in index order, appended and synced (`fdatasync`) before
//!   openraft is told the entries are durable;
//! - `vote`, `purged`, `committed`: JSON, replaced atomically (write, sync, rename). The
//!   committed log id is kept so that a restarted member applies what it knows committed at
//!   once — a node alone would otherwise hold an empty state (no ring entry) until it had
//!   elected itself and committed again.
//!
//! Truncation (a follower dropping entries a new leader overrides) and purging (entries a
//! snapshot covers) rewrite `log` atomically; both are rare and the schema log is small. A
//! crash in the middle of an append can leave a partial last line: it was never acknowledged,
//! so it is dropped on open. Any other line that does not parse is corruption, reported with
//! the file and line.
//!
//! Invariant: what the file holds is exactly what openraft was told is durable, plus at most
//! one unacknowledged partial line.

use super::types::TypeConfig;
use openraft::storage::{LogFlushed, LogState, RaftLogStorage};
use openraft::{Entry, LogId, OptionalSend, RaftLogReader, StorageError, StorageIOError, Vote};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::ops::RangeBounds;
use std::path::{Path, PathBuf};
use std::sync::Arc;

type NodeId = u64;

/// The log store; clones share it (one is openraft's log reader).
#[derive(Clone)]
pub struct LogStore {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    dir: PathBuf,
    entries: BTreeMap<u64, Entry<TypeConfig>>,
    vote: Option<Vote<NodeId>>,
    purged: Option<LogId<NodeId>>,
    committed: Option<LogId<NodeId>>,
    file: File,
}

fn io_error(path: &Path, e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(format!("{}: {e}", path.display()))
}

impl LogStore {
    /// Opens (or creates) the log in `dir`.
    pub fn open(dir: &Path) -> std::io::Result<LogStore> {
        std::fs::create_dir_all(dir)?;
        let vote = read_json(&dir.join("vote"))?;
        let purged = read_json(&dir.join("purged"))?;
        let committed = read_json(&dir.join("committed"))?;
        let path = dir.join("log");
        let mut entries = BTreeMap::new();
        if let Ok(text) = std::fs::read_to_string(&path) {
            let complete = text.ends_with('\n');
            let lines: Vec<&str> = text.lines().collect();
            for (n, line) in lines.iter().enumerate() {
                match serde_json::from_str::<Entry<TypeConfig>>(line) {
                    Ok(e) => {
                        entries.insert(e.log_id.index, e);
                    }
                    // A torn last append: never acknowledged.
                    Err(_) if n + 1 == lines.len() && !complete => {
                        tracing::warn!("{}: dropping a partial last entry", path.display());
                    }
                    Err(e) => {
                        return Err(io_error(&path, format!("line {}: {e}", n + 1)));
                    }
                }
            }
        }
        let mut store = Inner {
            dir: dir.to_path_buf(),
            entries,
            vote,
            purged,
            committed,
            file: OpenOptions::new().create(true).append(true).open(&path)?,
        };
        // Rewrite without a torn tail, so appends start on a fresh line.
        store.rewrite()?;
        Ok(LogStore {
            inner: Arc::new(Mutex::new(store)),
        })
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> std::io::Result<Option<T>> {
    match std::fs::read(path) {
        Ok(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| io_error(path, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(value).map_err(|e| io_error(path, e))?;
    cairn_engine::io::write_file_atomically(path, &bytes).map_err(|e| io_error(path, e))
}

impl Inner {
    /// Replaces the log file with the entries held (atomically).
    fn rewrite(&mut self) -> std::io::Result<()> {
        let path = self.dir.join("log");
        let mut text = Vec::new();
        for e in self.entries.values() {
            serde_json::to_writer(&mut text, e).map_err(|err| io_error(&path, err))?;
            text.push(b'\n');
        }
        cairn_engine::io::write_file_atomically(&path, &text).map_err(|e| io_error(&path, e))?;
        self.file = OpenOptions::new().append(true).open(&path)?;
        Ok(())
    }

    fn last_log_id(&self) -> Option<LogId<NodeId>> {
        self.entries
            .values()
            .next_back()
            .map(|e| e.log_id)
            .or(self.purged)
    }
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry<TypeConfig>>, StorageError<NodeId>> {
        let inner = self.inner.lock();
        Ok(inner.entries.range(range).map(|(_, e)| e.clone()).collect())
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError<NodeId>> {
        let inner = self.inner.lock();
        Ok(LogState {
            last_purged_log_id: inner.purged,
            last_log_id: inner.last_log_id(),
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote<NodeId>) -> Result<(), StorageError<NodeId>> {
        let mut inner = self.inner.lock();
        write_json(&inner.dir.join("vote"), vote).map_err(|e| StorageIOError::write_vote(&e))?;
        inner.vote = Some(*vote);
        Ok(())
    }

    async fn save_committed(
        &mut self,
        committed: Option<LogId<NodeId>>,
    ) -> Result<(), StorageError<NodeId>> {
        let mut inner = self.inner.lock();
        if inner.committed == committed {
            return Ok(());
        }
        write_json(&inner.dir.join("committed"), &committed)
            .map_err(|e| StorageIOError::write_logs(&e))?;
        inner.committed = committed;
        Ok(())
    }

    async fn read_committed(&mut self) -> Result<Option<LogId<NodeId>>, StorageError<NodeId>> {
        Ok(self.inner.lock().committed)
    }

    async fn read_vote(&mut self) -> Result<Option<Vote<NodeId>>, StorageError<NodeId>> {
        Ok(self.inner.lock().vote)
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> Result<(), StorageError<NodeId>>
    where
        I: IntoIterator<Item = Entry<TypeConfig>> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut inner = self.inner.lock();
        let mut text = Vec::new();
        let mut added = Vec::new();
        for e in entries {
            serde_json::to_writer(&mut text, &e).map_err(|err| StorageIOError::write_logs(&err))?;
            text.push(b'\n');
            added.push(e);
        }
        let written = inner
            .file
            .write_all(&text)
            .and_then(|()| inner.file.sync_data());
        match written {
            Ok(()) => {
                for e in added {
                    inner.entries.insert(e.log_id.index, e);
                }
                callback.log_io_completed(Ok(()));
                Ok(())
            }
            Err(e) => {
                let err = StorageIOError::write_logs(&e);
                callback.log_io_completed(Err(e));
                Err(err.into())
            }
        }
    }

    async fn truncate(&mut self, log_id: LogId<NodeId>) -> Result<(), StorageError<NodeId>> {
        let mut inner = self.inner.lock();
        inner.entries.split_off(&log_id.index);
        inner
            .rewrite()
            .map_err(|e| StorageIOError::write_logs(&e))?;
        Ok(())
    }

    async fn purge(&mut self, log_id: LogId<NodeId>) -> Result<(), StorageError<NodeId>> {
        let mut inner = self.inner.lock();
        write_json(&inner.dir.join("purged"), &log_id)
            .map_err(|e| StorageIOError::write_logs(&e))?;
        inner.purged = Some(log_id);
        let keep = inner.entries.split_off(&(log_id.index + 1));
        inner.entries = keep;
        inner
            .rewrite()
            .map_err(|e| StorageIOError::write_logs(&e))?;
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use openraft::{CommittedLeaderId, EntryPayload};

    fn line(index: u64) -> String {
        let e: Entry<TypeConfig> = Entry {
            log_id: LogId::new(CommittedLeaderId::new(1, 1), index),
            payload: EntryPayload::Blank,
        };
        serde_json::to_string(&e).unwrap()
    }

    #[test]
    fn a_torn_last_line_is_dropped_a_bad_middle_one_is_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let torn = format!("{}\n{}\n{}", line(1), line(2), &line(3)[..10]);
        std::fs::write(dir.path().join("log"), torn).unwrap();
        let store = LogStore::open(dir.path()).unwrap();
        let indexes: Vec<u64> = store.inner.lock().entries.keys().copied().collect();
        assert_eq!(indexes, [1, 2]);
        // The file was rewritten whole: appends start on a fresh line.
        let text = std::fs::read_to_string(dir.path().join("log")).unwrap();
        assert_eq!(text, format!("{}\n{}\n", line(1), line(2)));

        let bad = format!("{}\n{{garbage\n{}\n", line(1), line(3));
        std::fs::write(dir.path().join("log"), bad).unwrap();
        let e = LogStore::open(dir.path()).err().unwrap().to_string();
        assert!(e.contains("log") && e.contains("line 2"), "{e}");
    }
}
