//! Randomized model test: the engine against a simple in-memory oracle.
//!
//! Thousands of random operations — inserts, cell updates and deletions, row, range and
//! partition tombstones, static cells, TTLs — interleaved with flushes, restarts and compaction
//! jobs over random subsets of sstables (split or not, incremental or not, purging tombstones
//! with `gc_grace_seconds = 0`; background compaction runs too), on a table
//! whose clustering order is ASC or DESC, for every codec and several chunk sizes. After every
//! read the engine must return exactly what the oracle computes.
//!
//! The oracle knows nothing of sstables or reconciliation code: it keeps every write as an
//! event and evaluates a read from first principles (latest timestamp wins, a deletion hides
//! everything at or below its timestamp, expired data is gone). Timestamps are unique but
//! arrive out of order, so reconciliation across memtables and sstables is exercised.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use cairn_engine::compaction::manager::Clock;
use cairn_engine::compaction::strategy::{Job, JobKind};
use cairn_engine::model::clustering::Order;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{
    Cell, ClusteringKey, ClusteringRange, ColumnData, DecoratedKey, DeletionTime, LivenessInfo,
    Mutation, Partition, PartitionPos, RangeTombstone, Row, Slice, Token,
};
use cairn_engine::schema::compression::{Codec, CompressionParams};
use cairn_engine::schema::{ColumnKind, TableSchema, TombstoneGcMode};
use cairn_engine::{Database, DatabaseConfig, ReadCommand, Wait};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const PKS: i32 = 16;
/// Timestamps are shuffled within blocks of this many.
const TS_BLOCK: usize = 256;
/// `gc_grace_seconds`: longer than a block lasts (each step advances `now` by 0 or 1 s).
const GC_GRACE: u32 = 300;
const CKS: i32 = 40;
// Column ids: a=0 (pk), b=1 (ck), s=2 (static), c1=3, c2=4.
const S: u32 = 2;
const C1: u32 = 3;
const C2: u32 = 4;

/// Live cells of a row by column id.
type Cells = BTreeMap<u32, Vec<u8>>;

#[derive(Clone, Debug)]
struct Write {
    ts: i64,
    value: Option<Vec<u8>>, // None = cell tombstone
    expires: Option<u32>,
}

#[derive(Default, Clone, Debug)]
struct OracleRow {
    markers: Vec<(i64, Option<u32>)>,
    cells: BTreeMap<u32, Vec<Write>>,
    deletions: Vec<i64>,
}

#[derive(Default, Clone, Debug)]
struct OraclePartition {
    deletions: Vec<i64>,
    ranges: Vec<(i32, i32, i64)>, // [lo, hi) in b values, timestamp
    statics: BTreeMap<u32, Vec<Write>>,
    rows: BTreeMap<i32, OracleRow>,
}

fn live_cell(writes: &[Write], shadow: i64, now: u32) -> Option<Vec<u8>> {
    // Timestamps are unique, so the winner is simply the latest write.
    let w = writes.iter().max_by_key(|w| w.ts)?;
    if w.ts <= shadow || w.expires.is_some_and(|e| now >= e) {
        return None;
    }
    w.value.clone()
}

impl OraclePartition {
    /// Live static cells and live rows (b → cells) at `now`.
    fn read(&self, now: u32) -> (Cells, BTreeMap<i32, Cells>) {
        let pdel = self.deletions.iter().copied().max().unwrap_or(i64::MIN);
        let statics = self
            .statics
            .iter()
            .filter_map(|(c, w)| live_cell(w, pdel, now).map(|v| (*c, v)))
            .collect();
        let mut rows = BTreeMap::new();
        for (b, r) in &self.rows {
            let rdel = self
                .ranges
                .iter()
                .filter(|(lo, hi, _)| lo <= b && b < hi)
                .map(|x| x.2)
                .chain(r.deletions.iter().copied())
                .max()
                .unwrap_or(i64::MIN)
                .max(pdel);
            let marker = r
                .markers
                .iter()
                .max_by_key(|m| m.0)
                .is_some_and(|m| m.0 > rdel && m.1.is_none_or(|e| now < e));
            let cells: BTreeMap<u32, Vec<u8>> = r
                .cells
                .iter()
                .filter_map(|(c, w)| live_cell(w, rdel, now).map(|v| (*c, v)))
                .collect();
            if marker || !cells.is_empty() {
                rows.insert(*b, cells);
            }
        }
        (statics, rows)
    }
}

