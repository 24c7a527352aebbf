//! One table directory's snapshots on disk (`snapshots/<tag>/`) and their sizes in memory,
//! and the incremental-backup links of `backups/`.
//!
//! A snapshot directory is built under a hidden staging name (`snapshots/.tmp-<tag>`): hard
//! links to every component of the live sstables, `schema.cql`, then `manifest.json`; the
//! directory is fsynced, renamed to `snapshots/<tag>` and `snapshots/` fsynced. Clearing
//! renames it to `.del-<tag>` before deleting it. So a snapshot directory under its tag is
//! always complete, and [`TableSnapshots::load`] (startup) deletes every dot-named leftover of
//! an interrupted snapshot or clear. Tags never start with a dot (`super::check_tag`).
//!
//! Sizes are kept in memory per file (generation, bytes) so that `tablestats` and metrics
//! compute a snapshot's true size — the bytes of sstables no longer live, which the snapshot
//! alone keeps on disk — without a file-system call. A snapshot removed by hand is forgotten
//! at the next listing ([`TableSnapshots::forget_missing`]) or restart.

use super::manifest::Manifest;
use crate::error::{Error, IoResultExt, Result};
use crate::sstable::format::{component_path, parse_generation, Component, FORMAT_PREFIX};
use crate::sstable::reader::SSTable;
use crate::sstable::writer::write_synced;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A table directory's snapshot folder.
pub const SNAPSHOTS_DIR: &str = "snapshots";
/// A table directory's incremental backup folder.
pub const BACKUPS_DIR: &str = "backups";
/// A table directory's folder for sstables waiting to be loaded (`refresh`).
pub const UPLOAD_DIR: &str = "upload";
/// A snapshot's manifest.
pub const MANIFEST_FILE: &str = "manifest.json";
/// A snapshot's table definition, as CQL.
pub const SCHEMA_CQL_FILE: &str = "schema.cql";

const STAGING_PREFIX: &str = ".tmp-";
const DELETING_PREFIX: &str = ".del-";

/// One snapshot of one table, as kept in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Its tag (the directory's name).
    pub tag: String,
    /// When it was taken (ms since the epoch).
    pub created_at_ms: i64,
    /// When it expires, if it has a TTL.
    pub expires_at_ms: Option<i64>,
    /// Cassandra's internal snapshots are ephemeral; Cairn takes none, but lists what a
    /// manifest says.
    pub ephemeral: bool,
    /// Each sstable component file: (generation, bytes).
    files: Vec<(u64, u64)>,
    /// Bytes of every other file (`manifest.json`, `schema.cql`).
    other_bytes: u64,
}

impl Snapshot {
    /// Bytes of every file in the snapshot.
    pub fn size_on_disk(&self) -> u64 {
        self.files.iter().map(|(_, b)| b).sum::<u64>() + self.other_bytes
    }

    /// Bytes only the snapshot keeps on disk: files of sstables that are not live, and its
    /// own files (Cassandra's "true size").
    pub fn true_size(&self, is_live: &dyn Fn(u64) -> bool) -> u64 {
        self.files
            .iter()
            .filter(|(g, _)| !is_live(*g))
            .map(|(_, b)| b)
            .sum::<u64>()
            + self.other_bytes
    }
}

/// The snapshots of one table directory (a live table's, or a dropped table's whose
/// directory only holds snapshots and backups).
#[derive(Debug)]
pub struct TableSnapshots {
    dir: PathBuf,
    keyspace: String,
    table: String,
    snapshots: Mutex<BTreeMap<String, Snapshot>>,
    /// Held while a snapshot of this directory is taken or cleared.
    ops: Mutex<()>,
}

impl TableSnapshots {
    /// Reads `dir/snapshots/`: finishes interrupted snapshots and clears (deletes their
    /// dot-named directories) and records every snapshot's files and manifest.
    pub fn load(dir: &Path, keyspace: &str, table: &str) -> Result<TableSnapshots> {
        let root = dir.join(SNAPSHOTS_DIR);
        let mut snapshots = BTreeMap::new();
        if root.is_dir() {
            let mut removed = false;
            for entry in std::fs::read_dir(&root).with_path(&root)? {
                let entry = entry.with_path(&root)?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let path = entry.path();
                if name.starts_with(STAGING_PREFIX) || name.starts_with(DELETING_PREFIX) {
                    tracing::info!(path = %path.display(), "removing an interrupted snapshot");
                    std::fs::remove_dir_all(&path).with_path(&path)?;
                    removed = true;
                    continue;
                }
                if !path.is_dir() {
                    continue;
                }
                snapshots.insert(name.clone(), read_snapshot(&path, name)?);
            }
            if removed {
                crate::io::sync_dir(&root)?;
            }
        }
        Ok(TableSnapshots {
            dir: dir.to_path_buf(),
            keyspace: keyspace.to_string(),
            table: table.to_string(),
            snapshots: Mutex::new(snapshots),
            ops: Mutex::new(()),
        })
    }

