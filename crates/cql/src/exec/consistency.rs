//! Which consistency levels a statement accepts, with Cassandra's refusals (Invalid, 0x2200):
//! `ConsistencyLevel.validateForRead` / `validateForWrite` / `validateForCas` /
//! `validateForCasCommit`. Whether enough replicas are up for an accepted level is the storage
//! proxy's question (`cairn_cluster::proxy`), asked when the statement runs.

use crate::error::{Error, Result};
use cairn_cluster::consistency::Consistency;
use cairn_cluster::placement::ReplicationStrategy;

/// A SELECT's level: anything but ANY.
pub fn for_read(cl: Consistency) -> Result<()> {
    if cl == Consistency::Any {
        return Err(Error::Invalid(
            "ANY ConsistencyLevel is only supported for writes".into(),
        ));
    }
    Ok(())
}

/// An INSERT, UPDATE or DELETE's level without conditions: anything but the serial ones.
pub fn for_write(cl: Consistency) -> Result<()> {
    if cl.is_serial() {
        return Err(Error::Invalid(
            "You must use conditional updates for serializable writes".into(),
        ));
    }
    Ok(())
}

/// An INSERT, UPDATE or DELETE's level on a counter table (`validateCounterForWrite`):
/// neither ANY nor the serial ones.
pub fn for_counter_write(cl: Consistency, table: &str) -> Result<()> {
    if cl == Consistency::Any {
        return Err(Error::Invalid(format!(
            "Consistency level ANY is not yet supported for counter table {table}"
        )));
    }
    if cl.is_serial() {
        return Err(Error::Invalid(
            "Counter operations are inherently non-serializable".into(),
        ));
    }
    Ok(())
}

/// A write that must read first (a list element set or removed by index): its level must be
/// one a read accepts.
pub fn for_read_before_write(cl: Consistency) -> Result<()> {
    for_read(cl).map_err(|_| {
        Error::Invalid(format!(
            "Write operation require a read but consistency {cl} is not supported on reads"
        ))
    })
}

/// A conditional write's levels: its serial level must be SERIAL or LOCAL_SERIAL; its commit
/// level anything but those, and EACH_QUORUM only under NetworkTopologyStrategy.
pub fn for_conditional(
    serial: Consistency,
    commit: Consistency,
    strategy: &ReplicationStrategy,
) -> Result<()> {
    if !serial.is_serial() {
        return Err(Error::Invalid(
            "Invalid consistency for conditional update. Must be one of SERIAL or LOCAL_SERIAL"
                .into(),
        ));
    }
    if commit.is_serial() {
        return Err(Error::Invalid(format!(
            "{commit} is not supported as conditional update commit consistency. Use ANY if you mean \"make sure it is accepted but I don't care how many replicas commit it for non-SERIAL reads\""
        )));
    }
    if commit == Consistency::EachQuorum
        && !matches!(strategy, ReplicationStrategy::NetworkTopology { .. })
    {
        return Err(Error::Invalid(format!(
            "consistency level {commit} not compatible with replication strategy ({})",
            strategy_class(strategy)
        )));
    }
    Ok(())
}

/// The Java class name Cassandra prints for a strategy.
fn strategy_class(strategy: &ReplicationStrategy) -> &'static str {
    match strategy {
        ReplicationStrategy::Simple { .. } => "org.apache.cassandra.locator.SimpleStrategy",
        ReplicationStrategy::NetworkTopology { .. } => {
            "org.apache.cassandra.locator.NetworkTopologyStrategy"
        }
        ReplicationStrategy::Local => "org.apache.cassandra.locator.LocalStrategy",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use Consistency::*;

    #[test]
    fn levels_each_statement_kind_refuses() {
        assert!(for_read(Any).is_err());
        assert!(for_read(Serial).is_ok());
        assert!(for_write(LocalSerial).is_err());
        assert!(for_write(Any).is_ok());
        assert_eq!(
            for_read_before_write(Any).unwrap_err().to_string(),
            "Write operation require a read but consistency ANY is not supported on reads"
        );
        let simple = ReplicationStrategy::Simple {
            replication_factor: 1,
        };
        assert!(for_conditional(Serial, Any, &simple).is_ok());
        assert!(for_conditional(Quorum, One, &simple).is_err());
        assert!(for_conditional(Serial, LocalSerial, &simple).is_err());
        assert_eq!(
            for_conditional(Serial, EachQuorum, &simple).unwrap_err().to_string(),
            "consistency level EACH_QUORUM not compatible with replication strategy (org.apache.cassandra.locator.SimpleStrategy)"
        );
    }
}