struct Harness {
    rng: StdRng,
    dir: tempfile::TempDir,
    db: Option<Database>,
    schema: TableSchema,
    oracle: BTreeMap<i32, OraclePartition>,
    now: u32,
    timestamps: Vec<i64>,
    desc: bool,
    /// What compaction believes "now" is: the harness's `now`.
    clock: Arc<AtomicU64>,
    /// Tombstones purged by compactions (background and the harness's own).
    purged: u64,
    /// The row cache's budget (0: no cache).
    row_cache_bytes: usize,
}

impl Harness {
    fn new(seed: u64, compression: CompressionParams, desc: bool) -> Self {
        Self::with_cache(seed, compression, desc, 0)
    }

    fn with_cache(
        seed: u64,
        compression: CompressionParams,
        desc: bool,
        row_cache_bytes: usize,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut schema = TableSchema::new("ks", "m")
            .with_column("a", CqlType::Int, ColumnKind::PartitionKey)
            .with_clustering(
                "b",
                CqlType::Int,
                if desc { Order::Desc } else { Order::Asc },
            )
            .with_column("s", CqlType::Text, ColumnKind::Static)
            .with_column("c1", CqlType::Text, ColumnKind::Regular)
            .with_column("c2", CqlType::Int, ColumnKind::Regular);
        schema.options.compression = compression;
        // Tombstones become purgeable soon: compactions must purge only what is safe. Writes
        // arrive at most one timestamp block (≤ 256 steps ≤ 256 s) late, so a grace of 300 s
        // is Cassandra's contract: no write older than a tombstone arrives after its grace.
        schema.options.gc_grace_seconds = GC_GRACE;
        schema.options.tombstone_gc = TombstoneGcMode::Timeout;
        // Every strategy takes its turn in the background, with small sstables and windows.
        let strategies: [&[(&str, &str)]; 6] = [
            &[
                ("class", "SizeTieredCompactionStrategy"),
                ("min_sstable_size", "4096"),
            ],
            &[
                ("class", "LeveledCompactionStrategy"),
                ("sstable_size_in_mb", "1"),
            ],
            &[
                ("class", "LeveledCompactionStrategy"),
                ("sstable_size_in_mb", "1"),
                ("dynamic_level_bytes", "true"),
            ],
            &[
                ("class", "IncrementalCompactionStrategy"),
                ("sstable_size_in_mb", "1"),
            ],
            &[
                ("class", "IncrementalCompactionStrategy"),
                ("sstable_size_in_mb", "1"),
                ("space_amplification_goal", "1.25"),
            ],
            &[
                ("class", "TimeWindowCompactionStrategy"),
                ("compaction_window_unit", "MINUTES"),
                ("compaction_window_size", "1"),
                ("timestamp_resolution", "MILLISECONDS"),
            ],
        ];
        schema.options.compaction = strategies[(seed % 6) as usize]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let clock = Arc::new(AtomicU64::new(1_000_000));
        let db = Database::open(Self::config(dir.path(), &clock, row_cache_bytes)).unwrap();
        db.create_table(schema.clone()).unwrap();
        let mut rng = StdRng::seed_from_u64(seed);
        // Unique timestamps, shuffled within blocks of TS_BLOCK: out of order, boundedly late.
        let mut timestamps: Vec<i64> = Vec::with_capacity(200_000);
        for block in (1..=200_000).collect::<Vec<i64>>().chunks(TS_BLOCK) {
            let mut b = block.to_vec();
            b.shuffle(&mut rng);
            timestamps.extend(b);
        }
        timestamps.reverse(); // `ts()` pops from the end: first block first
        Harness {
            rng,
            dir,
            db: Some(db),
            schema,
            oracle: BTreeMap::new(),
            now: 1_000_000,
            timestamps,
            desc,
            clock,
            purged: 0,
            row_cache_bytes,
        }
    }

    fn config(dir: &std::path::Path, clock: &Arc<AtomicU64>, row_cache: usize) -> DatabaseConfig {
        let mut c = DatabaseConfig::new(dir);
        c.row_cache_bytes = row_cache;
        let clock = Arc::clone(clock);
        c.compaction.clock = Clock(Arc::new(move || clock.load(Ordering::Relaxed)));
        c.commitlog_segment_size = 256 * 1024;
        // Small thresholds so background flushes happen on their own too.
        c.memtable_flush_threshold = 64 * 1024;
        c
    }

    fn db(&self) -> &Database {
        self.db.as_ref().unwrap()
    }

    fn ts(&mut self) -> i64 {
        self.timestamps.pop().unwrap()
    }

    fn ck(&self, b: i32) -> ClusteringKey {
        self.schema
            .clustering_layout()
            .encode_key(&[&b.to_be_bytes()])
            .unwrap()
    }

