//! The memtable: a table's recent writes in memory, ordered like an sstable.
//!
//! Partitions are split into shards by the high bits of their token, so each shard is a
//! contiguous token range and visiting the shards in token order visits every partition in
//! key order. A shard holds its partitions twice, behind one lock: in a hash map for point
//! lookups (a write to an existing partition, a single-partition read: one or two cache
//! misses, where a search of an ordered structure of 100 000 partitions is a dozen or more),
//! and in a B-tree in key order for scans and the flush. A new partition is inserted into both
//! under the shard's write lock, so whatever the hash map finds, ordered scans find too. Each
//! partition's data sits behind a short mutex (writes to one partition rarely contend).
//!
//! Memory is accounted with atomics as writes arrive, and the charge is meant to be what the
//! memtable really holds — the shard maps' entries and table growth, the partition's slot,
//! its rows' storage and data — not only the data. An overwrite costs only what it adds over
//! the value it replaces (the old value is dropped; a shrinking write is charged nothing, so
//! the count never falls before the flush). Rows live in a [`MemPartition`]: a partition of
//! one row (the common case of a write workload creating partitions) keeps it inline, a few
//! rows sit in a sorted vector, and only a partition of more than [`SMALL_ROWS`] rows pays for
//! a `BTreeMap`, whose 11-slot nodes would otherwise cost ~1.2 KiB per tiny partition.
//!
//! Readers and a flush may run while writes continue; a flush works on a memtable that has
//! been switched out and receives no more writes.
//!
//! One file of about 700 lines and its tests: the shards, the partition shapes and the
//! accounting are one invariant (what the memtable holds is what it charged), and split
//! apart each would need the others' internals.

use crate::error::{Error, Result};
use crate::io::Wait;
use crate::metrics::ReadKind;
use crate::model::{ClusteringKey, DecoratedKey, DeletionTime, Partition, PartitionPos};
use crate::model::{ClusteringRange, RangeTombstone, Row};
use crate::read::source::{
    PartitionScan, PartitionSource, RowStream, SourcePartition, SourceQuery,
};
use parking_lot::{Mutex, RwLock};
use smallvec::SmallVec;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::mem::size_of;
use std::ops::Bound;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Shards (a power of two; partitions are assigned by the top bits of their token).
const SHARDS: usize = 16;

/// Rows a partition keeps in a sorted vector before it moves them to a `BTreeMap`: inserting
/// into a sorted vector moves the rows after the new one, cheap for a few, quadratic for a
/// wide partition.
pub const SMALL_ROWS: usize = 16;

type Slot = Arc<Mutex<MemPartition>>;

type RowEntry = (ClusteringKey, Row);

/// One shard: its partitions by hash and in key order.
#[derive(Default)]
struct Shard {
    index: HashMap<TokenKeyed, Slot, BuildHasherDefault<TokenHasher>>,
    ordered: BTreeMap<DecoratedKey, Slot>,
}

/// A table's in-memory write buffer.
pub struct Memtable {
    shards: Box<[RwLock<Shard>]>,
    bytes: AtomicUsize,
    partitions: AtomicUsize,
    min_timestamp: AtomicI64,
    max_timestamp: AtomicI64,
    writes: AtomicU64,
    /// Id of the memtable within its table (for logs and flush ordering).
    pub id: u64,
}

/// Heap bytes a new partition costs besides its key bytes and its rows: its slot (the
/// `Arc`'s counts, the mutex and the [`MemPartition`], a single row inline), its share of the
/// ordered map's nodes (B-tree nodes are at least half full: two slots per entry, plus the
/// edges of the inner nodes) and the shared header the two clones of its key allocate. The
/// hash map is charged as its table grows ([`index_table_bytes`]).
const PARTITION_OVERHEAD: usize = 2 * size_of::<usize>()
    + size_of::<Mutex<MemPartition>>()
    + 2 * size_of::<(DecoratedKey, Slot)>()
    + size_of::<usize>()
    + KEY_SHARE_HEADER;

/// What a `Bytes` made from a vector allocates when it is first cloned (its shared header).
const KEY_SHARE_HEADER: usize = 3 * size_of::<usize>();

/// Heap bytes of a shard's hash table able to hold `capacity` entries: buckets (a power of
/// two, at most 7/8 full) of one entry and one control byte each.
fn index_table_bytes(capacity: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = if capacity < 8 {
        capacity + 1
    } else {
        (capacity * 8 / 7).next_power_of_two()
    };
    buckets * (size_of::<(TokenKeyed, Slot)>() + 1)
}

