//! The memtable: a table's recent writes in memory, ordered like an sstable.
//!
//! Partitions live in a lock-free skip list ordered by [`DecoratedKey`]; each partition's rows
//! sit in a `BTreeMap` behind a short mutex (writes to one partition rarely contend). Memory is
//! accounted with atomics as writes arrive: the charge is the heap size of what each write
//! adds, so overwrites count too — like an arena allocator, the memtable only grows until it is
//! flushed and dropped. Readers and a flush may run while writes continue; a flush works on a
//! memtable that has been switched out and receives no more writes.

use crate::model::{DecoratedKey, Partition, PartitionPos};
use crossbeam_skiplist::SkipMap;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};

/// Per-partition overhead charged on top of the data (skip-list node, mutex, key).
const PARTITION_OVERHEAD: usize = 96;

/// A table's in-memory write buffer.
pub struct Memtable {
    partitions: SkipMap<DecoratedKey, Mutex<Partition>>,
    bytes: AtomicUsize,
    min_timestamp: AtomicI64,
    max_timestamp: AtomicI64,
    writes: AtomicU64,
    /// Id of the memtable within its table (for logs and flush ordering).
    pub id: u64,
}

impl Memtable {
    /// An empty memtable.
    pub fn new(id: u64) -> Self {
        Memtable {
            partitions: SkipMap::new(),
            bytes: AtomicUsize::new(0),
            min_timestamp: AtomicI64::new(i64::MAX),
            max_timestamp: AtomicI64::new(i64::MIN),
            writes: AtomicU64::new(0),
            id,
        }
    }

    /// Merges an update into the partition; returns the bytes charged.
    pub fn apply(&self, key: &DecoratedKey, update: Partition) -> usize {
        let mut charge = update.heap_size();
        let (mut min_ts, mut max_ts) = (i64::MAX, i64::MIN);
        update.for_each_timestamp(|t| {
            min_ts = min_ts.min(t);
            max_ts = max_ts.max(t);
        });
        // One skip-list search whether the partition exists or not; a partition that is still
        // empty under its lock is one we just created, and pays the per-partition overhead.
        let entry = self
            .partitions
            .get_or_insert_with(key.clone(), || Mutex::new(Partition::default()));
        let mut partition = entry.value().lock();
        if partition.is_empty() {
            charge += PARTITION_OVERHEAD + key.key.len();
        }
        partition.merge(update);
        drop(partition);
        self.bytes.fetch_add(charge, Ordering::Relaxed);
        self.min_timestamp.fetch_min(min_ts, Ordering::Relaxed);
        self.max_timestamp.fetch_max(max_ts, Ordering::Relaxed);
        self.writes.fetch_add(1, Ordering::Relaxed);
        charge
    }

    /// A copy of one partition, if present.
    pub fn get(&self, key: &DecoratedKey) -> Option<Partition> {
        self.partitions.get(key).map(|e| e.value().lock().clone())
    }

    /// Runs `f` on one partition under its lock (lets readers copy only a slice).
    pub fn with_partition<R>(
        &self,
        key: &DecoratedKey,
        f: impl FnOnce(&Partition) -> R,
    ) -> Option<R> {
        self.partitions.get(key).map(|e| f(&e.value().lock()))
    }

    /// The first partition key at or after `pos`.
    pub fn next_key(&self, pos: &PartitionPos) -> Option<DecoratedKey> {
        use std::ops::Bound;
        let found = match pos {
            PartitionPos::TokenStart(t) => {
                // Smallest key with token >= t: the empty key sorts first within a token.
                let probe = DecoratedKey {
                    token: *t,
                    key: bytes::Bytes::new(),
                };
                self.partitions.lower_bound(Bound::Included(&probe))
            }
            PartitionPos::After(k) => self.partitions.lower_bound(Bound::Excluded(k)),
            PartitionPos::At(k) => self.partitions.lower_bound(Bound::Included(k)),
        };
        found.map(|e| e.key().clone())
    }

    /// Visits every partition in key order (used by flush, on a memtable no longer written).
    pub fn for_each(
        &self,
        mut f: impl FnMut(&DecoratedKey, &Partition) -> crate::Result<()>,
    ) -> crate::Result<()> {
        for e in self.partitions.iter() {
            f(e.key(), &e.value().lock())?;
        }
        Ok(())
    }

    /// Bytes charged so far.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Number of partitions.
    pub fn partition_count(&self) -> usize {
        self.partitions.len()
    }

    /// Number of writes applied.
    pub fn write_count(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.partitions.is_empty()
    }

    /// Smallest timestamp written (i64::MAX when empty).
    pub fn min_timestamp(&self) -> i64 {
        self.min_timestamp.load(Ordering::Relaxed)
    }

    /// Largest timestamp written (i64::MIN when empty).
    pub fn max_timestamp(&self) -> i64 {
        self.max_timestamp.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ClusteringKey, LivenessInfo, Row};
    use bytes::Bytes;
    use std::sync::Arc;

    fn update(ck: u8, ts: i64) -> Partition {
        let mut p = Partition::default();
        p.rows.insert(
            ClusteringKey(Bytes::from(vec![0x10, ck])),
            Row {
                marker: Some(LivenessInfo::live(ts)),
                ..Row::default()
            },
        );
        p
    }

    #[test]
    fn concurrent_writers_and_ordered_iteration() {
        let m = Arc::new(Memtable::new(1));
        let threads: Vec<_> = (0..4u8)
            .map(|t| {
                let m = Arc::clone(&m);
                std::thread::spawn(move || {
                    for i in 0..500u32 {
                        let key = DecoratedKey::new(Bytes::from(i.to_be_bytes().to_vec()));
                        m.apply(&key, update(t, i64::from(i)));
                    }
                })
            })
            .collect();
        for t in threads {
            assert!(t.join().is_ok());
        }
        assert_eq!(m.partition_count(), 500);
        assert_eq!(m.write_count(), 2000);
        let mut prev: Option<DecoratedKey> = None;
        let r = m.for_each(|k, p| {
            assert_eq!(p.rows.len(), 4);
            if let Some(prev) = &prev {
                assert!(prev < k);
            }
            prev = Some(k.clone());
            Ok(())
        });
        assert!(r.is_ok());
        assert!(m.bytes() > 2000 * 8);
        assert_eq!(m.min_timestamp(), 0);
        assert_eq!(m.max_timestamp(), 499);
    }
}
