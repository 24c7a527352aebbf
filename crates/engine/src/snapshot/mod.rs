//! Snapshots, incremental backups and loading sstables into a live table — the engine's side
//! of `nodetool snapshot`, `listsnapshots`, `clearsnapshot`, `enablebackup`, `refresh`, and of
//! `auto_snapshot` before DROP and TRUNCATE. The server only exposes them.
//!
//! Layout, as Cassandra's and ScyllaDB's, inside each table directory:
//! - `snapshots/<tag>/`: hard links to every component of the sstables live when the snapshot
//!   was taken, `schema.cql` (the CQL that recreates the table, from the CQL layer's
//!   [`SchemaDescriber`]) and `manifest.json` ([`manifest`]). Nothing is copied: a snapshot
//!   costs directory entries, and its files share their blocks with the live sstables until
//!   compaction removes those — and then the snapshot keeps them, since removing a live
//!   sstable only removes its own link.
//! - `backups/`: hard links to every sstable flushed (or loaded by `refresh`) while
//!   incremental backups are on.
//! - `upload/`: sstables an operator places there for `refresh` ([`refresh`]).
//!
//! Automatic snapshots are named as Cassandra names them: `dropped-<ms>-<table>` and
//! `truncated-<ms>-<table>`. A dropped table's directory keeps its `snapshots/` and
//! `backups/` (everything else is deleted, the schema file first); it is listed and cleared
//! like a live table's, and removed once it holds neither.
//!
//! **Crash contract.** A snapshot is complete or absent after a crash: it is built under a
//! hidden staging name, its manifest written last, then published by renaming the directory
//! (see [`store`]); an interrupted snapshot or clear leaves only a dot-named directory, which
//! startup deletes. New sstable generations are numbered above every generation in
//! `snapshots/` and `backups/`, so a file name there always means the one sstable it was
//! linked from. A refresh interrupted before its commit record leaves the live table as it
//! was ([`refresh`]).

pub mod manifest;
pub mod refresh;
pub mod store;

pub use refresh::RefreshReport;
pub use store::{
    Snapshot, TableSnapshots, BACKUPS_DIR, MANIFEST_FILE, SCHEMA_CQL_FILE, SNAPSHOTS_DIR,
    UPLOAD_DIR,
};

use crate::error::{Error, IoResultExt, Result};
use crate::schema::TableSchema;
use crate::table::Table;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Gives the CQL that recreates a table (`schema.cql`): the CQL layer knows how to print it,
/// the engine does not speak CQL.
pub type SchemaDescriber = dyn Fn(&TableSchema) -> String + Send + Sync;

/// How to take a snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotOptions {
    /// Do not flush memtables first (the snapshot then lacks what they hold).
    pub skip_flush: bool,
    /// Remove the snapshot automatically this long after it was taken.
    pub ttl: Option<Duration>,
}

/// One table's snapshot, as `listsnapshots` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotDetails {
    /// Keyspace.
    pub keyspace: String,
    /// Table.
    pub table: String,
    /// The snapshot's tag.
    pub tag: String,
    /// When it was taken (ms since the epoch).
    pub created_at_ms: i64,
    /// When it expires, if it has a TTL.
    pub expires_at_ms: Option<i64>,
    /// Ephemeral (never, for snapshots Cairn takes).
    pub ephemeral: bool,
    /// Bytes of all its files.
    pub size_on_disk: u64,
    /// Bytes only it keeps on disk (files of sstables no longer live, and its own).
    pub true_size: u64,
    /// True when the table was dropped since.
    pub table_dropped: bool,
}

/// Refuses tags that cannot name a snapshot directory. Cassandra refuses the path
/// separator; Cairn also refuses the names `.` and `..`, and a leading dot, which marks its
/// own staging directories, and names longer than a file name can be.
pub fn check_tag(tag: &str) -> Result<()> {
    let reason = if tag.is_empty() {
        "it is empty"
    } else if tag.contains('/') || tag.contains('\0') {
        "it contains a path separator"
    } else if tag.starts_with('.') {
        "it starts with a dot"
    } else if tag.len() > 255 {
        // A tag is one directory name; `dropped-<ms>-<table>` of the longest table name
        // (222 bytes) still fits.
        "it is longer than 255 bytes"
    } else {
        return Ok(());
    };
    Err(Error::InvalidSnapshotTag {
        tag: tag.to_string(),
        reason,
    })
}

