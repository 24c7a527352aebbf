//! Key generators with scylla-bench's semantics: `sequential` visits every (pk, ck) once per
//! iteration, split between the workers; `uniform` picks random keys; `timeseries` writes
//! rows whose clustering key falls as time goes on (newest rows first) and reads them back
//! with a uniform or half-normal bias towards the newest.

/// A cheap, deterministic pseudo-random generator (splitmix64): a few instructions per
/// number, so key generation never shows up in the client's CPU per operation.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A standard normal deviate (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.unit().max(f64::MIN_POSITIVE);
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// splitmix64's finaliser: a good 64-bit mix.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Where the keys of the next request come from, as scylla-bench's `WorkloadGenerator`.
pub trait Workload: Send {
    /// Starts a request on a partition.
    fn next_partition_key(&mut self) -> i64;
    /// The next row's clustering key in the current partition.
    fn next_clustering_key(&mut self) -> i64;
    /// No more rows in the current partition for this request.
    fn is_partition_done(&self) -> bool;
    /// This worker has nothing left to do.
    fn is_done(&self) -> bool;
}

/// Every row once per iteration; worker `i` of `n` owns rows `[R·i/n, R·(i+1)/n)` of the
/// `R = partitions × rows` rows, in (pk, ck) order. `iterations == 0` loops forever.
pub struct Sequential {
    start: u64,
    end: u64,
    pos: u64,
    ck_count: u64,
    pk_offset: i64,
    cur_pk: u64,
    iteration: u64,
    iterations: u64,
}

impl Sequential {
    pub fn new(
        worker: u64,
        workers: u64,
        partitions: u64,
        ck_count: u64,
        pk_offset: i64,
        iterations: u64,
    ) -> Self {
        let total = partitions * ck_count;
        let start = total * worker / workers;
        let end = total * (worker + 1) / workers;
        Sequential {
            start,
            end,
            pos: start,
            ck_count: ck_count.max(1),
            pk_offset,
            cur_pk: start / ck_count.max(1),
            iteration: 0,
            iterations,
        }
    }

    fn more_iterations(&self) -> bool {
        self.iterations == 0 || self.iteration + 1 < self.iterations
    }
}

impl Workload for Sequential {
    fn next_partition_key(&mut self) -> i64 {
        if self.pos >= self.end && self.more_iterations() {
            self.iteration += 1;
            self.pos = self.start;
        }
        self.cur_pk = self.pos / self.ck_count;
        self.pk_offset + self.cur_pk as i64
    }

    fn next_clustering_key(&mut self) -> i64 {
        let ck = self.pos % self.ck_count;
        self.pos += 1;
        ck as i64
    }

    fn is_partition_done(&self) -> bool {
        self.pos >= self.end || self.pos / self.ck_count != self.cur_pk
    }

    fn is_done(&self) -> bool {
        self.start == self.end || (self.pos >= self.end && !self.more_iterations())
    }
}

/// Random partition and clustering keys; never done (a duration bounds the run).
pub struct Uniform {
    rng: Rng,
    partitions: u64,
    ck_count: u64,
    pk_offset: i64,
}

impl Uniform {
    pub fn new(seed: u64, partitions: u64, ck_count: u64, pk_offset: i64) -> Self {
        Uniform {
            rng: Rng::new(seed),
            partitions: partitions.max(1),
            ck_count: ck_count.max(1),
            pk_offset,
        }
    }
}

impl Workload for Uniform {
    fn next_partition_key(&mut self) -> i64 {
        self.pk_offset + self.rng.below(self.partitions) as i64
    }
    fn next_clustering_key(&mut self) -> i64 {
        self.rng.below(self.ck_count) as i64
    }
    fn is_partition_done(&self) -> bool {
        false
    }
    fn is_done(&self) -> bool {
        false
    }
}

/// Clustering key of row `index` of a time series started at `start_ns`, one row per
/// `period_ns` per partition: newer rows get smaller keys.
pub fn timeseries_ck(start_ns: i64, period_ns: i64, index: u64) -> i64 {
    -(start_ns.wrapping_add(period_ns.wrapping_mul(index as i64)))
}

/// Time-series writes: worker `i` of `n` owns partitions `i·p/n .. (i+1)·p/n` and appends
/// rows to them in turn; a partition that reaches `clustering-row-count` rows is replaced by
/// the next generation (pk + partition-count), as scylla-bench does.
pub struct TimeseriesWrite {
    pks: Vec<i64>,
    rows: Vec<u64>,
    generations: Vec<u64>,
    next: usize,
    cur: usize,
    partitions: u64,
    ck_count: u64,
    start_ns: i64,
    period_ns: i64,
}