    fn pk(a: i32) -> DecoratedKey {
        DecoratedKey::new(Bytes::copy_from_slice(&a.to_be_bytes()))
    }

    fn ttl(&mut self) -> Option<u32> {
        self.rng.gen_bool(0.15).then(|| self.rng.gen_range(1..6))
    }

    fn cell(&self, ts: i64, ttl: Option<u32>, v: &[u8]) -> Cell {
        match ttl {
            Some(t) => Cell::expiring(ts, t, self.now, Bytes::copy_from_slice(v)),
            None => Cell::live(ts, Bytes::copy_from_slice(v)),
        }
    }

    fn apply(&mut self, a: i32, p: Partition) {
        let table = self.schema.id;
        self.db()
            .apply(
                vec![Mutation {
                    table,
                    key: Self::pk(a),
                    update: p,
                }],
                Wait::Allowed,
            )
            .unwrap();
    }

    fn step(&mut self) {
        let a = self.rng.gen_range(0..PKS);
        let b = self.rng.gen_range(0..CKS);
        self.now += self.rng.gen_range(0..2);
        self.clock.store(u64::from(self.now), Ordering::Relaxed);
        let now = self.now;
        let op = self.rng.gen_range(0..100);
        let mut p = Partition::default();
        let o = self.oracle.entry(a).or_default().clone();
        let mut o = o;
        match op {
            0..=34 => {
                // INSERT: marker + c1 (+ c2).
                let ts = self.ts();
                let ttl = self.ttl();
                let v = format!("v{ts}").into_bytes();
                let mut row = Row {
                    marker: Some(match ttl {
                        Some(t) => LivenessInfo::expiring(ts, t, now),
                        None => LivenessInfo::live(ts),
                    }),
                    ..Row::default()
                };
                row.columns
                    .push((C1, ColumnData::Simple(self.cell(ts, ttl, &v))));
                let r = o.rows.entry(b).or_default();
                r.markers.push((ts, ttl.map(|t| now + t)));
                r.cells.entry(C1).or_default().push(Write {
                    ts,
                    value: Some(v),
                    expires: ttl.map(|t| now + t),
                });
                if self.rng.gen_bool(0.5) {
                    let v2 = (ts as i32).to_be_bytes().to_vec();
                    row.columns
                        .push((C2, ColumnData::Simple(self.cell(ts, ttl, &v2))));
                    r.cells.entry(C2).or_default().push(Write {
                        ts,
                        value: Some(v2),
                        expires: ttl.map(|t| now + t),
                    });
                }
                p.rows.insert(self.ck(b), row);
            }
            35..=49 => {
                // UPDATE one cell (no marker).
                let ts = self.ts();
                let ttl = self.ttl();
                let col = if self.rng.gen_bool(0.5) { C1 } else { C2 };
                let v = format!("u{ts}").into_bytes();
                let row = Row {
                    columns: vec![(col, ColumnData::Simple(self.cell(ts, ttl, &v)))],
                    ..Row::default()
                };
                o.rows
                    .entry(b)
                    .or_default()
                    .cells
                    .entry(col)
                    .or_default()
                    .push(Write {
                        ts,
                        value: Some(v),
                        expires: ttl.map(|t| now + t),
                    });
                p.rows.insert(self.ck(b), row);
            }
            50..=57 => {
                // DELETE one cell.
                let ts = self.ts();
                let col = if self.rng.gen_bool(0.5) { C1 } else { C2 };
                let row = Row {
                    columns: vec![(col, ColumnData::Simple(Cell::tombstone(ts, now)))],
                    ..Row::default()
                };
                o.rows
                    .entry(b)
                    .or_default()
                    .cells
                    .entry(col)
                    .or_default()
                    .push(Write {
                        ts,
                        value: None,
                        expires: None,
                    });
                p.rows.insert(self.ck(b), row);
            }
            58..=65 => {
                // DELETE a row.
                let ts = self.ts();
                let row = Row {
                    deletion: Some(DeletionTime {
                        marked_at: ts,
                        local_deletion_time: now,
                    }),
                    ..Row::default()
                };
                o.rows.entry(b).or_default().deletions.push(ts);
                p.rows.insert(self.ck(b), row);
            }
            66..=71 => {
                // DELETE a clustering range b >= lo AND b < hi (in b values).
                let ts = self.ts();
                let lo = b;
                let hi = (lo + self.rng.gen_range(1..8)).min(CKS);
                let (l, h) = (self.ck(lo).0, self.ck(hi).0);
                // In DESC order the encoded range of b in [lo, hi) is (enc(hi), enc(lo)].
                let range = if self.desc {
                    ClusteringRange::from_bounds(Some((&h, false)), Some((&l, true)))
                } else {
                    ClusteringRange::from_bounds(Some((&l, true)), Some((&h, false)))
                };
                p.range_tombstones.push(RangeTombstone {
                    range,
                    deletion: DeletionTime {
                        marked_at: ts,
                        local_deletion_time: now,
                    },
                });
                o.ranges.push((lo, hi, ts));
            }
            72..=74 => {
                // DELETE the partition.
                let ts = self.ts();
                p.deletion = Some(DeletionTime {
                    marked_at: ts,
                    local_deletion_time: now,
                });
                o.deletions.push(ts);
            }
            75..=84 => {
                // Static cell write.
                let ts = self.ts();
                let ttl = self.ttl();
                let v = format!("s{ts}").into_bytes();
                p.static_row = Some(Row {
                    columns: vec![(S, ColumnData::Simple(self.cell(ts, ttl, &v)))],
                    ..Row::default()
                });
                o.statics.entry(S).or_default().push(Write {
                    ts,
                    value: Some(v),
                    expires: ttl.map(|t| now + t),
                });
            }
            85..=87 => {
                self.db().flush("ks", "m").unwrap();
                return;
            }
            88 => {
                self.compact_random_subset();
                return;
            }
            89..=90 => {
                self.count_background_purges();
                drop(self.db.take());
                self.db = Some(
                    Database::open(Self::config(
                        self.dir.path(),
                        &self.clock,
                        self.row_cache_bytes,
                    ))
                    .unwrap(),
                );
                return;
            }
            _ => {
                self.check_read(a);
                return;
            }
        }
        self.oracle.insert(a, o);
        self.apply(a, p);
    }

