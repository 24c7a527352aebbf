//! The CQL native protocol's wire format, versions 3 and 4 (spec: apache/cassandra
//! `doc/native_protocol_v4.spec`), shared by everything that speaks it: the node's server
//! (`cairn-server`), the load generator (`cairn-bench`) and, later, internode code.
//!
//! Layers, bottom up:
//! * [`codec`]: the spec's notations (`[int]`, `[string]`, `[value]`, …) over byte buffers.
//! * [`frame`]: frame headers, incremental frame splitting, size limits, version refusal.
//! * [`compression`]: lz4 / snappy frame bodies.
//! * [`types`]: protocol-level column types and specs.
//! * [`message`]: typed requests and responses.
//!
//! No sockets and no runtime here: the TCP server lives in `cairn-server`'s `protocol` module.
//!
//! Nothing here trusts its input: every decoder returns errors, never panics, and never
//! allocates on the word of a declared length.

pub mod codec;
pub mod compression;
pub mod frame;
pub mod message;
pub mod types;

pub use codec::{Consistency, DecodeError, Value};
pub use compression::Compression;
pub use frame::{Frame, FrameDecoder, FrameError, FrameHeader, Opcode};
pub use message::*;
pub use types::{ColumnSpec, ColumnType, TableSpec};
