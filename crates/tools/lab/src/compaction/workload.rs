//! The workloads' operations: rows and tombstones built for the lab's table, and the
//! generator that produces each workload's stream and counts its live units (see the
//! module docs of [`super`]).

use super::args::CompactionArgs;
use super::clock::VirtualClock;
use super::setup::{Sizes, Workload};
use anyhow::Result;
use bytes::Bytes;
use cairn_engine::model::clustering::{ClusteringLayout, Order};
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{
    Cell, ClusteringKey, ColumnData, DecoratedKey, DeletionTime, LivenessInfo, Mutation, Partition,
    Row,
};
use cairn_engine::table::Table;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, RngCore, SeedableRng};
use std::collections::VecDeque;
use std::sync::Arc;

/// Rows per partition in write-delete (so row tombstones have neighbours).
pub(super) const ROWS_PER_PARTITION: u32 = 4;

/// Series (partitions) in the timeseries workload.
pub(super) const SERIES: u32 = 64;

/// One operation of a workload.
pub(super) struct Op {
    pub(super) mutation: Mutation,
    pub(super) user_bytes: u64,
}

/// Builds the rows and tombstones.
pub(super) struct Builder {
    pub(super) table: u128,
    pub(super) layout: ClusteringLayout,
    pub(super) pool: Bytes,
    pub(super) value_bytes: usize,
    pub(super) rng: StdRng,
}

impl Builder {
    pub(super) fn ck(&self, b: u32) -> Result<ClusteringKey> {
        Ok(self.layout.encode_key(&[&b.to_be_bytes()])?)
    }

    pub(super) fn value(&mut self) -> Bytes {
        let off = self.rng.gen_range(0..self.pool.len() - self.value_bytes);
        self.pool.slice(off..off + self.value_bytes)
    }

    pub(super) fn pk(a: u32) -> DecoratedKey {
        DecoratedKey::new(Bytes::copy_from_slice(&a.to_be_bytes()))
    }

    pub(super) fn upsert(
        &mut self,
        a: u32,
        b: u32,
        ts: i64,
        ttl: Option<(u32, u32)>,
    ) -> Result<Op> {
        let value = self.value();
        let (marker, cell) = match ttl {
            Some((ttl, now)) => (
                LivenessInfo::expiring(ts, ttl, now),
                Cell::expiring(ts, ttl, now, value),
            ),
            None => (LivenessInfo::live(ts), Cell::live(ts, value)),
        };
        let mut p = Partition::default();
        p.rows.insert(
            self.ck(b)?,
            Row {
                marker: Some(marker),
                deletion: None,
                columns: vec![(2, ColumnData::Simple(cell))],
            },
        );
        Ok(Op {
            mutation: Mutation {
                table: self.table,
                key: Self::pk(a),
                update: p,
            },
            user_bytes: 8 + self.value_bytes as u64,
        })
    }

    pub(super) fn delete(&mut self, a: u32, row: Option<u32>, ts: i64, now: u32) -> Result<Op> {
        let dt = DeletionTime {
            marked_at: ts,
            local_deletion_time: now,
        };
        let mut p = Partition::default();
        let user_bytes = match row {
            None => {
                p.deletion = Some(dt);
                4
            }
            Some(b) => {
                p.rows.insert(
                    self.ck(b)?,
                    Row {
                        marker: None,
                        deletion: Some(dt),
                        columns: Vec::new(),
                    },
                );
                8
            }
        };
        Ok(Op {
            mutation: Mutation {
                table: self.table,
                key: Self::pk(a),
                update: p,
            },
            user_bytes,
        })
    }
}

/// A workload's state: produces operations and tracks its live units.
pub(super) struct Generator {
    pub(super) workload: Workload,
    pub(super) builder: Builder,
    pub(super) clock: Arc<VirtualClock>,
    /// Operations produced.
    pub(super) ops: u64,
    /// User bytes after which the workload ends (None: runs until stopped).
    pub(super) limit_bytes: Option<u64>,
    pub(super) user_bytes: u64,
    /// Last timestamp given (timestamps strictly increase).
    pub(super) last_ts: i64,
    // overwrite
    pub(super) rows: u32,
    pub(super) order: Vec<u32>,
    pub(super) pos: usize,
    // distinct rows written (overwrite, write-delete)
    pub(super) seen: Vec<bool>,
    pub(super) distinct: u64,
    pub(super) written_partitions: Vec<u32>,
    pub(super) partition_seen: Vec<bool>,
    // timeseries: (virtual second, bytes) not yet expired
    pub(super) ttl_secs: u32,
    pub(super) recent: VecDeque<(u32, u64)>,
    pub(super) recent_bytes: u64,
}

impl Generator {
    pub(super) fn ts(&mut self) -> i64 {
        let t = self.clock.now_micros().max(self.last_ts + 1);
        self.last_ts = t;
        t
    }

