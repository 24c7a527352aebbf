//! Whether enough replicas are up for a consistency level — Cassandra's
//! `assureSufficientLiveReplicas`, as a pure decision over the replicas of one token.
//!
//! ANY is always available (a coordinator can keep a hint); LOCAL_ONE, LOCAL_QUORUM and
//! LOCAL_SERIAL (a Paxos round among the local data center's replicas) count the local data
//! center's replicas only; EACH_QUORUM under NetworkTopologyStrategy needs a
//! quorum in every data center of the strategy and names the one that lacks it; every other
//! level counts all replicas up against its block-for.

use crate::consistency::{local_quorum, Consistency, Unavailable};
use crate::placement::ReplicationStrategy;

/// One replica of a token as the check sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replica<'a> {
    /// Its data center.
    pub datacenter: &'a str,
    /// Whether the coordinator can use it now.
    pub up: bool,
}

/// Checks that `replicas` (one token's, as placed by `strategy`) can serve `cl` from a
/// coordinator in `local_dc`; the block-for when they can.
pub fn check(
    cl: Consistency,
    strategy: &ReplicationStrategy,
    local_dc: &str,
    replicas: &[Replica<'_>],
) -> Result<usize, Unavailable> {
    let block_for = cl.block_for(strategy, local_dc);
    let up_in = |dc: &str| {
        replicas
            .iter()
            .filter(|r| r.up && r.datacenter == dc)
            .count()
    };
    let unavailable = |required, alive, datacenter| Unavailable {
        consistency: cl,
        required,
        alive,
        datacenter,
    };
    match (cl, strategy) {
        (Consistency::Any, _) => Ok(block_for),
        (Consistency::LocalOne | Consistency::LocalQuorum | Consistency::LocalSerial, _) => {
            let alive = up_in(local_dc);
            if alive < block_for {
                return Err(unavailable(block_for, alive, None));
            }
            Ok(block_for)
        }
        (Consistency::EachQuorum, ReplicationStrategy::NetworkTopology { datacenters }) => {
            for (dc, _) in datacenters {
                let required = local_quorum(strategy, dc);
                let alive = up_in(dc);
                if alive < required {
                    return Err(unavailable(required, alive, Some(dc.clone())));
                }
            }
            Ok(block_for)
        }
        _ => {
            let alive = replicas.iter().filter(|r| r.up).count();
            if alive < block_for {
                return Err(unavailable(block_for, alive, None));
            }
            Ok(block_for)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use Consistency::*;

    fn replicas(spec: &[(&'static str, bool)]) -> Vec<Replica<'static>> {
        spec.iter()
            .map(|&(datacenter, up)| Replica { datacenter, up })
            .collect()
    }

    #[test]
    fn levels_against_replicas_up_and_down() {
        let rf3 = ReplicationStrategy::Simple {
            replication_factor: 3,
        };
        let nts = ReplicationStrategy::NetworkTopology {
            datacenters: vec![("dc1".into(), 3), ("dc2".into(), 2)],
        };
        let one_node = replicas(&[("dc1", true)]);
        let elsewhere = replicas(&[("dc2", true)]);
        let two_of_three = replicas(&[("dc1", true), ("dc1", false), ("dc1", true)]);
        let mixed = replicas(&[
            ("dc1", true),
            ("dc1", true),
            ("dc1", false),
            ("dc2", true),
            ("dc2", false),
        ]);
        let none: Vec<Replica<'static>> = Vec::new();
        // (level, strategy, replicas, Ok(block-for) or Err((required, alive, dc)))
        type Want = Result<usize, (usize, usize, Option<&'static str>)>;
        let cases: Vec<(Consistency, &ReplicationStrategy, &[Replica<'_>], Want)> = vec![
            // One node, replication factor 3: what Cassandra answers on a node of its own.
            (One, &rf3, &one_node, Ok(1)),
            (LocalOne, &rf3, &one_node, Ok(1)),
            (LocalOne, &rf3, &elsewhere, Err((1, 0, None))),
            (LocalQuorum, &rf3, &elsewhere, Err((2, 0, None))),
            (Quorum, &rf3, &one_node, Err((2, 1, None))),
            (All, &rf3, &one_node, Err((3, 1, None))),
            (Two, &rf3, &one_node, Err((2, 1, None))),
            (Any, &rf3, &none, Ok(1)),
            (Quorum, &rf3, &two_of_three, Ok(2)),
            (All, &rf3, &two_of_three, Err((3, 2, None))),
            (Three, &rf3, &two_of_three, Err((3, 2, None))),
            (Serial, &rf3, &two_of_three, Ok(2)),
            // Two data centers.
            (LocalQuorum, &nts, &mixed, Ok(2)),
            (LocalSerial, &nts, &mixed, Ok(2)),
            (LocalSerial, &rf3, &elsewhere, Err((2, 0, None))),
            (LocalOne, &nts, &mixed, Ok(1)),
            (Quorum, &nts, &mixed, Ok(3)),
            (All, &nts, &mixed, Err((5, 3, None))),
            (EachQuorum, &nts, &mixed, Err((2, 1, Some("dc2")))),
            (One, &nts, &none, Err((1, 0, None))),
        ];
        for (i, (cl, s, r, want)) in cases.into_iter().enumerate() {
            let got = check(cl, s, "dc1", r).map_err(|u| {
                let dc = u.datacenter.clone();
                (u.required, u.alive, dc)
            });
            let want = want.map_err(|(a, b, dc)| (a, b, dc.map(str::to_string)));
            assert_eq!(got, want, "case {i}: {cl}");
        }
    }

    #[test]
    fn the_error_reads_as_cassandras() {
        let nts = ReplicationStrategy::NetworkTopology {
            datacenters: vec![("dc2".into(), 3)],
        };
        let e = check(EachQuorum, &nts, "dc1", &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Cannot achieve consistency level EACH_QUORUM in DC dc2"
        );
        let e = check(Quorum, &nts, "dc1", &[]).unwrap_err();
        assert_eq!(e.to_string(), "Cannot achieve consistency level QUORUM");
    }
}
