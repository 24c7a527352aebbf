//! Cairn's cluster: what several nodes need to be one database.
//!
//! This crate sits between statement execution (`cairn-cql`) and storage (`cairn-engine`):
//! `cql → cluster → engine`. Today it holds the pieces every node needs even alone, and that
//! drivers read from it:
//!
//! - [`node`]: who a node is — its host id, address, data center and rack;
//! - [`identity`]: the node's persistent identity (host id and tokens), made on first start
//!   and kept in the data directory;
//! - [`ring`]: the token ring — every node's tokens in order, who owns which range;
//! - [`tokens`]: choosing a new node's tokens so that ownership stays balanced;
//! - [`placement`]: which nodes hold a token's replicas, for SimpleStrategy,
//!   NetworkTopologyStrategy and LocalStrategy, exactly as Cassandra computes it — drivers
//!   compute replicas themselves and route requests by them;
//! - [`snitch`]: where this node is (SimpleSnitch, GossipingPropertyFileSnitch);
//! - [`messaging`]: requests and responses between nodes over TCP (`storage_port`), with a
//!   seam for tests to drop or delay messages;
//! - [`tls`]: TLS configurations from PEM files, for the native port and messaging, and
//!   `internode_encryption`'s policy;
//! - [`liveness`]: which peers are up, by direct echo;
//! - [`consistency`]: consistency levels and how many replicas each waits for;
//! - [`fault`]: a replica's storage fault as the request's ReadFailure or WriteFailure;
//! - [`proxy`]: the storage proxy, between statement execution and storage — consistency
//!   levels checked against the replicas' placement, then the local node's storage;
//! - [`topology`]: the cluster as this node sees it — members, tokens, states, who is up;
//! - [`raft`]: the Raft group every node is a member of, replicating schema and topology
//!   (openraft over [`messaging`]);
//! - [`membership`]: the node's place in the cluster — discovery through the seeds, forming
//!   or joining group 0, its ring entry there, and the topology rebuilt from it and
//!   liveness; the server starts and stops it;
//! - [`schema_log`]: where schema changes are committed — group 0, so that every node
//!   applies the same schema with the same table ids (the catalog in `cairn-cql` reads and
//!   applies the entries).

#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod consistency;
pub mod error;
pub mod fault;
pub mod identity;
pub mod liveness;
pub mod membership;
pub mod messaging;
pub mod node;
pub mod placement;
pub mod proxy;
pub mod raft;
pub mod ring;
pub mod schema_log;
pub mod snitch;
pub mod tls;
pub mod tokens;
pub mod topology;

pub use error::{Error, Result};
