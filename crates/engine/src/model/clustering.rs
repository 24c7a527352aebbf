//! Byte-comparable clustering keys (in progress).