/// A key of the point index. It hashes exactly as the [`DecoratedKey`] it wraps (so the map
/// can be queried with a `&DecoratedKey`); [`TokenHasher`] keeps only the token of that.
#[derive(PartialEq, Eq)]
struct TokenKeyed(DecoratedKey);

impl Hash for TokenKeyed {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl std::borrow::Borrow<DecoratedKey> for TokenKeyed {
    fn borrow(&self) -> &DecoratedKey {
        &self.0
    }
}

/// Hashes a [`DecoratedKey`] to its token, which is a Murmur3 hash of the key already: the
/// first `i64` written (the key hashes its token first) is the hash, and the key bytes that
/// follow are skipped.
#[derive(Default)]
struct TokenHasher {
    hash: u64,
    done: bool,
}

impl Hasher for TokenHasher {
    fn finish(&self) -> u64 {
        self.hash
    }
    fn write(&mut self, bytes: &[u8]) {
        if !self.done {
            // Not reached for decorated keys; fold bytes in to remain a correct hasher.
            for &b in bytes {
                self.hash = self.hash.rotate_left(8) ^ u64::from(b);
            }
        }
    }
    fn write_i64(&mut self, token: i64) {
        if !self.done {
            self.hash = token as u64;
            self.done = true;
        }
    }
}

/// The shard of a token: its top bits, with the sign flipped so that shard order is token
/// order (the hash maps use the low bits).
fn shard_of(token: i64) -> usize {
    (((token as u64) ^ (1 << 63)) >> 60) as usize % SHARDS
}

impl Memtable {
    /// An empty memtable.
    pub fn new(id: u64) -> Self {
        Memtable {
            shards: (0..SHARDS).map(|_| RwLock::default()).collect(),
            bytes: AtomicUsize::new(0),
            partitions: AtomicUsize::new(0),
            min_timestamp: AtomicI64::new(i64::MAX),
            max_timestamp: AtomicI64::new(i64::MIN),
            writes: AtomicU64::new(0),
            id,
        }
    }

    fn shard(&self, key: &DecoratedKey) -> &RwLock<Shard> {
        &self.shards[shard_of(key.token.0)]
    }

    /// Runs `f` on the partition `key`, if present. The slot is used under the shard's read
    /// guard instead of cloning its `Arc`: every reference-count change is an atomic write to
    /// a cache line the other reactor threads touch too.
    fn with_slot<R>(&self, key: &DecoratedKey, f: impl FnOnce(&Slot) -> R) -> Option<R> {
        self.shard(key).read().index.get(key).map(f)
    }

