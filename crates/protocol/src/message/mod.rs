//! Typed request and response messages (spec §4, §9) and their body encodings.
//!
//! Requests are decoded from (decompressed) frame bodies into [`Request`]; responses are
//! encoded from [`Response`]. The opposite directions (request encoding, response
//! decoding) exist too, for tests and client-side tools, and are exercised by round trips.
//!
//! Invariants:
//! * Decoding never panics and never trusts a declared count or length beyond the bytes
//!   present (see [`super::codec::Reader`]); trailing bytes after a request body are
//!   ignored, as the spec asks of readers.
//! * Encoding is version-aware where the spec differs between v3 and v4: v3 has no
//!   partition-key indexes in PREPARED metadata, no warnings or custom payloads, no
//!   READ_FAILURE / WRITE_FAILURE / FUNCTION_FAILURE (sent as READ_TIMEOUT / WRITE_TIMEOUT
//!   / INVALID like Cassandra does), and no FUNCTION / AGGREGATE schema-change targets
//!   (sent as `UPDATED KEYSPACE`).
//! * The code of an error is derived from its [`ErrorKind`], so code and code-specific
//!   fields cannot disagree.
//!
//! One file per kind of message: [`request`], [`error`], [`result`] and [`response`]
//! (responses, events and the encoded [`Reply`]); none imports a file that imports it.

pub mod error;
pub mod request;
pub mod response;
pub mod result;

pub use error::*;
pub use request::*;
pub use response::*;
pub use result::*;

#[cfg(test)]
mod tests;
