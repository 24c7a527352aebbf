//! The replica side of the proxy: what a node does with the requests coordinators send it.
//!
//! `MUTATION`: a batch of mutations (the commitlog's encoding, `model::mutation`) applied
//! together with one `Database::apply` — one commitlog record, as on the coordinator — and
//! acknowledged with an empty answer once applied (durable as the node's `commitlog_sync`
//! says). A body that does not decode, or a table this node does not have, is answered with
//! the error's text; the coordinator counts it as a failed replica. Applying may wait for the
//! disk, so it runs on the blocking pool, never on a reactor thread.

use super::StorageProxy;
use crate::messaging::{Messaging, Verb};
use bytes::Bytes;
use cairn_engine::model::mutation::decode_batch;
use cairn_engine::Wait;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Registers the replica's verbs on `messaging`, applying to `proxy`'s database.
pub fn serve(proxy: &Arc<StorageProxy>, messaging: &Messaging) {
    let proxy = Arc::clone(proxy);
    messaging.register(
        Verb::Mutation,
        Arc::new(move |from, body: Bytes| {
            let proxy = Arc::clone(&proxy);
            Box::pin(async move {
                let mutations = decode_batch(&body)
                    .map_err(|e| format!("undecodable mutation from {from}: {e:?}"))?;
                let count = mutations.len() as u64;
                let db = Arc::clone(proxy.db());
                tokio::task::spawn_blocking(move || db.apply(mutations, Wait::Allowed))
                    .await
                    .map_err(|e| format!("mutation task failed: {e}"))?
                    .map_err(|e| e.to_string())?;
                proxy
                    .metrics()
                    .replica_received_mutations
                    .fetch_add(count, Ordering::Relaxed);
                Ok(Bytes::new())
            })
        }),
    );
}