    /// Merges an update into the partition; returns the bytes charged.
    pub fn apply(&self, key: &DecoratedKey, update: Partition) -> usize {
        let mut charge = 0;
        let (mut min_ts, mut max_ts) = (i64::MAX, i64::MIN);
        update.for_each_timestamp(|t| {
            min_ts = min_ts.min(t);
            max_ts = max_ts.max(t);
        });
        // The common case, an existing partition, merges under the shard's read guard; the
        // update moves into the closure only when it runs.
        let mut update = Some(update);
        let merged = self.with_slot(key, |slot| match update.take() {
            Some(u) => slot.lock().merge_growth(u),
            None => 0,
        });
        match (merged, update) {
            (Some(grown), _) => charge += grown,
            (None, Some(update)) => {
                let mut shard = self.shard(key).write();
                match shard.index.get(key) {
                    Some(slot) => charge += slot.lock().merge_growth(update),
                    None => {
                        // A new partition is built before it is shared: no lock to take.
                        let mut partition = MemPartition::default();
                        charge +=
                            PARTITION_OVERHEAD + key.key.len() + partition.merge_growth(update);
                        let slot: Slot = Arc::new(Mutex::new(partition));
                        let table_before = index_table_bytes(shard.index.capacity());
                        shard.ordered.insert(key.clone(), Arc::clone(&slot));
                        shard.index.insert(TokenKeyed(key.clone()), slot);
                        charge += index_table_bytes(shard.index.capacity()) - table_before;
                        self.partitions.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            (None, None) => {}
        }
        self.bytes.fetch_add(charge, Ordering::Relaxed);
        self.min_timestamp.fetch_min(min_ts, Ordering::Relaxed);
        self.max_timestamp.fetch_max(max_ts, Ordering::Relaxed);
        self.writes.fetch_add(1, Ordering::Relaxed);
        charge
    }

    /// A copy of one partition, if present.
    pub fn get(&self, key: &DecoratedKey) -> Option<Partition> {
        self.with_slot(key, |slot| slot.lock().to_partition())
    }

    /// Runs `f` on one partition under its lock (lets readers copy only a slice).
    pub fn with_partition<R>(
        &self,
        key: &DecoratedKey,
        f: impl FnOnce(&MemPartition) -> R,
    ) -> Option<R> {
        self.with_slot(key, |slot| f(&slot.lock()))
    }

    /// The first partition key at or after `pos`.
    pub fn next_key(&self, pos: &PartitionPos) -> Option<DecoratedKey> {
        let probe;
        let (token, lower) = match pos {
            PartitionPos::TokenStart(t) => {
                // Smallest key with token >= t: the empty key sorts first within a token.
                probe = DecoratedKey {
                    token: *t,
                    key: bytes::Bytes::new(),
                };
                (t.0, Bound::Included(&probe))
            }
            PartitionPos::After(k) => (k.token.0, Bound::Excluded(k)),
            PartitionPos::At(k) => (k.token.0, Bound::Included(k)),
        };
        let first = shard_of(token);
        if let Some(k) = self.shards[first]
            .read()
            .ordered
            .range((lower, Bound::Unbounded))
            .next()
        {
            return Some(k.0.clone());
        }
        // Later shards hold only greater tokens.
        self.shards[first + 1..]
            .iter()
            .find_map(|s| s.read().ordered.keys().next().cloned())
    }

    /// Visits every partition in key order (used by flush, on a memtable no longer written).
    pub fn for_each(
        &self,
        mut f: impl FnMut(&DecoratedKey, &MemPartition) -> crate::error::Result<()>,
    ) -> crate::error::Result<()> {
        for shard in self.shards.iter() {
            for (key, slot) in &shard.read().ordered {
                f(key, &slot.lock())?;
            }
        }
        Ok(())
    }

    /// Bytes charged so far.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Number of partitions.
    pub fn partition_count(&self) -> usize {
        self.partitions.load(Ordering::Relaxed)
    }

    /// Number of writes applied.
    pub fn write_count(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.partition_count() == 0
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

/// A partition as the memtable holds it: [`Partition`]'s content with the rows in a
/// representation sized for partitions of one or a few rows.
#[derive(Default)]
pub struct MemPartition {
    /// The partition tombstone, static row and range tombstones; its `rows` stay empty.
    head: Partition,
    rows: Rows,
    /// Writes merged in so far: a reader copying the rows in two steps checks that none
    /// came between them (see [`MemRows`]).
    version: u64,
}

/// A partition's clustering rows, in key order.
enum Rows {
    /// Up to [`SMALL_ROWS`] rows, sorted by key; one is kept inline.
    Small(SmallVec<[RowEntry; 1]>),
    /// More rows.
    Large(BTreeMap<ClusteringKey, Row>),
}

impl Default for Rows {
    fn default() -> Self {
        Rows::Small(SmallVec::new())
    }
}

/// Heap bytes of a row outside the slot holding it: its key's bytes and its columns.
fn row_heap(key: &ClusteringKey, row: &Row) -> usize {
    key.0.len() + row.heap_size().saturating_sub(size_of::<Row>())
}

/// Heap bytes a `BTreeMap` spends on an entry's slot: nodes are at least half full (two
/// slots per entry), plus the edges of the inner nodes.
const TREE_ENTRY: usize = 2 * size_of::<RowEntry>() + size_of::<usize>();

/// Heap bytes of a small row vector's slots (none while its one row is inline).
fn small_slots(v: &SmallVec<[RowEntry; 1]>) -> usize {
    if v.spilled() {
        v.capacity() * size_of::<RowEntry>()
    } else {
        0
    }
}

impl MemPartition {
    /// The partition tombstone.
    pub fn deletion(&self) -> Option<DeletionTime> {
        self.head.deletion
    }

    /// The static row.
    pub fn static_row(&self) -> Option<&Row> {
        self.head.static_row.as_ref()
    }

    /// The range tombstones, in no particular order.
    pub fn range_tombstones(&self) -> &[RangeTombstone] {
        &self.head.range_tombstones
    }

    /// The rows in key order.
    pub fn rows(&self) -> RowsIter<'_> {
        self.rows_in(Bound::Unbounded, Bound::Unbounded)
    }

    /// The rows with keys within the bounds, in key order.
    pub fn rows_in(&self, lo: Bound<&ClusteringKey>, hi: Bound<&ClusteringKey>) -> RowsIter<'_> {
        match &self.rows {
            Rows::Small(v) => {
                let start = match lo {
                    Bound::Included(k) => v.partition_point(|(x, _)| x < k),
                    Bound::Excluded(k) => v.partition_point(|(x, _)| x <= k),
                    Bound::Unbounded => 0,
                };
                let end = match hi {
                    Bound::Included(k) => v.partition_point(|(x, _)| x <= k),
                    Bound::Excluded(k) => v.partition_point(|(x, _)| x < k),
                    Bound::Unbounded => v.len(),
                };
                RowsIter::Small(v.get(start..end.max(start)).unwrap_or_default().iter())
            }
            // `BTreeMap::range` panics on an inverted or empty-and-excluded range.
            Rows::Large(_) if is_empty_range(lo, hi) => RowsIter::Small([].iter()),
            Rows::Large(t) => RowsIter::Large(t.range((lo, hi))),
        }
    }

    /// Visits every timestamp the partition carries.
    pub fn for_each_timestamp(&self, mut f: impl FnMut(i64)) {
        self.head.for_each_timestamp(&mut f);
        for (_, row) in self.rows() {
            row.for_each_timestamp(&mut f);
        }
    }

    /// A copy as a [`Partition`].
    pub fn to_partition(&self) -> Partition {
        let mut p = self.head.clone();
        p.rows = self.rows().map(|(k, r)| (k.clone(), r.clone())).collect();
        p
    }

    /// Merges `update` in (reconciliation) and returns how much the heap bytes the partition
    /// holds grew, or 0 when they shrank: what the memtable charges for the write.
    fn merge_growth(&mut self, mut update: Partition) -> usize {
        self.version += 1;
        let size = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        let rows = std::mem::take(&mut update.rows);
        // The head's own rows are empty, so `Partition` charges only the head's growth.
        let mut growth = size(self.head.merge_growth(update));
        for (key, row) in rows {
            growth += self.rows.merge_row(key, row);
        }
        usize::try_from(growth).unwrap_or(0)
    }
}

/// True when no key lies within the bounds.
fn is_empty_range(lo: Bound<&ClusteringKey>, hi: Bound<&ClusteringKey>) -> bool {
    match (lo, hi) {
        (Bound::Included(l), Bound::Included(h)) => l > h,
        (Bound::Included(l) | Bound::Excluded(l), Bound::Excluded(h))
        | (Bound::Excluded(l), Bound::Included(h)) => l >= h,
        _ => false,
    }
}

impl Rows {
    /// Merges one row; returns the change of heap bytes held.
    fn merge_row(&mut self, key: ClusteringKey, row: Row) -> i64 {
        let size = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        match self {
            Rows::Small(v) => match v.binary_search_by(|(k, _)| k.cmp(&key)) {
                Ok(i) => {
                    let (k, mine) = &mut v[i];
                    let before = size(row_heap(k, mine));
                    mine.merge(row);
                    size(row_heap(k, mine)) - before
                }
                Err(i) if v.len() < SMALL_ROWS => {
                    let slots_before = size(small_slots(v));
                    let added = size(row_heap(&key, &row));
                    v.insert(i, (key, row));
                    added + size(small_slots(v)) - slots_before
                }
                Err(_) => {
                    let freed = size(small_slots(v));
                    let tree: BTreeMap<_, _> = v.drain(..).collect();
                    let slots = size(tree.len() * TREE_ENTRY);
                    *self = Rows::Large(tree);
                    slots - freed + self.merge_row(key, row)
                }
            },
            Rows::Large(t) => match t.entry(key) {
                std::collections::btree_map::Entry::Occupied(mut e) => {
                    let before = size(row_heap(e.key(), e.get()));
                    e.get_mut().merge(row);
                    size(row_heap(e.key(), e.get())) - before
                }
                std::collections::btree_map::Entry::Vacant(e) => {
                    let added = size(row_heap(e.key(), &row) + TREE_ENTRY);
                    e.insert(row);
                    added
                }
            },
        }
    }
}

/// Iterator over a [`MemPartition`]'s rows.
pub enum RowsIter<'a> {
    /// Over a small partition's vector.
    Small(std::slice::Iter<'a, RowEntry>),
    /// Over a large partition's map.
    Large(std::collections::btree_map::Range<'a, ClusteringKey, Row>),
}

impl<'a> Iterator for RowsIter<'a> {
    type Item = (&'a ClusteringKey, &'a Row);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            RowsIter::Small(it) => it.next().map(|(k, r)| (k, r)),
            RowsIter::Large(it) => it.next(),
        }
    }
}

impl DoubleEndedIterator for RowsIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            RowsIter::Small(it) => it.next_back().map(|(k, r)| (k, r)),
            RowsIter::Large(it) => it.next_back(),
        }
    }
}