    /// Adds what every job of the current database instance purged.
    fn count_background_purges(&mut self) {
        let db = self.db();
        db.compaction()
            .wait_idle(std::time::Duration::from_secs(60));
        self.purged += db
            .compaction()
            .history()
            .iter()
            .map(|r| r.purged.tombstones_purged)
            .sum::<u64>();
    }

    /// One compaction job over a random subset of the live sstables.
    fn compact_random_subset(&mut self) {
        let table = self.db().table("ks", "m").unwrap();
        let mut gens: Vec<u64> = table
            .state()
            .sstables
            .iter()
            .map(|s| s.generation)
            .collect();
        if gens.is_empty() {
            return;
        }
        gens.shuffle(&mut self.rng);
        let n = self.rng.gen_range(1..=gens.len());
        gens.truncate(n);
        let job = Job {
            inputs: gens,
            output_level: self.rng.gen_range(0..3),
            max_output_bytes: if self.rng.gen_bool(0.5) {
                u64::MAX
            } else {
                8 << 10
            },
            incremental: self.rng.gen_bool(0.5),
            time_window: None,
            kind: JobKind::Regular,
        };
        match self.db().compaction().run_job(&table, job) {
            // A background job may hold one of them: fine, it is compacting them itself.
            Ok(_) | Err(cairn_engine::Error::NotLive { .. }) => {}
            Err(e) => panic!("compaction failed: {e}"),
        }
    }

    fn decode_b(&self, k: &ClusteringKey) -> i32 {
        let vals = self.schema.clustering_layout().decode(&k.0).unwrap();
        i32::from_be_bytes(vals[0].as_ref().try_into().unwrap())
    }

