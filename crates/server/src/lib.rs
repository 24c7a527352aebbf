//! Network server (placeholder until the CQL issue).