/// A memtable is a source of partitions ([`crate::read::source`]). Its rows are copied out
/// under the partition's lock (only the slice asked for), so a reader never holds a lock
/// while it merges, and sees each partition as of one instant: all of a write or none of it.
/// A read with a row budget (`LIMIT`) copies that many rows first and the rest only if the
/// merge asks ([`MemRows`]): a `LIMIT 1` at the head of a wide partition costs one row, not
/// the partition.
/// It gives no timestamp bound: writes land while it is read, so its
/// [`PartitionSource::timestamp_bound`] is the default "unknown".
impl PartitionSource for Arc<Memtable> {
    fn trace_label(&self) -> String {
        "memtable".into()
    }

    fn partition(
        &self,
        key: &DecoratedKey,
        _hash: (u64, u64),
        q: &SourceQuery<'_>,
    ) -> Result<Option<SourcePartition>> {
        Ok(self.view(key, q, q.row_budget))
    }

    fn scan_partitions(
        &self,
        start: &PartitionPos,
        _kind: ReadKind,
        // Memory only: nothing to wait for.
        _wait: Wait,
    ) -> Box<dyn PartitionScan> {
        Box::new(MemtableScan {
            memtable: Arc::clone(self),
            pos: start.clone(),
            peeked: None,
        })
    }
}