    /// The table directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The keyspace.
    pub fn keyspace(&self) -> &str {
        &self.keyspace
    }

    /// The table's name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The snapshots, by tag.
    pub fn list(&self) -> Vec<Snapshot> {
        self.snapshots.lock().values().cloned().collect()
    }

    /// True when a snapshot has this tag.
    pub fn contains(&self, tag: &str) -> bool {
        self.snapshots.lock().contains_key(tag)
    }

    /// True when there is no snapshot.
    pub fn is_empty(&self) -> bool {
        self.snapshots.lock().is_empty()
    }

    /// (size on disk, true size) over every snapshot; `is_live` says whether a generation
    /// is a live sstable of the table.
    pub fn sizes(&self, is_live: &dyn Fn(u64) -> bool) -> (u64, u64) {
        self.snapshots
            .lock()
            .values()
            .fold((0, 0), |(total, true_size), s| {
                (total + s.size_on_disk(), true_size + s.true_size(is_live))
            })
    }

    /// The highest sstable generation any snapshot holds (0 when none): new sstables of the
    /// table are numbered above it, so a name in a snapshot always means one sstable.
    pub fn max_generation(&self) -> u64 {
        self.snapshots
            .lock()
            .values()
            .flat_map(|s| s.files.iter().map(|(g, _)| *g))
            .max()
            .unwrap_or(0)
    }

    /// Takes snapshot `tag` of `sstables` (which the caller holds, so their files exist):
    /// hard links to every component, `schema.cql` (when given) and the manifest, published
    /// by one rename (see the module docs). Fails if the tag exists.
    pub fn take(
        &self,
        tag: &str,
        sstables: &[Arc<SSTable>],
        schema_cql: Option<&str>,
        created_at_ms: i64,
        expires_at_ms: Option<i64>,
    ) -> Result<Snapshot> {
        let _op = self.ops.lock();
        if self.contains(tag) {
            return Err(Error::SnapshotExists {
                tag: tag.to_string(),
            });
        }
        let root = self.dir.join(SNAPSHOTS_DIR);
        std::fs::create_dir_all(&root).with_path(&root)?;
        let staging = root.join(format!("{STAGING_PREFIX}{tag}"));
        if staging.exists() {
            std::fs::remove_dir_all(&staging).with_path(&staging)?;
        }
        std::fs::create_dir(&staging).with_path(&staging)?;
        let built = self.build(&staging, sstables, schema_cql, created_at_ms, expires_at_ms);
        let snapshot = match built {
            Ok((files, other_bytes)) => Snapshot {
                tag: tag.to_string(),
                created_at_ms,
                expires_at_ms,
                ephemeral: false,
                files,
                other_bytes,
            },
            Err(e) => {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(e);
            }
        };
        let fin = root.join(tag);
        std::fs::rename(&staging, &fin).with_path(&fin)?;
        crate::io::sync_dir(&root)?;
        if let Some(parent) = root.parent() {
            crate::io::sync_dir(parent)?;
        }
        self.snapshots
            .lock()
            .insert(tag.to_string(), snapshot.clone());
        Ok(snapshot)
    }

