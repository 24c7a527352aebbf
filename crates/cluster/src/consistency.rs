//! Consistency levels: how many replicas must answer a request, as Cassandra counts them.
//!
//! A level's *block-for* is the number of replica answers a request waits for; it is computed
//! from the keyspace's replication factors, not from how many nodes the ring has (a keyspace
//! with `replication_factor: 3` on one node needs 2 answers at QUORUM, and so cannot be served
//! — Cassandra answers Unavailable, and so does Cairn). The rules are Cassandra's
//! `ConsistencyLevel.blockFor`.

use crate::placement::ReplicationStrategy;
use std::fmt;

/// A consistency level, with the native protocol's codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Consistency {
    /// A write is accepted when any node stored it (a hint counts).
    Any,
    /// One replica. Cassandra's default for a request without one.
    #[default]
    One,
    /// Two replicas.
    Two,
    /// Three replicas.
    Three,
    /// A majority of all replicas.
    Quorum,
    /// Every replica.
    All,
    /// A majority of the local data center's replicas.
    LocalQuorum,
    /// A majority in every data center (writes).
    EachQuorum,
    /// Linearizable (Paxos) across data centers.
    Serial,
    /// Linearizable within the local data center.
    LocalSerial,
    /// One replica of the local data center.
    LocalOne,
}

impl Consistency {
    /// The level of a protocol code (`[consistency]`, a `[short]`), if it is one.
    pub fn from_code(code: u16) -> Option<Consistency> {
        use Consistency::*;
        Some(match code {
            0 => Any,
            1 => One,
            2 => Two,
            3 => Three,
            4 => Quorum,
            5 => All,
            6 => LocalQuorum,
            7 => EachQuorum,
            8 => Serial,
            9 => LocalSerial,
            10 => LocalOne,
            _ => return None,
        })
    }

    /// The protocol code.
    pub fn code(self) -> u16 {
        use Consistency::*;
        match self {
            Any => 0,
            One => 1,
            Two => 2,
            Three => 3,
            Quorum => 4,
            All => 5,
            LocalQuorum => 6,
            EachQuorum => 7,
            Serial => 8,
            LocalSerial => 9,
            LocalOne => 10,
        }
    }

    /// The name Cassandra prints (`LOCAL_QUORUM`).
    pub fn name(self) -> &'static str {
        use Consistency::*;
        match self {
            Any => "ANY",
            One => "ONE",
            Two => "TWO",
            Three => "THREE",
            Quorum => "QUORUM",
            All => "ALL",
            LocalQuorum => "LOCAL_QUORUM",
            EachQuorum => "EACH_QUORUM",
            Serial => "SERIAL",
            LocalSerial => "LOCAL_SERIAL",
            LocalOne => "LOCAL_ONE",
        }
    }

    /// Whether only the local data center's replicas count.
    pub fn is_datacenter_local(self) -> bool {
        matches!(
            self,
            Consistency::LocalQuorum | Consistency::LocalSerial | Consistency::LocalOne
        )
    }

    /// SERIAL or LOCAL_SERIAL.
    pub fn is_serial(self) -> bool {
        matches!(self, Consistency::Serial | Consistency::LocalSerial)
    }

    /// Replica answers a request at this level waits for (Cassandra's `blockFor`), for a
    /// keyspace replicated by `strategy`, the coordinator being in `local_dc`.
    pub fn block_for(self, strategy: &ReplicationStrategy, local_dc: &str) -> usize {
        use Consistency::*;
        match self {
            Any | One | LocalOne => 1,
            Two => 2,
            Three => 3,
            Quorum | Serial => quorum(strategy.replication_factor()),
            All => strategy.replication_factor(),
            LocalQuorum | LocalSerial => local_quorum(strategy, local_dc),
            EachQuorum => match strategy {
                ReplicationStrategy::NetworkTopology { datacenters } => datacenters
                    .iter()
                    .map(|(dc, _)| local_quorum(strategy, dc))
                    .sum(),
                _ => quorum(strategy.replication_factor()),
            },
        }
    }
}

impl fmt::Display for Consistency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A majority of `replicas`.
fn quorum(replicas: usize) -> usize {
    replicas / 2 + 1
}

/// A majority of `dc`'s replicas under NetworkTopologyStrategy; of all replicas otherwise
/// (Cassandra's `localQuorumFor`).
pub(crate) fn local_quorum(strategy: &ReplicationStrategy, dc: &str) -> usize {
    match strategy {
        ReplicationStrategy::NetworkTopology { datacenters } => quorum(
            datacenters
                .iter()
                .find(|(d, _)| d == dc)
                .map_or(0, |(_, rf)| *rf),
        ),
        _ => quorum(strategy.replication_factor()),
    }
}

/// Too few replicas are up for a level: the protocol's Unavailable error (0x1000), with
/// Cassandra's text ("Cannot achieve consistency level QUORUM", "… in DC dc2").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// The level asked for.
    pub consistency: Consistency,
    /// Replicas it needs up.
    pub required: usize,
    /// Replicas up.
    pub alive: usize,
    /// The data center that lacks them (EACH_QUORUM).
    pub datacenter: Option<String>,
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cannot achieve consistency level {}", self.consistency)?;
        if let Some(dc) = &self.datacenter {
            write!(f, " in DC {dc}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Unavailable {}

/// What kind of write timed out or failed (the protocol's `writeType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteType {
    /// One partition's write.
    Simple,
    /// A logged batch of several partitions.
    Batch,
    /// An unlogged batch of several partitions.
    UnloggedBatch,
    /// A conditional write's commit.
    Cas,
    /// A counter write.
    Counter,
}

impl WriteType {
    /// The protocol's name (`SIMPLE`, `BATCH`, `UNLOGGED_BATCH`, `CAS`).
    pub fn name(self) -> &'static str {
        match self {
            WriteType::Simple => "SIMPLE",
            WriteType::Batch => "BATCH",
            WriteType::UnloggedBatch => "UNLOGGED_BATCH",
            WriteType::Cas => "CAS",
            WriteType::Counter => "COUNTER",
        }
    }
}

