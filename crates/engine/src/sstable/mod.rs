//! SSTables.
