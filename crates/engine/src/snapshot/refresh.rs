//! `nodetool refresh`: loading the sstables placed in a table's `upload/` directory into the
//! live table (ScyllaDB's layout; Cassandra's `nodetool import` does the same job).
//!
//! 1. **Check.** Every file of `upload/` must be a component of a complete Cairn sstable
//!    (`manifest.json` and `schema.cql`, which a copied snapshot brings along, are left
//!    alone). Each sstable is opened (its small components' CRCs checked), every checksum of
//!    its data, index and clustering-block index files is verified — each byte read once,
//!    sstables in parallel — and its serialization header is checked against the table's
//!    schema, so no cell is ever read as another column's. The first problem is an error that
//!    names the file (and the offset, for a checksum), and nothing is loaded.
//! 2. **Publish,** through a compaction transaction log (`txn-<id>.log`, see
//!    `compaction::txn`): each sstable gets a fresh generation announced in the log, its
//!    components are hard-linked into the table directory (and fsynced: a copy made with `cp`
//!    may not be on disk yet), except `Statistics.db`, rewritten with level 0, an empty
//!    commitlog interval (a foreign interval would move the table's replay floor and skip
//!    its own commitlog records at the next start) and fresh run ids, and its TOC written
//!    last. One commit record makes them all live; they join the live set in one swap. Then
//!    the files in `upload/` are removed.
//!
//! Crash contract: before the commit record, startup deletes the half-linked sstables (they
//! were announced but never committed) and `upload/` is untouched — the live table is as it
//! was, and `refresh` can run again. After it, the sstables are live; `upload/` may still
//! hold their files, and loading them again would only add duplicates of the same cells
//! (reconciled away).
//!
//! Reads go on throughout: only the final swap touches the live set.

use super::store;
use crate::compaction::txn::TxnLog;
use crate::error::{Error, IoResultExt, LoadProblem, Result};
use crate::metrics::IoCounters;
use crate::sstable::format::delete_sstable_files;
use crate::sstable::format::{component_path, parse_generation, Component, FORMAT_PREFIX};
use crate::sstable::reader::SSTable;
use crate::table::Table;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes per read when verifying a data file.
const VERIFY_READ: usize = 4 << 20;

/// What a refresh loaded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefreshReport {
    /// The generations the loaded sstables got in the table.
    pub generations: Vec<u64>,
    /// Bytes read to verify them.
    pub bytes_verified: u64,
    /// Partitions they hold.
    pub partitions: u64,
    /// Time spent checking them (step 1).
    pub verify_time: std::time::Duration,
    /// Time spent publishing them (step 2).
    pub publish_time: std::time::Duration,
}

/// Loads `table`'s `upload/` sstables (see the module docs). An empty `upload/` loads
/// nothing; a missing one is created.
pub fn load_uploaded(table: &Table) -> Result<RefreshReport> {
    let _one_at_a_time = table.refresh_lock();
    let upload = table.dir().join(store::UPLOAD_DIR);
    std::fs::create_dir_all(&upload).with_path(&upload)?;
    let generations = scan(&upload)?;
    if generations.is_empty() {
        return Ok(RefreshReport::default());
    }
    let start = std::time::Instant::now();
    let (sstables, bytes_verified) = verify_all(table, &upload, &generations)?;
    let verify_time = start.elapsed();
    let partitions = sstables.iter().map(|s| s.stats.partition_count).sum();
    let loaded = publish(table, &upload, &sstables)?;
    Ok(RefreshReport {
        generations: loaded,
        bytes_verified,
        partitions,
        verify_time,
        publish_time: start.elapsed().saturating_sub(verify_time),
    })
}

