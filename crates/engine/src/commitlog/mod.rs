//! Commitlog.
