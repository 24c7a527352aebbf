//! The coordinator's write: mutations sent to every replica that is up, acknowledged at the
//! request's consistency level.
//!
//! Each mutation has its replicas (placed by its keyspace's strategy) and is acknowledged
//! when enough of them applied it for the level — counted exactly as availability counts
//! replicas up ([`super::availability::check`] over the replicas that answered; ANY waits
//! for one). Every target gets all of the request's mutations it is a replica of in one
//! message, applied there in one commitlog record; the local replica applies on the calling
//! thread first. The caller waits at most the write timeout: then the protocol's
//! WriteTimeout with the acknowledgements received, or WriteFailure as soon as failures leave
//! too few replicas to reach the level. Replicas that have not answered keep receiving the
//! write after the caller has its answer, as in Cassandra.
//!
//! Waiting happens on the calling thread (the server's blocking pool: a request that must
//! wait for remote replicas is refused under `Wait::Never` before anything is applied and
//! runs again there); the messages go out on the runtime's tasks.

use super::availability::{self, Replica};
use super::link::Link;
use crate::consistency::{Consistency, WriteFailure, WriteTimeout, WriteType};
use crate::error::{Error, Result};
use crate::messaging::Verb;
use crate::placement::ReplicationStrategy;
use crate::ring::TokenRing;
use bytes::Bytes;
use cairn_engine::model::mutation::encode_batch;
use cairn_engine::model::Mutation;
use cairn_engine::{Database, Wait};
use std::net::IpAddr;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;

/// One mutation's part in a write: its replicas (indexes into the ring's endpoints) and how
/// they are counted.
pub(super) struct Planned {
    /// The mutation's keyspace's strategy.
    pub strategy: Arc<ReplicationStrategy>,
    /// Its replicas that are up (the targets), as ring endpoint indexes.
    pub targets: Vec<usize>,
}

/// Sends `mutations` (each planned in `plans`, same order) to their targets and waits for
/// `cl`. `local` is the local node's endpoint index, if it is on the ring.
#[allow(clippy::too_many_arguments)] // one write's whole description, all used together
pub(super) fn write(
    db: &Database,
    ring: &TokenRing,
    local: Option<usize>,
    local_dc: &str,
    mutations: Vec<Mutation>,
    plans: &[Planned],
    cl: Consistency,
    write_type: WriteType,
    link: &Link<'_>,
) -> Result<()> {
    let endpoints = ring.endpoints();
    // Each target's share of the mutations.
    let mut shares: Vec<Vec<Mutation>> = vec![Vec::new(); endpoints.len()];
    for (m, plan) in mutations.iter().zip(plans) {
        for &t in &plan.targets {
            if let Some(share) = shares.get_mut(t) {
                share.push(m.clone());
            }
        }
    }
    let (tx, rx) = mpsc::channel::<(usize, std::result::Result<(), String>)>();
    let mut outstanding = 0usize;
    for (t, share) in shares.iter_mut().enumerate() {
        if share.is_empty() || Some(t) == local {
            continue;
        }
        let Some(peer) = endpoints.get(t).map(|e| e.address) else {
            continue;
        };
        let mut body = Vec::new();
        encode_batch(share, &mut body);
        link.send(
            peer,
            Verb::Mutation,
            Bytes::from(body),
            &tx,
            move |r| match r {
                Ok(_) => Some((t, Ok(()))),
                // The replica answered with an error: a failure.
                Err(Error::Remote { message, .. }) => Some((t, Err(message))),
                // No answer (lost, unreachable, too slow) is a timeout, not a failure.
                Err(_) => None,
            },
        );
        outstanding += 1;
    }
    drop(tx);
    let mut acked = vec![false; endpoints.len()];
    let mut failures: Vec<(IpAddr, String)> = Vec::new();
    if let Some(l) = local {
        if let Some(share) = shares.get_mut(l).filter(|s| !s.is_empty()) {
            db.apply(std::mem::take(share), Wait::Allowed)?;
            acked[l] = true;
        }
    }
    let deadline = Instant::now() + link.timeout;
    loop {
        let tally = Tally::of(ring, local_dc, plans, cl, &acked, &failures);
        let Some((received, block_for)) = tally.unmet else {
            return Ok(());
        };
        if tally.hopeless || outstanding == 0 {
            return Err(Error::WriteFailure(WriteFailure {
                consistency: cl,
                received,
                block_for,
                failures,
                write_type,
            }));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        // A closed channel means no answer will come: the same as the deadline.
        match rx.recv_timeout(left) {
            Ok((t, Ok(()))) => {
                outstanding -= 1;
                if let Some(a) = acked.get_mut(t) {
                    *a = true;
                }
            }
            Ok((t, Err(why))) => {
                outstanding -= 1;
                if let Some(e) = endpoints.get(t) {
                    failures.push((e.address, why));
                }
            }
            Err(_) => {
                return Err(Error::WriteTimeout(WriteTimeout {
                    consistency: cl,
                    received,
                    block_for,
                    write_type,
                }))
            }
        }
    }
}

/// Where a write stands.
struct Tally {
    /// The first mutation short of its level: (acknowledgements that count, block-for).
    unmet: Option<(usize, usize)>,
    /// Whether some mutation can no longer reach its level (too many replicas failed).
    hopeless: bool,
}

impl Tally {
    fn of(
        ring: &TokenRing,
        local_dc: &str,
        plans: &[Planned],
        cl: Consistency,
        acked: &[bool],
        failures: &[(IpAddr, String)],
    ) -> Tally {
        // A write at ANY still waits for one replica (no hints yet).
        let counted = if cl == Consistency::Any {
            Consistency::One
        } else {
            cl
        };
        let endpoints = ring.endpoints();
        let failed = |i: usize| {
            endpoints
                .get(i)
                .is_some_and(|e| failures.iter().any(|(a, _)| *a == e.address))
        };
        let mut out = Tally {
            unmet: None,
            hopeless: false,
        };
        for plan in plans {
            let view = |up: &dyn Fn(usize) -> bool| -> Vec<Replica<'_>> {
                plan.targets
                    .iter()
                    .filter_map(|&i| {
                        endpoints.get(i).map(|e| Replica {
                            datacenter: e.datacenter.as_str(),
                            up: up(i),
                        })
                    })
                    .collect()
            };
            let acks = view(&|i| acked.get(i).copied().unwrap_or(false));
            if let Err(short) = availability::check(counted, &plan.strategy, local_dc, &acks) {
                out.unmet.get_or_insert((short.alive, short.required));
                // Could the replicas that have not failed still make it?
                let possible = view(&|i| !failed(i));
                if availability::check(counted, &plan.strategy, local_dc, &possible).is_err() {
                    out.hopeless = true;
                }
            }
        }
        out
    }
}
