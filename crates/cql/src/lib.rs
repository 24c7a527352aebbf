//! CQL language (placeholder until the CQL issue).
