//! Bound values as terms see them: a request's values ([`Binds`]), or PREPARE's
//! placeholders for every marker ([`Placeholders`], see [`crate::values::placeholder`]).

use super::catalog;
use super::session::QueryParams;
use crate::ast::BindMarker;
use crate::values::{BoundValue, TermContext};

/// Bound values as terms see them.
pub struct Binds<'a> {
    params: &'a QueryParams,
    now: i64,
}

impl<'a> Binds<'a> {
    /// Values from the request.
    pub fn new(params: &'a QueryParams) -> Self {
        Binds {
            params,
            now: catalog::now_micros(),
        }
    }
}

impl TermContext for Binds<'_> {
    fn bind(&self, marker: &BindMarker) -> Option<BoundValue> {
        match (&self.params.names, &marker.name) {
            (Some(names), Some(name)) => names
                .iter()
                .position(|n| n == name)
                .and_then(|i| self.params.values.get(i).cloned()),
            _ => self.params.values.get(marker.index).cloned(),
        }
    }

    fn now_micros(&self) -> i64 {
        self.now
    }
}

/// A term context for PREPARE: every marker stands for a placeholder of its receiver's type
/// (see [`crate::values::placeholder`]), so resolving a statement refuses what its shape
/// alone makes wrong, as Cassandra does when it prepares it.
#[derive(Debug, Clone, Copy)]
pub struct Placeholders {
    now: i64,
}

impl Placeholders {
    /// Placeholders, with the current time for `now()`.
    pub fn new() -> Self {
        Placeholders {
            now: catalog::now_micros(),
        }
    }
}

impl Default for Placeholders {
    fn default() -> Self {
        Self::new()
    }
}

impl TermContext for Placeholders {
    fn bind(&self, _marker: &BindMarker) -> Option<BoundValue> {
        // Not asked: with `placeholders()`, term evaluation makes the value itself, as only
        // it knows the receiver's type.
        None
    }

    fn now_micros(&self) -> i64 {
        self.now
    }

    fn placeholders(&self) -> bool {
        true
    }
}