/// A scan of a memtable: each step finds the next key after the last one, so partitions
/// written meanwhile ahead of the scan are seen.
struct MemtableScan {
    memtable: Arc<Memtable>,
    pos: PartitionPos,
    peeked: Option<DecoratedKey>,
}

impl PartitionScan for MemtableScan {
    fn peek(&mut self) -> Result<Option<&DecoratedKey>> {
        if self.peeked.is_none() {
            self.peeked = self.memtable.next_key(&self.pos);
        }
        Ok(self.peeked.as_ref())
    }

    fn open(&mut self, q: &SourceQuery<'_>) -> Result<Option<SourcePartition>> {
        self.peek()?;
        let Some(key) = self.peeked.take() else {
            return Ok(None);
        };
        let p = self.memtable.view(&key, q, None);
        self.pos = PartitionPos::After(key);
        Ok(p)
    }

    fn skip(&mut self) {
        if let Some(key) = self.peeked.take() {
            self.pos = PartitionPos::After(key);
        }
    }
}

impl Memtable {
    /// What `q` wants of partition `key`, copied under its lock: with a `budget`, that many
    /// rows first and the rest when the reader asks ([`MemRows`]); without, every row.
    fn view(
        &self,
        key: &DecoratedKey,
        q: &SourceQuery<'_>,
        budget: Option<usize>,
    ) -> Option<SourcePartition> {
        self.with_slot(key, |slot| {
            let p = slot.lock();
            let mut rows = MemRows {
                slot: Arc::clone(slot),
                version: p.version,
                ranges: read_order(q),
                reversed: q.reversed,
                after: None,
                buf: Vec::new().into_iter(),
                complete: false,
            };
            rows.copy(&p, budget.map(|b| b.max(1)));
            p.head_view(q, Box::new(rows))
        })
    }
}

/// The slice's ranges in the order a read visits them.
fn read_order(q: &SourceQuery<'_>) -> Vec<ClusteringRange> {
    let mut ranges = q.slice.ranges().to_vec();
    if q.reversed {
        ranges.reverse();
    }
    ranges
}

/// A memtable partition's rows copied in two steps: the rows a read is likely to need
/// first, the rest when it asks for more — provided no write came in between (the
/// partition's version is unchanged), so the reader sees the partition as of one instant.
/// Otherwise the stream ends with [`Error::SourceChanged`], and the read starts over copying
/// whole slices.
struct MemRows {
    slot: Slot,
    version: u64,
    /// The slice's ranges in read order; those before `after`'s range are done.
    ranges: Vec<ClusteringRange>,
    reversed: bool,
    /// The last row copied, and the index of its range.
    after: Option<(usize, ClusteringKey)>,
    buf: std::vec::IntoIter<(ClusteringKey, Row)>,
    /// Every row of the slice was copied.
    complete: bool,
}

