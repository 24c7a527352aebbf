//! The bench's load-balancing policy: the driver's default (token-aware) policy, except that
//! a cluster of one node gets that node without a routing computation.
//!
//! The default policy computes, for every request, the routing info (keyspace strategy
//! lookup), the token's replica set, a random choice among the replicas, and then a random
//! shard when the node announces no sharding. With one node every one of those answers is
//! that node, so `pick` returns it directly; any other cluster (or a sharded ScyllaDB node)
//! is routed by the default policy unchanged. The requests sent are the same either way — the partition key is still
//! serialized and its token computed by the driver before the policy is asked.

use scylla::cluster::{ClusterState, NodeRef};
use scylla::errors::RequestAttemptError;
use scylla::policies::load_balancing::{
    DefaultPolicy, FallbackPlan, LoadBalancingPolicy, RoutingInfo,
};
use scylla::routing::Shard;
use std::time::Duration;

#[derive(Debug, Default)]
pub struct SingleNodeFastPath {
    default: DefaultPolicy,
}

impl LoadBalancingPolicy for SingleNodeFastPath {
    fn pick<'a>(
        &'a self,
        request: &'a RoutingInfo,
        cluster: &'a ClusterState,
    ) -> Option<(NodeRef<'a>, Option<Shard>)> {
        match cluster.get_nodes_info() {
            // Shard 0: a node without sharding information (not ScyllaDB) has one shard,
            // which spares the driver drawing a random number in 0..1 per request. A sharded
            // node keeps the default policy's shard-aware choice.
            [only] if only.sharder().is_none() => Some((only, Some(0))),
            _ => self.default.pick(request, cluster),
        }
    }

    fn fallback<'a>(
        &'a self,
        request: &'a RoutingInfo,
        cluster: &'a ClusterState,
    ) -> FallbackPlan<'a> {
        self.default.fallback(request, cluster)
    }

    fn on_request_success(&self, request: &RoutingInfo, latency: Duration, node: NodeRef<'_>) {
        self.default.on_request_success(request, latency, node)
    }

    fn on_request_failure(
        &self,
        request: &RoutingInfo,
        latency: Duration,
        node: NodeRef<'_>,
        error: &RequestAttemptError,
    ) {
        self.default
            .on_request_failure(request, latency, node, error)
    }

    fn name(&self) -> String {
        "SingleNodeFastPath(DefaultPolicy)".into()
    }
}