/// A write whose replicas did not all answer in time: the protocol's WriteTimeout (0x1100),
/// with Cassandra's text ("Operation timed out - received only 1 responses.").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteTimeout {
    /// The level asked for.
    pub consistency: Consistency,
    /// Acknowledgements that count toward it.
    pub received: usize,
    /// Acknowledgements it needs.
    pub block_for: usize,
    /// What kind of write.
    pub write_type: WriteType,
}

impl fmt::Display for WriteTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Operation timed out - received only {} responses.",
            self.received
        )
    }
}

impl std::error::Error for WriteTimeout {}

/// A write that replicas refused so that it cannot reach its level: the protocol's
/// WriteFailure (0x1500), with Cassandra's text ("Operation failed - received 1 responses and
/// 2 failures: … from …").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteFailure {
    /// The level asked for.
    pub consistency: Consistency,
    /// Acknowledgements that count toward it.
    pub received: usize,
    /// Acknowledgements it needs.
    pub block_for: usize,
    /// What each failed replica said, by address.
    pub failures: Vec<(std::net::IpAddr, String)>,
    /// What kind of write.
    pub write_type: WriteType,
}

impl fmt::Display for WriteFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        failed(f, self.received, &self.failures)
    }
}

impl std::error::Error for WriteFailure {}

/// Cassandra's text for a failed request: "Operation failed - received 1 responses and 1
/// failures: … from /127.0.0.2".
fn failed(
    f: &mut fmt::Formatter<'_>,
    received: usize,
    failures: &[(std::net::IpAddr, String)],
) -> fmt::Result {
    write!(
        f,
        "Operation failed - received {received} responses and {} failures",
        failures.len()
    )?;
    for (i, (peer, why)) in failures.iter().enumerate() {
        f.write_str(if i == 0 { ": " } else { ", " })?;
        write!(f, "{why} from /{peer}")?;
    }
    Ok(())
}

/// A read whose replicas did not all answer in time: the protocol's ReadTimeout (0x1200).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadTimeout {
    /// The level asked for.
    pub consistency: Consistency,
    /// Answers received.
    pub received: usize,
    /// Answers it needs.
    pub block_for: usize,
    /// Whether the replica asked for data answered.
    pub data_present: bool,
}

impl fmt::Display for ReadTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Operation timed out - received only {} responses.",
            self.received
        )
    }
}

impl std::error::Error for ReadTimeout {}

/// A read a replica failed: the protocol's ReadFailure (0x1300).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadFailure {
    /// The level asked for.
    pub consistency: Consistency,
    /// Answers received.
    pub received: usize,
    /// Answers it needs.
    pub block_for: usize,
    /// What each failed replica said, by address.
    pub failures: Vec<(std::net::IpAddr, String)>,
    /// Whether the replica asked for data answered.
    pub data_present: bool,
}

impl fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        failed(f, self.received, &self.failures)
    }
}

impl std::error::Error for ReadFailure {}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_unknown_codes_are_none() {
        for code in 0..=10 {
            let c = Consistency::from_code(code).unwrap();
            assert_eq!(c.code(), code);
        }
        assert_eq!(Consistency::from_code(11), None);
        assert_eq!(Consistency::LocalQuorum.to_string(), "LOCAL_QUORUM");
    }

    #[test]
    fn block_for_follows_the_replication_factors() {
        let simple = |rf| ReplicationStrategy::Simple {
            replication_factor: rf,
        };
        let nts = ReplicationStrategy::NetworkTopology {
            datacenters: vec![("dc1".into(), 3), ("dc2".into(), 5)],
        };
        use Consistency::*;
        // (level, strategy, local dc, block-for)
        let cases: Vec<(Consistency, &ReplicationStrategy, &str, usize)> = vec![
            (One, &nts, "dc1", 1),
            (Any, &nts, "dc1", 1),
            (Two, &nts, "dc1", 2),
            (Quorum, &nts, "dc1", 5),
            (All, &nts, "dc1", 8),
            (LocalQuorum, &nts, "dc1", 2),
            (LocalQuorum, &nts, "dc2", 3),
            (LocalQuorum, &nts, "elsewhere", 1),
            (EachQuorum, &nts, "dc1", 5),
            (Serial, &nts, "dc1", 5),
            (LocalSerial, &nts, "dc2", 3),
        ];
        for (cl, s, dc, want) in cases {
            assert_eq!(cl.block_for(s, dc), want, "{cl} in {dc}");
        }
        let rf3 = simple(3);
        assert_eq!(Quorum.block_for(&rf3, "datacenter1"), 2);
        assert_eq!(LocalQuorum.block_for(&rf3, "datacenter1"), 2);
        assert_eq!(EachQuorum.block_for(&rf3, "datacenter1"), 2);
        assert_eq!(All.block_for(&simple(1), "datacenter1"), 1);
        assert_eq!(All.block_for(&ReplicationStrategy::Local, "x"), 1);
    }
}
