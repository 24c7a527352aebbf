//! The CQL native protocol server: the tokio TCP server, one task per connection that runs
//! statements inline when the [`Handler`] can, plus one task per statement that must run
//! elsewhere.
//!
//! Files, bottom up (none imports a file above it): [`handler`] (what the statement layer
//! implements), [`shared`] (configuration, TLS, events, counters, permits every connection
//! shares), [`transport`] (TCP or TLS, and starting a connection on a TLS port),
//! [`connection`] (one client), [`server`] (the accept loop).
//!
//! The wire format (notations, frames, compression, typed messages) is the `cairn-protocol`
//! crate, re-exported here whole so the server's handlers and tests name one path for
//! everything native-protocol.

pub mod connection;
pub mod handler;
pub mod server;
pub mod shared;
pub mod transport;

pub use cairn_protocol::*;
pub use handler::{ConnectionInfo, Handler, Inline, RequestContext, TlsInfo};
pub use server::{Server, StopHandle};
pub use shared::{EventBus, ServerConfig, ServerStats, Tls};