    /// Live units so far (see the module docs).
    pub(super) fn live_units(&self) -> u64 {
        match self.workload {
            Workload::Append => self.ops,
            Workload::Overwrite | Workload::WriteDelete => self.distinct,
            Workload::Timeseries => self.recent_bytes,
        }
    }

    pub(super) fn mark(&mut self, idx: usize) {
        if let Some(s) = self.seen.get_mut(idx) {
            if !*s {
                *s = true;
                self.distinct += 1;
            }
        }
    }

    pub(super) fn next(&mut self) -> Result<Option<Op>> {
        if let Some(limit) = self.limit_bytes {
            if self.user_bytes >= limit {
                return Ok(None);
            }
        }
        let ts = self.ts();
        let op = match self.workload {
            Workload::Append => {
                let a = self.ops as u32;
                self.builder.upsert(a, 0, ts, None)?
            }
            Workload::Overwrite => {
                if self.pos == self.order.len() {
                    self.order = (0..self.rows).collect();
                    self.order.shuffle(&mut self.builder.rng);
                    self.pos = 0;
                }
                let a = self.order[self.pos];
                self.pos += 1;
                self.mark(a as usize);
                self.builder.upsert(a, 0, ts, None)?
            }
            Workload::WriteDelete => {
                let partitions = self.rows / ROWS_PER_PARTITION;
                if self.ops % 5 == 4 && !self.written_partitions.is_empty() {
                    let i = self.builder.rng.gen_range(0..self.written_partitions.len());
                    let a = self.written_partitions[i];
                    let now = self.clock.now_secs();
                    if (self.ops / 5).is_multiple_of(2) {
                        self.builder.delete(a, None, ts, now)?
                    } else {
                        let b = self.builder.rng.gen_range(0..ROWS_PER_PARTITION);
                        self.builder.delete(a, Some(b), ts, now)?
                    }
                } else {
                    let a = self.builder.rng.gen_range(0..partitions.max(1));
                    let b = self.builder.rng.gen_range(0..ROWS_PER_PARTITION);
                    let idx = (a * ROWS_PER_PARTITION + b) as usize;
                    if let Some(seen) = self.partition_seen.get_mut(a as usize) {
                        if !*seen {
                            *seen = true;
                            self.written_partitions.push(a);
                        }
                    }
                    self.mark(idx);
                    self.builder.upsert(a, b, ts, None)?
                }
            }
            Workload::Timeseries => {
                let a = (self.ops % u64::from(SERIES)) as u32;
                let b = (self.ops / u64::from(SERIES)) as u32;
                let now = self.clock.now_secs();
                let op = self.builder.upsert(a, b, ts, Some((self.ttl_secs, now)))?;
                match self.recent.back_mut() {
                    Some((s, n)) if *s == now => *n += op.user_bytes,
                    _ => self.recent.push_back((now, op.user_bytes)),
                }
                self.recent_bytes += op.user_bytes;
                while let Some(&(s, n)) = self.recent.front() {
                    if s + self.ttl_secs <= now {
                        self.recent.pop_front();
                        self.recent_bytes -= n;
                    } else {
                        break;
                    }
                }
                op
            }
        };
        self.ops += 1;
        self.user_bytes += op.user_bytes;
        Ok(Some(op))
    }
}

pub(super) fn random_pool(rng: &mut StdRng, value_bytes: usize) -> Bytes {
    let mut v = vec![0u8; (1 << 20) + value_bytes + 1];
    rng.fill_bytes(&mut v);
    Bytes::from(v)
}

pub(super) fn generator(
    w: Workload,
    table: &Arc<Table>,
    a: &CompactionArgs,
    sizes: &Sizes,
    limit: Option<u64>,
    clock: &Arc<VirtualClock>,
    rng: &mut StdRng,
) -> Result<Generator> {
    let schema = table.schema();
    let rows = match w {
        Workload::Overwrite => (sizes.dataset / a.value_bytes as u64).max(1) as u32,
        Workload::WriteDelete => {
            let parts = (sizes.dataset / (a.value_bytes as u64 * u64::from(ROWS_PER_PARTITION)))
                .max(1) as u32;
            parts * ROWS_PER_PARTITION
        }
        _ => 0,
    };
    let ttl_secs = a.ts_ttl_windows.max(1) * 60;
    Ok(Generator {
        workload: w,
        builder: Builder {
            table: schema.id,
            layout: ClusteringLayout::new(vec![(CqlType::Int, Order::Asc)]),
            pool: random_pool(rng, a.value_bytes),
            value_bytes: a.value_bytes,
            rng: StdRng::seed_from_u64(rng.gen()),
        },
        clock: Arc::clone(clock),
        ops: 0,
        limit_bytes: limit,
        user_bytes: 0,
        last_ts: 0,
        rows,
        order: Vec::new(),
        pos: 0,
        seen: vec![false; rows as usize],
        distinct: 0,
        written_partitions: Vec::new(),
        partition_seen: vec![false; (rows / ROWS_PER_PARTITION) as usize],
        ttl_secs,
        recent: VecDeque::new(),
        recent_bytes: 0,
    })
}
