//! A replica's storage fault — a corrupt sstable, an I/O error on a data file, a failed or
//! stopped commitlog (`cairn_engine::fault`) — as the request's failure: ReadFailure or
//! WriteFailure with the protocol's fields, the replica that failed, and the fault (file and
//! offset) as its reason, so the client sees what Cassandra's `ReadFailureException` /
//! `WriteFailureException` give and an operator reads where the damage is.

use crate::consistency::{Consistency, ReadFailure, WriteFailure, WriteType};
use crate::Error;
use cairn_engine::{FaultKind, StorageFault};
use std::net::IpAddr;

/// What a request that met a storage fault was doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailedRequest {
    /// A read (a SELECT, or the read of a read-before-write).
    Read,
    /// A write of this kind.
    Write(WriteType),
}

impl FailedRequest {
    /// What the fault alone tells: a commitlog fault failed a write (taken as SIMPLE),
    /// anything else a read.
    pub fn of(fault: &StorageFault<'_>) -> FailedRequest {
        match fault.kind {
            FaultKind::Commitlog | FaultKind::CommitlogStopped => {
                FailedRequest::Write(WriteType::Simple)
            }
            _ => FailedRequest::Read,
        }
    }
}

/// The request's failure when replica `replica` met storage fault `e` (`None` when `e` is no
/// storage fault): `received` answers counted toward `block_for` at `consistency`, this one
/// failure, no data.
pub fn storage_failure(
    e: &cairn_engine::Error,
    request: FailedRequest,
    consistency: Consistency,
    received: usize,
    block_for: usize,
    replica: IpAddr,
) -> Option<Error> {
    e.storage_fault()?;
    let failures = vec![(replica, e.to_string())];
    Some(match request {
        FailedRequest::Read => Error::ReadFailure(ReadFailure {
            consistency,
            received,
            block_for,
            failures,
            data_present: false,
        }),
        FailedRequest::Write(write_type) => Error::WriteFailure(WriteFailure {
            consistency,
            received,
            block_for,
            failures,
            write_type,
        }),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const REPLICA: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

    #[test]
    fn a_corrupt_sstable_fails_the_read_naming_file_offset_and_replica() {
        let e = cairn_engine::Error::corruption(
            "/d/ks/t-1/ca-3-Data.db",
            65536,
            cairn_engine::CorruptionKind::Decompress,
        );
        let fault = e.storage_fault().unwrap();
        assert_eq!(FailedRequest::of(&fault), FailedRequest::Read);
        let got = storage_failure(&e, FailedRequest::Read, Consistency::Quorum, 1, 2, REPLICA);
        let Some(Error::ReadFailure(f)) = got else {
            panic!("not a read failure: {got:?}");
        };
        assert_eq!(
            (f.consistency, f.received, f.block_for, f.data_present),
            (Consistency::Quorum, 1, 2, false)
        );
        assert_eq!(
            f.to_string(),
            "Operation failed - received 1 responses and 1 failures: corruption in \
             /d/ks/t-1/ca-3-Data.db at offset 65536: chunk failed to decompress from /127.0.0.2"
        );
    }

    #[test]
    fn a_commitlog_fault_fails_the_write_with_its_type() {
        let stopped = cairn_engine::Error::CommitlogStopped { dir: "/c".into() };
        let fault = stopped.storage_fault().unwrap();
        assert_eq!(
            FailedRequest::of(&fault),
            FailedRequest::Write(WriteType::Simple)
        );
        let batch = FailedRequest::Write(WriteType::Batch);
        let got = storage_failure(&stopped, batch, Consistency::One, 0, 1, REPLICA);
        let Some(Error::WriteFailure(f)) = got else {
            panic!("not a write failure: {got:?}");
        };
        assert_eq!((f.write_type, f.failures.len()), (WriteType::Batch, 1));
        let overloaded = cairn_engine::Error::Overloaded;
        assert!(storage_failure(&overloaded, batch, Consistency::One, 0, 1, REPLICA).is_none());
    }
}
