//! The cluster crate's error type.

use std::path::PathBuf;

/// Result with the cluster crate's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong in the cluster crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Two nodes claim the same token.
    #[error("token {token} is claimed by two nodes, {first} and {second}")]
    DuplicateToken {
        /// The token.
        token: i64,
        /// The first node's host id.
        first: String,
        /// The second node's host id.
        second: String,
    },
    /// A token that is not a Murmur3 token.
    #[error("`{0}` is not a Murmur3 token (a signed 64-bit integer above -9223372036854775808)")]
    InvalidToken(String),
    /// A token count the configuration cannot have.
    #[error("{0}")]
    Config(String),
    /// A file of the node's identity or configuration that cannot be used.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line where it applies.
        message: String,
    },
    /// An I/O error on a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A peer could not be reached, or its connection was lost before it answered.
    #[error("node {peer}: {message}")]
    Unreachable {
        /// The peer.
        peer: std::net::IpAddr,
        /// What happened.
        message: String,
    },
    /// A peer did not answer in time.
    #[error("node {peer} did not answer {verb} within {millis} ms")]
    Timeout {
        /// The peer.
        peer: std::net::IpAddr,
        /// The request's verb.
        verb: &'static str,
        /// The timeout.
        millis: u128,
    },
    /// A peer answered with an error.
    #[error("node {peer} failed {verb}: {message}")]
    Remote {
        /// The peer.
        peer: std::net::IpAddr,
        /// The request's verb.
        verb: &'static str,
        /// The peer's error text.
        message: String,
    },
    /// Too few replicas are up for the request's consistency level.
    #[error(transparent)]
    Unavailable(#[from] crate::consistency::Unavailable),
    /// A write's replicas did not answer in time for its consistency level.
    #[error(transparent)]
    WriteTimeout(#[from] crate::consistency::WriteTimeout),
    /// A write's replicas refused it, so that it cannot reach its consistency level.
    #[error(transparent)]
    WriteFailure(#[from] crate::consistency::WriteFailure),
    /// A read's replicas did not answer in time for its consistency level.
    #[error(transparent)]
    ReadTimeout(#[from] crate::consistency::ReadTimeout),
    /// A replica failed a read.
    #[error(transparent)]
    ReadFailure(#[from] crate::consistency::ReadFailure),
    /// A schema change asked while fewer than a majority of group 0's voters are up.
    #[error(
        "Cannot change the schema: {up} of the {voters} members of the cluster's schema group are up, \
         and a change needs a majority of them; nothing was changed"
    )]
    NoSchemaMajority {
        /// Voters up (this node included).
        up: usize,
        /// Voters.
        voters: usize,
    },
    /// A schema change that was not confirmed in time.
    #[error(
        "The schema change was not confirmed within {millis} ms ({reason}); \
         it applies later if the cluster's schema group committed it"
    )]
    SchemaNotCommitted {
        /// The timeout.
        millis: u128,
        /// What the group said.
        reason: String,
    },
    /// The Raft group failed, or a command could not be committed.
    #[error("raft: {0}")]
    Raft(String),
    /// A file a TLS option names (certificate, private key, truststore) is missing,
    /// unreadable or not what the option needs.
    #[error("{section}.{key}: {}: {problem}", path.display())]
    TlsFile {
        /// The options' section (`client_encryption_options`, `server_encryption_options`).
        section: &'static str,
        /// The option naming the file.
        key: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// TLS options that cannot be combined (rustls refused them, or one needs another).
    #[error("{section}: {message}")]
    TlsConfig {
        /// The options' section.
        section: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A replica's Paxos state, or a Paxos message, that does not decode.
    #[error("Paxos {what} of {table:032x} does not decode: {message}")]
    PaxosDecode {
        /// What was decoded (an update, a message).
        what: &'static str,
        /// The table the round is about.
        table: u128,
        /// The decoder's complaint.
        message: String,
    },
    /// The engine failed (writing the identity files).
    /// A counter increment forwarded to this node to lead, which is not one of the
    /// partition's replicas up (the ring changed since the coordinator chose it).
    #[error("this node is no longer a replica to lead the counter increment")]
    CountersLeader,
    #[error(transparent)]
    Engine(#[from] cairn_engine::Error),
}