    fn check_read(&mut self, a: i32) {
        let (statics, rows) = self
            .oracle
            .get(&a)
            .map(|o| o.read(self.now))
            .unwrap_or_default();
        // Random slice, order and limit.
        let lo = self.rng.gen_range(0..CKS);
        let hi = self.rng.gen_range(lo..=CKS);
        let full = self.rng.gen_bool(0.4);
        let reversed = self.rng.gen_bool(0.5);
        let limit = self.rng.gen_bool(0.3).then(|| self.rng.gen_range(1..5));
        let mut cmd = ReadCommand::all(self.now, Wait::Allowed);
        cmd.reversed = reversed;
        cmd.limit = limit;
        if !full {
            let (l, h) = (self.ck(lo).0, self.ck(hi).0);
            let range = if self.desc {
                ClusteringRange::from_bounds(Some((&h, false)), Some((&l, true)))
            } else {
                ClusteringRange::from_bounds(Some((&l, true)), Some((&h, false)))
            };
            cmd.slice = Slice::new(vec![range]);
        }
        let got = self.db().read("ks", "m", &Self::pk(a), &cmd).unwrap();
        // Expected rows in clustering order (DESC tables iterate b descending).
        let mut expected: Vec<(i32, BTreeMap<u32, Vec<u8>>)> = rows
            .into_iter()
            .filter(|(b, _)| full || (*b >= lo && *b < hi))
            .collect();
        if self.desc {
            expected.reverse();
        }
        if reversed {
            expected.reverse();
        }
        if let Some(l) = limit {
            expected.truncate(l);
        }
        let got_rows: Vec<(i32, BTreeMap<u32, Vec<u8>>)> = got
            .as_ref()
            .map(|p| {
                p.rows
                    .iter()
                    .map(|(k, r)| {
                        let cells = r
                            .columns
                            .iter()
                            .map(|(c, d)| match d {
                                ColumnData::Simple(cell) => (*c, cell.value.to_vec()),
                                ColumnData::Complex(_) => (*c, vec![]),
                            })
                            .collect();
                        (self.decode_b(k), cells)
                    })
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(got_rows, expected, "partition {a} at now={} (lo={lo} hi={hi} full={full} reversed={reversed} limit={limit:?})", self.now);
        let got_static: BTreeMap<u32, Vec<u8>> = got
            .and_then(|p| p.static_row)
            .map(|r| {
                r.columns
                    .iter()
                    .filter_map(|(c, d)| match d {
                        ColumnData::Simple(cell) => Some((*c, cell.value.to_vec())),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(got_static, statics, "static row of partition {a}");
    }

    fn check_scan(&mut self) {
        let now = self.now;
        let expected: Vec<i32> = self
            .oracle
            .iter()
            .filter(|(_, o)| {
                let (s, r) = o.read(now);
                !s.is_empty() || !r.is_empty()
            })
            .map(|(a, _)| *a)
            .collect();
        let got: Vec<DecoratedKey> = self
            .db()
            .scan(
                "ks",
                "m",
                PartitionPos::TokenStart(Token::MIN),
                None,
                ReadCommand::all(now, Wait::Allowed),
            )
            .unwrap()
            .map(|p| p.unwrap().key)
            .collect();
        let mut want: Vec<DecoratedKey> = expected.iter().map(|a| Self::pk(*a)).collect();
        want.sort();
        assert_eq!(got, want, "scan");
    }

    fn run(&mut self, steps: usize) {
        for i in 0..steps {
            self.step();
            if i % 500 == 499 {
                self.check_scan();
            }
        }
        for a in 0..PKS {
            self.check_read(a);
        }
        self.check_scan();
        self.count_background_purges();
        eprintln!("tombstones purged: {}", self.purged);
        assert!(
            self.purged > 0,
            "no compaction purged anything: the test proves little"
        );
    }
}

fn params(codec: Codec, chunk_kb: u32) -> CompressionParams {
    CompressionParams {
        codec,
        chunk_length: chunk_kb * 1024,
        crc_check_chance: 1.0,
    }
}

#[test]
fn oracle_every_codec() {
    let codecs = [
        Codec::None,
        Codec::Lz4,
        Codec::Snappy,
        Codec::Deflate,
        Codec::Zstd { level: 3 },
    ];
    for (i, codec) in codecs.into_iter().enumerate() {
        let mut h = Harness::new(100 + i as u64, params(codec, 4), i % 2 == 1);
        h.run(3000);
    }
}

#[test]
fn oracle_chunk_sizes() {
    for (i, kb) in [1u32, 16, 64].into_iter().enumerate() {
        let mut h = Harness::new(200 + i as u64, params(Codec::Lz4, kb), i % 2 == 0);
        h.run(3000);
    }
}

/// The same histories through the row cache, with a budget so small that it evicts all the
/// time, interleaved with the harness's flushes, compactions and restarts.
#[test]
fn oracle_row_cache() {
    for (i, budget) in [16usize << 10, 1 << 20].into_iter().enumerate() {
        let mut h = Harness::with_cache(300 + i as u64, params(Codec::Lz4, 4), i % 2 == 1, budget);
        h.run(2000);
        // Every partition again: now (mostly) from the cache the first pass populated.
        for a in 0..PKS {
            h.check_read(a);
        }
        let stats = h.db().row_cache().map(|c| c.stats()).unwrap_or_default();
        eprintln!("row cache: {stats:?}");
        assert!(stats.bytes_used <= stats.bytes_total, "{stats:?}");
        if i == 0 {
            assert!(stats.row_evictions > 0, "{stats:?}");
        } else {
            assert!(stats.partition_hits > 0 && stats.row_hits > 0, "{stats:?}");
        }
    }
}
