//! What a request brings: its bound values and options ([`QueryParams`]) and the
//! connection's state ([`Session`]: the current keyspace and the logged-in role).

use crate::error::{Error, Result};
use crate::values::BoundValue;
use bytes::Bytes;
use cairn_cluster::consistency::Consistency;
use parking_lot::RwLock;

/// Per-request parameters (from QUERY / EXECUTE / BATCH).
#[derive(Debug, Clone, Default)]
pub struct QueryParams {
    /// Bound values, positionally.
    pub values: Vec<BoundValue>,
    /// Names of the values, when the driver sent named values.
    pub names: Option<Vec<String>>,
    /// Rows per page (`None` or ≤ 0: no paging).
    pub page_size: Option<i32>,
    /// Where to resume.
    pub paging_state: Option<Bytes>,
    /// Default write timestamp (µs).
    pub timestamp: Option<i64>,
    /// The request's consistency levels.
    pub levels: Levels,
    /// Where a write run under `Wait::Never` may leave its wait for other replicas, for the
    /// caller to await before answering (`StorageProxy::mutate_or_defer`); without it such a
    /// write is refused with `WouldBlock`, to run again where it may block.
    pub acks: Option<std::sync::Arc<cairn_cluster::proxy::Acks>>,
    /// Where a traced request's events go (`crate::trace`); `None` when not traced.
    pub trace: Option<cairn_engine::Trace>,
}

/// What a whole BATCH brings besides its statements (each has its own bound values).
#[derive(Debug, Clone, Copy, Default)]
pub struct BatchOptions<'a> {
    /// The batch's default write timestamp (µs).
    pub timestamp: Option<i64>,
    /// Its consistency levels.
    pub levels: Levels,
    /// Where its write may leave its wait for other replicas ([`QueryParams::acks`]).
    pub acks: Option<&'a cairn_cluster::proxy::Acks>,
    /// Where a traced batch's events go ([`QueryParams::trace`]).
    pub trace: Option<&'a cairn_engine::Trace>,
}

/// The consistency levels of one request (a QUERY, an EXECUTE or a whole BATCH).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Levels {
    /// The consistency level: ONE when a caller gives none, as Cassandra's default options.
    pub consistency: Consistency,
    /// The serial consistency level of a conditional write: SERIAL when none is given.
    pub serial: Consistency,
}

impl Default for Levels {
    fn default() -> Self {
        Levels {
            consistency: Consistency::One,
            serial: Consistency::Serial,
        }
    }
}

/// A connection's state.
#[derive(Debug, Default)]
pub struct Session {
    /// Current keyspace (`USE`).
    pub keyspace: RwLock<Option<String>>,
    /// The authenticated role, when authentication is on.
    pub user: RwLock<Option<String>>,
    /// The node's own writer (the trace writer): not a client's session, so it may write
    /// `system_traces` and is not checked against roles. Clients never get one.
    internal: bool,
}

impl Session {
    /// A session of the node's own, for its internal writes ([`Session::is_internal`]).
    pub(crate) fn internal() -> Session {
        Session {
            internal: true,
            ..Session::default()
        }
    }

    /// The same session (user, internal or not) in `keyspace`.
    pub(crate) fn scoped(&self, keyspace: Option<String>) -> Session {
        Session {
            keyspace: RwLock::new(keyspace),
            user: RwLock::new(self.user.read().clone()),
            internal: self.internal,
        }
    }

    /// Whether it is the node's own (see [`Session::internal`]).
    pub fn is_internal(&self) -> bool {
        self.internal
    }

    /// The keyspace a name resolves in.
    pub fn resolve(&self, keyspace: &Option<String>) -> Result<String> {
        match keyspace {
            Some(k) => Ok(k.clone()),
            None => self.keyspace.read().clone().ok_or_else(|| {
                Error::Invalid(
                    "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename"
                        .into(),
                )
            }),
        }
    }
}