/// The generations of `upload/`, each with all its components; any other file is an error.
fn scan(upload: &Path) -> Result<Vec<u64>> {
    let mut found: BTreeMap<u64, Vec<Component>> = BTreeMap::new();
    let mut names: Vec<(String, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(upload).with_path(upload)? {
        let entry = entry.with_path(upload)?;
        names.push((
            entry.file_name().to_string_lossy().into_owned(),
            entry.path(),
        ));
    }
    names.sort();
    for (name, path) in names {
        if name == store::MANIFEST_FILE || name == store::SCHEMA_CQL_FILE {
            continue;
        }
        let component = parse_generation(&name).and_then(|g| {
            Component::ALL
                .into_iter()
                .find(|c| name == format!("{FORMAT_PREFIX}-{g}-{}", c.suffix()))
                .map(|c| (g, c))
        });
        match component {
            Some((g, c)) if path.is_file() => found.entry(g).or_default().push(c),
            _ => {
                return Err(Error::Unloadable {
                    path,
                    problem: LoadProblem::NotCairnSSTable,
                })
            }
        }
    }
    for (g, have) in &found {
        if let Some(missing) = Component::ALL.into_iter().find(|c| !have.contains(c)) {
            let any = have.first().copied().unwrap_or(Component::Data);
            return Err(Error::Unloadable {
                path: component_path(upload, *g, any),
                problem: LoadProblem::MissingComponent(format!(
                    "{FORMAT_PREFIX}-{g}-{}",
                    missing.suffix()
                )),
            });
        }
    }
    Ok(found.into_keys().collect())
}

/// An sstable of `upload/` that passed every check, with the bytes read to check it.
type Verified = (Arc<SSTable>, u64);

/// Opens and verifies every uploaded sstable, on up to two threads (each sstable's files are
/// read once, front to back). Returns them in generation order and the bytes read.
fn verify_all(
    table: &Table,
    upload: &Path,
    generations: &[u64],
) -> Result<(Vec<Arc<SSTable>>, u64)> {
    let schema = table.schema();
    let name = format!("{}.{}", schema.keyspace, schema.name);
    let io = Arc::new(IoCounters::default());
    let one = |g: u64| -> Result<Verified> {
        let sst = SSTable::open(upload, g, Arc::clone(&io))?;
        let bytes = sst.verify(VERIFY_READ)?;
        let statistics = component_path(upload, g, Component::Statistics);
        let Some(header) = &sst.stats.header else {
            return Err(Error::Unloadable {
                path: statistics,
                problem: LoadProblem::NoHeader,
            });
        };
        header
            .check_compatible(&schema)
            .map_err(|reason| Error::Unloadable {
                path: statistics,
                problem: LoadProblem::Incompatible {
                    table: name.clone(),
                    reason,
                },
            })?;
        Ok((Arc::new(sst), bytes))
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 2)
        .min(generations.len());
    let per = generations.len().div_ceil(threads);
    let results: Vec<Result<Vec<Verified>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = generations
            .chunks(per)
            .map(|part| scope.spawn(move || part.iter().map(|g| one(*g)).collect()))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(Error::io(
                        upload,
                        std::io::Error::other("verifier thread panicked"),
                    ))
                })
            })
            .collect()
    });
    let mut out = Vec::with_capacity(generations.len());
    let mut bytes = 0;
    for r in results {
        for (sst, b) in r? {
            out.push(sst);
            bytes += b;
        }
    }
    Ok((out, bytes))
}

/// Moves the verified sstables into the table under one transaction (module docs, step 2).
fn publish(table: &Table, upload: &Path, sstables: &[Arc<SSTable>]) -> Result<Vec<u64>> {
    let dir = table.dir();
    let gens: Vec<u64> = sstables.iter().map(|_| table.next_generation()).collect();
    // Never a compaction job's id (those count up from 1): the log's name is the first new
    // generation with the top bit set.
    let txn_id = gens.first().copied().unwrap_or(0) | (1 << 63);
    let log = TxnLog::create(dir, txn_id)?;
    let mut runs: HashMap<u128, u128> = HashMap::new();
    let linked = (|| -> Result<Vec<Arc<SSTable>>> {
        for g in &gens {
            log.add(*g)?;
        }
        let mut opened = Vec::with_capacity(sstables.len());
        for (src, &g) in sstables.iter().zip(&gens) {
            for c in Component::ALL {
                if matches!(c, Component::Statistics | Component::Toc) {
                    continue;
                }
                let from = component_path(upload, src.generation, c);
                let to = component_path(dir, g, c);
                std::fs::hard_link(&from, &to).with_path(&to)?;
                std::fs::File::open(&to)
                    .and_then(|f| f.sync_all())
                    .with_path(&to)?;
            }
            let mut stats = src.stats.clone();
            stats.level = 0;
            stats.commitlog_lower = (0, 0);
            stats.commitlog_upper = (0, 0);
            stats.run_id = *runs
                .entry(src.stats.run_id)
                .or_insert_with(crate::schema::rand_table_id);
            let path = component_path(dir, g, Component::Statistics);
            crate::sstable::writer::write_synced(&path, &crate::io::with_crc(stats.encode()))?;
            let toc: String = Component::ALL
                .iter()
                .map(|c| format!("{}\n", c.suffix()))
                .collect();
            crate::io::write_file_atomically(
                &component_path(dir, g, Component::Toc),
                toc.as_bytes(),
            )?;
            opened.push(Arc::new(table.open_sstable(g)?));
        }
        crate::io::sync_dir(dir)?;
        log.commit(&gens, &[])?;
        Ok(opened)
    })();
    let opened = match linked {
        Ok(o) => o,
        Err(e) => {
            // Nothing was committed: take back what was linked (startup would, too).
            for g in &gens {
                if let Err(d) = delete_sstable_files(dir, *g) {
                    tracing::warn!("refresh of {} left sstable {g} behind: {d}", dir.display());
                }
            }
            return Err(e);
        }
    };
    table.replace_sstables(&[], opened.clone());
    invalidate_row_cache(table, &opened);
    drop(log);
    for src in sstables {
        for c in Component::ALL {
            let path = component_path(upload, src.generation, c);
            if let Err(e) = std::fs::remove_file(&path) {
                tracing::warn!(path = %path.display(), "loaded, but could not remove: {e}");
            }
        }
    }
    crate::io::sync_dir(upload)?;
    // Loaded sstables are backed up like flushed ones (Cassandra backs up what it streams).
    if table.incremental_backups() {
        for g in &gens {
            store::backup(dir, *g)?;
        }
    }
    Ok(gens)
}

/// ROW CACHE HOOK. Loaded sstables may hold cells newer than what a row cache holds for
/// their partitions, so the cached partitions in each sstable's key range
/// (`stats.first_key ..= stats.last_key`) must be invalidated right after the swap that makes
/// them live. The whole table's cache goes for now (key ranges are a refinement to come).
fn invalidate_row_cache(table: &Table, _loaded: &[Arc<SSTable>]) {
    table.invalidate_cache();
}