impl MemRows {
    /// Copies rows after `after`, in read order, at most `limit` (all without one).
    fn copy(&mut self, p: &MemPartition, limit: Option<usize>) {
        let mut out = Vec::new();
        let first = self.after.as_ref().map_or(0, |(i, _)| *i);
        let mut last = self.after.clone();
        for (i, r) in self.ranges.iter().enumerate().skip(first) {
            let lo = ClusteringKey(r.start.clone());
            let hi = ClusteringKey(r.end.clone());
            if lo >= hi {
                continue;
            }
            // Within the range the read stopped in, only the rows past its last one.
            let resume = last
                .as_ref()
                .filter(|(j, _)| *j == i)
                .map(|(_, k)| k.clone());
            let (lo_b, hi_b) = match (&resume, self.reversed) {
                (Some(k), false) => (Bound::Excluded(k), Bound::Excluded(&hi)),
                (Some(k), true) => (Bound::Included(&lo), Bound::Excluded(k)),
                (None, _) => (Bound::Included(&lo), Bound::Excluded(&hi)),
            };
            let it = p.rows_in(lo_b, hi_b);
            let it: Box<dyn Iterator<Item = (&ClusteringKey, &Row)>> = if self.reversed {
                Box::new(it.rev())
            } else {
                Box::new(it)
            };
            for (k, row) in it {
                if limit.is_some_and(|l| out.len() >= l) {
                    self.after = last;
                    self.buf = out.into_iter();
                    return;
                }
                last = Some((i, k.clone()));
                out.push((k.clone(), row.clone()));
            }
        }
        self.complete = true;
        self.buf = out.into_iter();
    }
}

impl Iterator for MemRows {
    type Item = Result<(ClusteringKey, Row)>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(r) = self.buf.next() {
            return Some(Ok(r));
        }
        if self.complete {
            return None;
        }
        let slot = Arc::clone(&self.slot);
        let p = slot.lock();
        if p.version != self.version {
            self.complete = true;
            return Some(Err(Error::SourceChanged));
        }
        self.copy(&p, None);
        drop(p);
        self.buf.next().map(Ok)
    }
}