impl TimeseriesWrite {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        worker: u64,
        workers: u64,
        partitions: u64,
        ck_count: u64,
        pk_offset: i64,
        start_ns: i64,
        period_ns: i64,
    ) -> Self {
        let lo = partitions * worker / workers;
        let hi = (partitions * (worker + 1) / workers).max(lo + 1);
        let pks: Vec<i64> = (lo..hi).map(|p| pk_offset + p as i64).collect();
        TimeseriesWrite {
            rows: vec![0; pks.len()],
            generations: vec![0; pks.len()],
            pks,
            next: 0,
            cur: 0,
            partitions: partitions.max(1),
            ck_count: ck_count.max(1),
            start_ns,
            period_ns,
        }
    }
}

impl Workload for TimeseriesWrite {
    fn next_partition_key(&mut self) -> i64 {
        self.cur = self.next;
        self.next = (self.next + 1) % self.pks.len();
        if self.rows[self.cur] >= self.ck_count {
            // A new generation of this partition.
            self.pks[self.cur] += self.partitions as i64;
            self.rows[self.cur] = 0;
            self.generations[self.cur] += 1;
        }
        self.pks[self.cur]
    }
    fn next_clustering_key(&mut self) -> i64 {
        let i = self.generations[self.cur] * self.ck_count + self.rows[self.cur];
        self.rows[self.cur] += 1;
        timeseries_ck(self.start_ns, self.period_ns, i)
    }
    fn is_partition_done(&self) -> bool {
        self.rows[self.cur] >= self.ck_count
    }
    fn is_done(&self) -> bool {
        false
    }
}

/// Reads of a time series written since `start_ns` at `write_rate` rows/s in total over
/// `partitions` partitions: picks a partition, then a row already written (uniformly, or
/// half-normal around the newest).
pub struct TimeseriesRead {
    rng: Rng,
    partitions: u64,
    ck_count: u64,
    pk_offset: i64,
    start_ns: i64,
    period_ns: i64,
    half_normal: bool,
    cur_generation: u64,
    cur_latest: u64,
}

impl TimeseriesRead {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        seed: u64,
        partitions: u64,
        ck_count: u64,
        pk_offset: i64,
        start_ns: i64,
        period_ns: i64,
        half_normal: bool,
    ) -> Self {
        TimeseriesRead {
            rng: Rng::new(seed),
            partitions: partitions.max(1),
            ck_count: ck_count.max(1),
            pk_offset,
            start_ns,
            period_ns: period_ns.max(1),
            half_normal,
            cur_generation: 0,
            cur_latest: 0,
        }
    }
}

impl Workload for TimeseriesRead {
    fn next_partition_key(&mut self) -> i64 {
        let now = crate::clock::unix_nanos();
        // Rows written so far in each partition (index of the newest).
        let latest = ((now - self.start_ns).max(0) / self.period_ns) as u64;
        self.cur_generation = latest / self.ck_count;
        self.cur_latest = latest;
        let p = self.rng.below(self.partitions);
        self.pk_offset + (p + self.cur_generation * self.partitions) as i64
    }
    fn next_clustering_key(&mut self) -> i64 {
        let first = self.cur_generation * self.ck_count;
        let span = self.cur_latest - first + 1;
        let back = if self.half_normal {
            // σ such that ~99.7 % of the reads fall in the written span.
            ((self.rng.normal().abs() * span as f64 / 3.0) as u64).min(span - 1)
        } else {
            self.rng.below(span)
        };
        timeseries_ck(self.start_ns, self.period_ns, self.cur_latest - back)
    }
    fn is_partition_done(&self) -> bool {
        false
    }
    fn is_done(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_visits_every_row_once() {
        let mut seen = std::collections::HashSet::new();
        for w in 0..3 {
            let mut s = Sequential::new(w, 3, 7, 5, 100, 1);
            while !s.is_done() {
                let pk = s.next_partition_key();
                for _ in 0..2 {
                    if s.is_partition_done() {
                        break;
                    }
                    let ck = s.next_clustering_key();
                    assert!(seen.insert((pk, ck)), "({pk}, {ck}) twice");
                }
            }
        }
        assert_eq!(seen.len(), 35);
        assert!(seen.contains(&(100, 0)) && seen.contains(&(106, 4)));
    }

    #[test]
    fn sequential_iterates() {
        let mut s = Sequential::new(0, 1, 2, 1, 0, 3);
        let mut n = 0;
        while !s.is_done() {
            s.next_partition_key();
            s.next_clustering_key();
            n += 1;
        }
        assert_eq!(n, 6);
    }

    #[test]
    fn timeseries_keys_decrease_and_roll_over() {
        let mut t = TimeseriesWrite::new(0, 1, 2, 3, 0, 1_000, 10);
        let mut keys = vec![];
        for _ in 0..8 {
            let pk = t.next_partition_key();
            keys.push((pk, t.next_clustering_key()));
        }
        assert_eq!(keys[0], (0, -1_000));
        assert_eq!(keys[2], (0, -1_010));
        // Fourth row of partition 0 starts generation 1 (pk 2).
        assert_eq!(keys[6].0, 2);
        assert!(keys[6].1 < keys[4].1);
    }
}
