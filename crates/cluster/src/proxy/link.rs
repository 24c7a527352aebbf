//! How a coordinator reaches other replicas: one request at a time, sent from the runtime's
//! tasks, its answer handed to the thread waiting for the level through a channel. The
//! waiting thread may have its answer (or have given up) before a replica answers: the
//! request goes on regardless, and a late answer is dropped.
//!
//! A traced request's link hands its trace to messaging, which records each message sent and
//! each answer received as Cassandra 5.0 does ("Sending MUTATION_REQ message to
//! /10.0.0.2:7000 message size 123 bytes", "MUTATION_RSP message received from
//! /10.0.0.2:7000") and sends the session along, for the replica to record its own events
//! under.

use crate::error::Result;
use crate::messaging::{Messaging, Verb};
use bytes::Bytes;
use std::net::IpAddr;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

use cairn_engine::Trace;

/// Messaging, the runtime its requests are sent from, and how long a request may take.
pub(super) struct Link<'a> {
    /// Internode messaging.
    pub messaging: &'a Arc<Messaging>,
    /// The runtime the requests are sent from.
    pub runtime: &'a tokio::runtime::Handle,
    /// How long the caller waits (each request's own timeout too).
    pub timeout: Duration,
    /// The request's trace, when it is traced.
    pub trace: Option<&'a Trace>,
}

impl Link<'_> {
    /// Sends `verb` with `body` to `peer`; `deliver` turns the outcome into what `tx`
    /// carries (`None`: nothing to deliver).
    pub fn send<T: Send + 'static>(
        &self,
        peer: IpAddr,
        verb: Verb,
        body: Bytes,
        tx: &Sender<T>,
        deliver: impl FnOnce(Result<Bytes>) -> Option<T> + Send + 'static,
    ) {
        let (tx, messaging, timeout) = (tx.clone(), Arc::clone(self.messaging), self.timeout);
        let trace = self.trace.cloned();
        self.runtime.spawn(async move {
            let outcome = messaging
                .request_traced(peer, verb, body, timeout, trace)
                .await;
            if let Some(message) = deliver(outcome) {
                let _ = tx.send(message);
            }
        });
    }
}
