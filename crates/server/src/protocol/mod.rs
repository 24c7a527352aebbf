//! The CQL native protocol server: the tokio TCP server, one task per connection that runs
//! statements inline when the [`server::Handler`] can, plus one task per statement that must
//! run elsewhere.
//!
//! The wire format (notations, frames, compression, typed messages) is the `cairn-protocol`
//! crate, re-exported here whole so the server's handlers and tests name one path for
//! everything native-protocol.

pub mod connection;
pub mod server;

pub use cairn_protocol::*;
pub use server::{
    ConnectionInfo, EventBus, Handler, RequestContext, Server, ServerConfig, ServerStats,
};
