//! How a coordinator reaches other replicas: one request at a time, sent from the runtime's
//! tasks, its answer handed to the thread waiting for the level through a channel. The
//! waiting thread may have its answer (or have given up) before a replica answers: the
//! request goes on regardless, and a late answer is dropped.

use crate::error::Result;
use crate::messaging::{Messaging, Verb};
use bytes::Bytes;
use std::net::IpAddr;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

/// Messaging, the runtime its requests are sent from, and how long a request may take.
pub(super) struct Link<'a> {
    /// Internode messaging.
    pub messaging: &'a Arc<Messaging>,
    /// The runtime the requests are sent from.
    pub runtime: &'a tokio::runtime::Handle,
    /// How long the caller waits (each request's own timeout too).
    pub timeout: Duration,
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
        self.runtime.spawn(async move {
            let outcome = messaging.request(peer, verb, body, timeout).await;
            if let Some(message) = deliver(outcome) {
                let _ = tx.send(message);
            }
        });
    }
}