    /// Fills the staging directory; returns the component files and the other bytes.
    fn build(
        &self,
        staging: &Path,
        sstables: &[Arc<SSTable>],
        schema_cql: Option<&str>,
        created_at_ms: i64,
        expires_at_ms: Option<i64>,
    ) -> Result<(Vec<(u64, u64)>, u64)> {
        let mut files = Vec::with_capacity(sstables.len() * Component::ALL.len());
        let mut manifest = Manifest {
            files: Vec::with_capacity(sstables.len()),
            created_at_ms: Some(created_at_ms),
            expires_at_ms,
            ephemeral: false,
        };
        for s in sstables {
            for c in Component::ALL {
                let from = s.path(c);
                let to = component_path(staging, s.generation, c);
                std::fs::hard_link(&from, &to).with_path(&to)?;
                let bytes = std::fs::metadata(&to).with_path(&to)?.len();
                files.push((s.generation, bytes));
            }
            manifest.files.push(format!(
                "{FORMAT_PREFIX}-{}-{}",
                s.generation,
                Component::Data.suffix()
            ));
        }
        let mut other = 0;
        if let Some(cql) = schema_cql {
            let path = staging.join(SCHEMA_CQL_FILE);
            write_synced(&path, cql.as_bytes())?;
            other += cql.len() as u64;
        }
        // The manifest last: a snapshot directory holding one is complete.
        let json = manifest.to_json();
        write_synced(&staging.join(MANIFEST_FILE), json.as_bytes())?;
        other += json.len() as u64;
        crate::io::sync_dir(staging)?;
        Ok((files, other))
    }

    /// Removes snapshot `tag` (see the module docs for why it is renamed first). Returns
    /// whether it existed.
    pub fn remove(&self, tag: &str) -> Result<bool> {
        let _op = self.ops.lock();
        let root = self.dir.join(SNAPSHOTS_DIR);
        let path = root.join(tag);
        if !path.is_dir() {
            return Ok(self.snapshots.lock().remove(tag).is_some());
        }
        let doomed = root.join(format!("{DELETING_PREFIX}{tag}"));
        std::fs::rename(&path, &doomed).with_path(&path)?;
        crate::io::sync_dir(&root)?;
        self.snapshots.lock().remove(tag);
        std::fs::remove_dir_all(&doomed).with_path(&doomed)?;
        crate::io::sync_dir(&root)?;
        Ok(true)
    }

    /// Forgets snapshots whose directory is gone (deleted by hand).
    pub fn forget_missing(&self) {
        let root = self.dir.join(SNAPSHOTS_DIR);
        self.snapshots
            .lock()
            .retain(|tag, _| root.join(tag).is_dir());
    }
}

/// Reads one snapshot directory written by [`TableSnapshots::take`] (or copied in by hand:
/// without a manifest, its creation time is the directory's modification time).
fn read_snapshot(path: &Path, tag: String) -> Result<Snapshot> {
    let mut files = Vec::new();
    let mut other_bytes = 0;
    let mut manifest = None;
    for entry in std::fs::read_dir(path).with_path(path)? {
        let entry = entry.with_path(path)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let meta = entry.metadata().with_path(&entry.path())?;
        match parse_generation(&name) {
            Some(g) if meta.is_file() => files.push((g, meta.len())),
            _ => other_bytes += meta.len(),
        }
        if name == MANIFEST_FILE {
            manifest = std::fs::read_to_string(entry.path())
                .ok()
                .and_then(|t| Manifest::parse(&t));
        }
    }
    files.sort_unstable();
    let mtime_ms = std::fs::metadata(path)
        .with_path(path)?
        .mtime()
        .saturating_mul(1000);
    let m = manifest.unwrap_or_default();
    Ok(Snapshot {
        tag,
        created_at_ms: m.created_at_ms.unwrap_or(mtime_ms),
        expires_at_ms: m.expires_at_ms,
        ephemeral: m.ephemeral,
        files,
        other_bytes,
    })
}

/// Hard-links every component of sstable `generation` of table directory `dir` into
/// `dir/backups/` (incremental backups), durably. A link already there to the same file is
/// fine (a retried backup).
pub fn backup(dir: &Path, generation: u64) -> Result<()> {
    let backups = dir.join(BACKUPS_DIR);
    std::fs::create_dir_all(&backups).with_path(&backups)?;
    for c in Component::ALL {
        let from = component_path(dir, generation, c);
        let to = component_path(&backups, generation, c);
        match std::fs::hard_link(&from, &to) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && same_file(&from, &to) => {}
            Err(e) => return Err(Error::io(&to, e)),
        }
    }
    crate::io::sync_dir(&backups)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The highest sstable generation in `dir/backups/` (0 when none).
pub fn max_backup_generation(dir: &Path) -> Result<u64> {
    let backups = dir.join(BACKUPS_DIR);
    if !backups.is_dir() {
        return Ok(0);
    }
    let mut max = 0;
    for entry in std::fs::read_dir(&backups).with_path(&backups)? {
        let entry = entry.with_path(&backups)?;
        if let Some(g) = parse_generation(&entry.file_name().to_string_lossy()) {
            max = max.max(g);
        }
    }
    Ok(max)
}
