//! Simulator (see below).