impl MemPartition {
    /// A source's view of the partition with `rows` as its rows: the header `q` wants.
    fn head_view(&self, q: &SourceQuery<'_>, rows: RowStream) -> SourcePartition {
        SourcePartition {
            deletion: self.head.deletion,
            static_row: if q.wants_static() {
                self.head.static_row.clone()
            } else {
                None
            },
            range_tombstones: self
                .head
                .range_tombstones
                .iter()
                .filter(|rt| q.wants(rt))
                .cloned()
                .collect(),
            rows,
            stored_bytes: 0,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::model::{ClusteringKey, LivenessInfo, Row};
    use bytes::Bytes;
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;
    use std::sync::Arc;

    /// Counts, per thread, the bytes allocated and not yet freed, so a test can compare the
    /// memtable's charge with what it really holds (other tests run on other threads).
    struct CountingAlloc;

    thread_local! {
        static LIVE_BYTES: Cell<isize> = const { Cell::new(0) };
    }

    fn count(delta: isize) {
        // `try_with`: the thread's locals may be gone while it exits.
        let _ = LIVE_BYTES.try_with(|b| b.set(b.get() + delta));
    }

    // SAFETY: every call is forwarded to the system allocator unchanged.
    unsafe impl GlobalAlloc for CountingAlloc {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            count(layout.size() as isize);
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            count(-(layout.size() as isize));
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            count(layout.size() as isize);
            unsafe { System.alloc_zeroed(layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            count(new_size as isize - layout.size() as isize);
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    #[global_allocator]
    static ALLOC: CountingAlloc = CountingAlloc;

    fn live_bytes() -> isize {
        LIVE_BYTES.with(Cell::get)
    }

    fn marker_row(ts: i64) -> Row {
        Row {
            marker: Some(LivenessInfo::live(ts)),
            ..Row::default()
        }
    }

    fn update(ck: u8, ts: i64) -> Partition {
        let mut p = Partition::default();
        p.rows
            .insert(ClusteringKey(Bytes::from(vec![0x10, ck])), marker_row(ts));
        p
    }

    fn cell_update(value: &[u8], ts: i64) -> Partition {
        use crate::model::{Cell, ColumnData};
        let mut p = Partition::default();
        p.rows.insert(
            ClusteringKey(Bytes::from_static(&[0x10, 1])),
            Row {
                marker: Some(LivenessInfo::live(ts)),
                deletion: None,
                columns: vec![(
                    2,
                    ColumnData::Simple(Cell::live(ts, Bytes::copy_from_slice(value))),
                )],
            },
        );
        p
    }

    #[test]
    fn overwrites_are_charged_what_they_add() {
        let m = Memtable::new(1);
        let key = DecoratedKey::new(Bytes::from_static(b"k"));
        let first = m.apply(&key, cell_update(&[1; 100], 1));
        assert!(
            first > 100 + PARTITION_OVERHEAD,
            "a new row costs its size: {first}"
        );
        // The same size again replaces the value: nothing more is held.
        assert_eq!(m.apply(&key, cell_update(&[2; 100], 2)), 0);
        // A larger value costs the difference; a smaller one nothing.
        assert_eq!(m.apply(&key, cell_update(&[3; 150], 3)), 50);
        assert_eq!(m.apply(&key, cell_update(&[4; 10], 4)), 0);
        // A row that loses reconciliation (older timestamp) adds nothing either.
        assert_eq!(m.apply(&key, cell_update(&[5; 500], 0)), 0);
        assert_eq!(m.bytes(), first + 50);
        assert_eq!(m.write_count(), 5);
    }

    /// The charge is what the memtable holds, measured by the allocator, for partitions of
    /// one row (latte's write workload: a new partition per INSERT), a few rows and enough
    /// rows to leave the small representation.
    #[test]
    fn the_charge_is_what_the_memtable_holds() {
        for rows in [1u8, 5, 40] {
            let before = live_bytes();
            let m = Memtable::new(1);
            for i in 0..2_000u64 {
                let key = DecoratedKey::new(Bytes::from(i.to_be_bytes().to_vec()));
                let mut p = Partition::default();
                for r in 0..rows {
                    let ck = if rows == 1 {
                        ClusteringKey::default()
                    } else {
                        ClusteringKey(Bytes::from(vec![0x10, r]))
                    };
                    p.rows.insert(ck, marker_row(i as i64));
                }
                m.apply(&key, p);
            }
            let held = (live_bytes() - before) as f64;
            let charged = m.bytes() as f64;
            assert!(
                (0.85..1.3).contains(&(charged / held)),
                "{rows} row(s) per partition: charged {charged} bytes, holding {held}"
            );
            drop(m);
        }
    }

    #[test]
    fn rows_keep_key_order_and_slice_in_both_representations() {
        let ck = |i: u8| ClusteringKey(Bytes::from(vec![0x10, i]));
        let mut p = MemPartition::default();
        let mut oracle = BTreeMap::new();
        // Odd keys downwards, then even ones: inserts land in the middle of the vector.
        let order: Vec<u8> = (0..50)
            .rev()
            .map(|i| 2 * i + 1)
            .chain((0..50).map(|i| 2 * i))
            .collect();
        for (n, i) in order.into_iter().enumerate() {
            let mut u = Partition::default();
            u.rows.insert(ck(i), marker_row(i64::from(i)));
            p.merge_growth(u);
            oracle.insert(ck(i), marker_row(i64::from(i)));
            let small = matches!(p.rows, Rows::Small(_));
            assert_eq!(small, n < SMALL_ROWS, "representation after {} rows", n + 1);
            for (lo, hi) in [
                (Bound::Included(ck(3)), Bound::Excluded(ck(9))),
                (Bound::Excluded(ck(3)), Bound::Included(ck(9))),
                (Bound::Unbounded, Bound::Included(ck(40))),
                (Bound::Included(ck(60)), Bound::Unbounded),
                (Bound::Included(ck(9)), Bound::Excluded(ck(9))),
                (Bound::Included(ck(9)), Bound::Included(ck(3))),
            ] {
                let got: Vec<_> = p.rows_in(lo.as_ref(), hi.as_ref()).collect();
                let want: Vec<_> = if is_empty_range(lo.as_ref(), hi.as_ref()) {
                    Vec::new()
                } else {
                    oracle.range((lo.clone(), hi.clone())).collect()
                };
                assert_eq!(got, want);
                let back: Vec<_> = p.rows_in(lo.as_ref(), hi.as_ref()).rev().collect();
                assert_eq!(back, want.into_iter().rev().collect::<Vec<_>>());
            }
        }
        assert_eq!(p.to_partition().rows, oracle);
    }

    /// A `LIMIT` read copies its budget of rows first and the rest on demand, in read order
    /// over several ranges, both ways; a write in between ends the stream with
    /// `SourceChanged` (the read then starts over), never with a mix of two versions.
    #[test]
    fn budgeted_reads_copy_in_two_steps_and_detect_writes_between() {
        use crate::model::{ClusteringRange, Slice};
        let m = Arc::new(Memtable::new(1));
        let key = DecoratedKey::new(Bytes::from_static(b"k"));
        for ck in 0..40u8 {
            m.apply(&key, update(ck, 1));
        }
        let range = |lo: u8, hi: u8| {
            ClusteringRange::from_bounds(
                Some((&[0x10, lo][..], true)),
                Some((&[0x10, hi][..], false)),
            )
        };
        let slice = Slice::new(vec![range(2, 10), range(20, 30)]);
        let keys = |reversed: bool, budget: Option<usize>| -> Vec<u8> {
            let q = SourceQuery {
                slice: &slice,
                reversed,
                include_static: true,
                full_header: false,
                kind: ReadKind::Query,
                row_budget: budget,
                index_cache: false,
                wait: Wait::Allowed,
                trace: None,
            };
            let p = m.partition(&key, (0, 0), &q).unwrap().unwrap();
            p.rows.map(|r| r.unwrap().0 .0[1]).collect()
        };
        let forward: Vec<u8> = (2..10).chain(20..30).collect();
        let backward: Vec<u8> = forward.iter().rev().copied().collect();
        for budget in [None, Some(1), Some(3), Some(8), Some(9), Some(100)] {
            assert_eq!(keys(false, budget), forward, "{budget:?}");
            assert_eq!(keys(true, budget), backward, "{budget:?}");
        }

        let q = SourceQuery {
            slice: &slice,
            reversed: false,
            include_static: true,
            full_header: false,
            kind: ReadKind::Query,
            row_budget: Some(2),
            index_cache: false,
            wait: Wait::Allowed,
            trace: None,
        };
        let mut rows = m.partition(&key, (0, 0), &q).unwrap().unwrap().rows;
        assert!(rows.next().unwrap().is_ok());
        assert!(rows.next().unwrap().is_ok());
        m.apply(&key, update(25, 2));
        assert!(matches!(rows.next(), Some(Err(Error::SourceChanged))));
        assert!(rows.next().is_none());
    }

    #[test]
    fn tokens_are_the_index_hash_and_shards_are_in_token_order() {
        use std::hash::BuildHasher;
        let key = DecoratedKey::new(Bytes::from_static(b"k"));
        let h = BuildHasherDefault::<TokenHasher>::default();
        assert_eq!(h.hash_one(&key), key.token.0 as u64);
        assert_eq!(h.hash_one(&key), h.hash_one(TokenKeyed(key.clone())));
        let tokens = [i64::MIN, -(1 << 60) - 1, -1, 0, 1 << 60, i64::MAX];
        let shards: Vec<_> = tokens.iter().map(|&t| shard_of(t)).collect();
        assert!(shards.windows(2).all(|w| w[0] < w[1]), "{shards:?}");
        assert_eq!((shards[0], shards[5]), (0, SHARDS - 1));
    }

    #[test]
    fn next_key_crosses_shards() {
        let m = Memtable::new(1);
        let keys: Vec<_> = (0..200u32)
            .map(|i| DecoratedKey::new(Bytes::from(i.to_be_bytes().to_vec())))
            .collect();
        for k in &keys {
            m.apply(k, update(0, 1));
        }
        let mut sorted = keys.clone();
        sorted.sort();
        let mut walked = Vec::new();
        let mut pos = PartitionPos::TokenStart(crate::model::Token(i64::MIN));
        while let Some(k) = m.next_key(&pos) {
            assert_eq!(m.next_key(&PartitionPos::At(k.clone())), Some(k.clone()));
            walked.push(k.clone());
            pos = PartitionPos::After(k);
        }
        assert_eq!(walked, sorted);
        let mid = &sorted[100];
        assert_eq!(
            m.next_key(&PartitionPos::TokenStart(mid.token)).as_ref(),
            Some(mid)
        );
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
        let mut seen = 0;
        let r = m.for_each(|k, p| {
            assert_eq!(p.rows().count(), 4);
            if let Some(prev) = &prev {
                assert!(prev < k);
            }
            prev = Some(k.clone());
            seen += 1;
            Ok(())
        });
        assert!(r.is_ok());
        assert_eq!(seen, 500);
        assert!(m.bytes() > 2000 * 8);
        assert_eq!(m.min_timestamp(), 0);
        assert_eq!(m.max_timestamp(), 499);
    }
}
