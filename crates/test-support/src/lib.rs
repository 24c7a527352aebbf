//! Helpers shared by the integration tests of several Cairn crates (a dev-dependency only;
//! nothing here is part of the node).
//!
//! - [`kv`]: the `(a int, b int, c text, PRIMARY KEY (a, b))` table the engine and server
//!   tests write to, its keys and one-row inserts, built directly as engine mutations;
//! - [`page_cache`]: dropping a directory's files from the OS page cache, so a read must go
//!   to the disk (the non-blocking read tests);
//! - [`pki`]: test certificates (CAs and the certificates they sign), made by `openssl`.
//!
//! What only one crate's tests use stays in that crate's `tests/*/common.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod kv;
pub mod page_cache;
pub mod pki;