/// Cassandra's name for an automatic snapshot: `<prefix>-<ms since the epoch>-<table>`.
pub fn timestamped_tag(prefix: &str, table: &str, now_ms: i64) -> String {
    format!("{prefix}-{now_ms}-{table}")
}

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Checks that `tag` can name a new snapshot of each of `tables`: a valid name none of them
/// has a snapshot by.
pub fn check_new_tag(tables: &[Arc<Table>], tag: &str) -> Result<()> {
    check_tag(tag)?;
    if tables.iter().any(|t| t.snapshots().contains(tag)) {
        return Err(Error::SnapshotExists {
            tag: tag.to_string(),
        });
    }
    Ok(())
}

/// Takes snapshot `tag` of each of `tables` (already flushed, unless the caller chose not
/// to). Fails before linking anything if one of them already has the tag.
pub fn take(
    tables: &[Arc<Table>],
    tag: &str,
    opts: &SnapshotOptions,
    describer: Option<&SchemaDescriber>,
    now_ms: i64,
) -> Result<()> {
    check_new_tag(tables, tag)?;
    let expires = opts
        .ttl
        .map(|d| now_ms.saturating_add(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)));
    for t in tables {
        // The state holds every live sstable, so none of their files is deleted meanwhile.
        let state = t.state();
        let cql = describer.map(|d| d(&t.schema()));
        t.snapshots()
            .take(tag, &state.sstables, cql.as_deref(), now_ms, expires)?;
    }
    Ok(())
}

/// The snapshots of every table directory of a database: live tables' (the same
/// [`TableSnapshots`] each [`Table`] holds) and dropped tables'.
#[derive(Default)]
pub struct Registry {
    dirs: Mutex<BTreeMap<PathBuf, Arc<TableSnapshots>>>,
}

impl Registry {
    /// Records a table directory's snapshots.
    pub fn insert(&self, s: Arc<TableSnapshots>) {
        self.dirs.lock().insert(s.dir().to_path_buf(), s);
    }

    /// Forgets a table directory.
    pub fn remove(&self, dir: &Path) {
        self.dirs.lock().remove(dir);
    }

    /// Every table directory's snapshots, by directory.
    pub fn all(&self) -> Vec<Arc<TableSnapshots>> {
        self.dirs.lock().values().cloned().collect()
    }
}

/// Splits a table directory's name, `<table>-<id as 32 hex digits>`.
pub fn parse_table_dir(name: &str) -> Option<(&str, u128)> {
    let (table, id) = name.rsplit_once('-')?;
    if id.len() != 32 || table.is_empty() {
        return None;
    }
    Some((table, u128::from_str_radix(id, 16).ok()?))
}

/// Finishes deleting a dropped table's directory: removes everything but a non-empty
/// `snapshots/` or `backups/` (the schema file first, so a crash midway never leaves a table that opens
/// with part of its data), and the directory itself once nothing is left. Returns whether
/// the directory remains.
pub fn finish_drop(dir: &Path) -> Result<bool> {
    let schema = dir.join(crate::schema::SCHEMA_FILE);
    match std::fs::remove_file(&schema) {
        Ok(()) => crate::io::sync_dir(dir)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(&schema, e)),
    }
    let mut kept = false;
    for entry in std::fs::read_dir(dir).with_path(dir)? {
        let entry = entry.with_path(dir)?;
        let path = entry.path();
        let name = entry.file_name();
        if name == SNAPSHOTS_DIR || name == BACKUPS_DIR {
            let empty = std::fs::read_dir(&path).with_path(&path)?.next().is_none();
            if !empty {
                kept = true;
                continue;
            }
        }
        let removed = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        match removed {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&path, e)),
        }
    }
    if kept {
        crate::io::sync_dir(dir)?;
    } else {
        std::fs::remove_dir(dir).with_path(dir)?;
        if let Some(parent) = dir.parent() {
            crate::io::sync_dir(parent)?;
        }
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_directory_names() {
        assert!(check_tag("daily-2026").is_ok());
        assert!(check_tag("1700000000000").is_ok());
        for bad in ["", ".", "..", ".tmp-x", "a/b", "x\0y"] {
            assert!(
                matches!(check_tag(bad), Err(Error::InvalidSnapshotTag { .. })),
                "{bad:?}"
            );
        }
        assert_eq!(
            timestamped_tag("dropped", "users", 1_700_000_000_123),
            "dropped-1700000000123-users"
        );
        let id = 0x0123_4567_89ab_cdef_0011_2233_4455_6677u128;
        let name = format!("my-table-{id:032x}");
        assert_eq!(parse_table_dir(&name), Some(("my-table", id)));
        assert_eq!(parse_table_dir("t-123"), None);
        assert_eq!(parse_table_dir("noid"), None);
    }
}
