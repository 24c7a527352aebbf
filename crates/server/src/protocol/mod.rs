//! The CQL native protocol, versions 3 and 4 (spec: apache/cassandra
//! `doc/native_protocol_v4.spec`).
//!
//! Layers, bottom up:
//! * [`codec`]: the spec's notations (`[int]`, `[string]`, `[value]`, …) over byte buffers.
//! * [`frame`]: frame headers, incremental frame splitting, size limits, version refusal.
//! * [`compression`]: lz4 / snappy frame bodies.
//! * [`types`]: protocol-level column types and specs.
//! * [`message`]: typed requests and responses.
//! * [`connection`] and [`server`]: the tokio TCP server, one task per connection that runs
//!   statements inline when the [`server::Handler`] can, plus one task per statement that
//!   must run elsewhere.
//!
//! Nothing here trusts its input: every decoder returns errors, never panics, and never
//! allocates on the word of a declared length.

pub mod codec;
pub mod compression;
pub mod connection;
pub mod frame;
pub mod message;
pub mod server;
pub mod types;

pub use codec::{Consistency, DecodeError, Value};
pub use compression::Compression;
pub use frame::{Frame, FrameDecoder, FrameError, FrameHeader, Opcode};
pub use message::*;
pub use server::{
    ConnectionInfo, EventBus, Handler, RequestContext, Server, ServerConfig, ServerStats,
};
pub use types::{ColumnSpec, ColumnType, TableSpec};
