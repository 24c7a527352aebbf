//! Cairn's storage engine.
#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod error;
pub mod model;
pub mod sstable;
pub mod commitlog;

pub use error::{CorruptionKind, Error, OptionError, Result};
