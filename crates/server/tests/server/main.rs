//! The server's integration tests, one test binary: configuration, the native protocol over
//! TCP and TLS, the real ScyllaDB Rust driver, the REST API, nodetool and the operations pages, each
//! against a node started in-process on free loopback ports.
//!
//! They are modules of a single binary rather than one binary per file because every test
//! binary links the server, the engine, tokio and the driver again: one binary builds in a
//! fraction of the time. Select a module with its path, e.g.
//! `cargo test --release -p cairn-server --test server scylla_driver::`.

mod common;

mod admin_auth;
mod config;
mod nodetool;
mod operations;
mod protocol_server;
mod rest_api;
mod scylla_driver;
mod tls;
