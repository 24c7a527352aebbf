//! The trace-events seam: how a traced request learns what the engine did for it.
//!
//! A request that is traced (CQL's `TRACING ON`, a driver's `trace=True`, or chosen by
//! `nodetool settraceprobability`) hands the engine a [`Trace`] with its read
//! (`ReadCommand::trace`, passed on to each source in `SourceQuery::trace`) or its write
//! ([`crate::Database::apply_traced`]); the engine tells it, in words, each step it takes:
//! the memtables and sstables it consulted (with the bytes of the partition in each sstable),
//! the sstables a bloom filter let it skip, row-cache hits and misses, the merge, how many
//! live rows and tombstones it read, the commitlog append and the memtable insert.
//!
//! Invariants: the engine knows nothing of what a sink does with an event (the `cql` crate
//! keeps them as `system_traces.events` rows); there is no process-wide tracing state; an
//! untraced request pays one `Option` check per step and builds no text ([`event`] takes a
//! closure, called only when a trace is there).

use std::fmt;
use std::sync::Arc;

/// Where a traced request's events go.
pub trait TraceSink: Send + Sync {
    /// One event: what was done, in words (`system_traces.events.activity`). The sink times
    /// it.
    fn event(&self, activity: String);

    /// The tracing session the events belong to (a time UUID), when the sink knows it: a
    /// coordinator sends it with its messages so that the replicas record their own events
    /// under the same session.
    fn session(&self) -> Option<[u8; 16]> {
        None
    }
}

/// A traced request's sink, cheap to clone into the lazy parts of a read (row streams).
#[derive(Clone)]
pub struct Trace(Arc<dyn TraceSink>);

impl Trace {
    /// A trace sending its events to `sink`.
    pub fn new(sink: Arc<dyn TraceSink>) -> Trace {
        Trace(sink)
    }

    /// Records one event.
    pub fn event(&self, activity: impl Into<String>) {
        self.0.event(activity.into());
    }

    /// The session the events belong to (see [`TraceSink::session`]).
    pub fn session(&self) -> Option<[u8; 16]> {
        self.0.session()
    }
}

impl fmt::Debug for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Trace")
    }
}

/// Records the event `activity` builds, when the request is traced; otherwise does nothing
/// (the closure is not called).
#[inline]
pub fn event(trace: Option<&Trace>, activity: impl FnOnce() -> String) {
    if let Some(t) = trace {
        t.0.event(activity());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use parking_lot::Mutex;

    #[derive(Default)]
    struct Collect(Mutex<Vec<String>>);

    impl TraceSink for Collect {
        fn event(&self, activity: String) {
            self.0.lock().push(activity);
        }
    }

    #[test]
    fn events_are_built_only_when_traced() {
        let sink = Arc::new(Collect::default());
        let trace = Trace::new(sink.clone());
        event(Some(&trace), || "one".into());
        event(None, || unreachable!("no trace: the event is not built"));
        trace.event("two");
        assert_eq!(*sink.0.lock(), ["one", "two"]);
    }
}
