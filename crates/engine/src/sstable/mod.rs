//! SSTables.
pub mod compression;
