//! Per-partition locks: a fixed array of mutexes indexed by a hash of the table and the
//! partition's token, so requests on one partition are serialised and requests on other
//! partitions almost never wait on each other. Conditional writes take them on their
//! coordinator (one node's rounds on a partition do not contend with each other) and the
//! Paxos state of a replica takes them around each read-modify-write of a partition's state.

use cairn_engine::model::DecoratedKey;
use cairn_engine::Wait;
use parking_lot::{Mutex, MutexGuard};

/// See the module doc.
pub struct PartitionLocks {
    stripes: Box<[Mutex<()>]>,
}

impl Default for PartitionLocks {
    fn default() -> Self {
        PartitionLocks {
            stripes: (0..256).map(|_| Mutex::new(())).collect(),
        }
    }
}

impl PartitionLocks {
    /// Locks partition `key` of table `table`; under [`Wait::Never`] a taken lock is `None`
    /// instead of a wait (its holder may be reading from disk, or waiting for replicas).
    pub fn lock(&self, table: u128, key: &DecoratedKey, wait: Wait) -> Option<MutexGuard<'_, ()>> {
        self.lock_stripe(self.stripe(table, key), wait)
    }

    /// The stripe partition `key` of table `table` locks: a caller locking several
    /// partitions takes their stripes once each, in increasing order, so that two such
    /// callers never wait for each other in a cycle.
    pub fn stripe(&self, table: u128, key: &DecoratedKey) -> usize {
        let h = (table as u64)
            .rotate_left(17)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (key.token.0 as u64);
        (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize % self.stripes.len()
    }

    /// Locks stripe `i` ([`PartitionLocks::lock`]'s waiting rules).
    pub fn lock_stripe(&self, i: usize, wait: Wait) -> Option<MutexGuard<'_, ()>> {
        let stripe = self.stripes.get(i)?;
        match wait {
            Wait::Allowed => Some(stripe.lock()),
            Wait::Never => stripe.try_lock(),
        }
    }
}
