//! SSTables.

pub mod bloom;
pub mod chunked;
pub mod compression;
pub mod histogram;
