//! Liveness: which peers are up, by direct echo (ScyllaDB's direct failure detector).
//!
//! Every watched peer gets an `ECHO` every `interval`, each with `interval` to answer. A
//! peer that answers is UP; one that has not answered for `down_after` is DOWN. A peer
//! starts out neither: its first answer makes it UP, or `down_after` of silence DOWN. Each
//! change is published to subscribers (the CQL server turns them into STATUS_CHANGE events
//! for drivers; the coordinator skips DOWN replicas).
//!
//! Echo rather than gossip's phi-accrual: every node pings every other, which is cheap at the
//! cluster sizes Cairn targets, and a node's view depends on no third node.
//!
//! Invariants: a peer's status changes only on evidence (an answer, or `down_after` without
//! one); every change is published once, in order, per peer; forgetting a peer stops its
//! pings.

use crate::messaging::{Messaging, Verb};
use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// A peer's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Answering.
    Up,
    /// Silent for `down_after`.
    Down,
}

/// A change of a peer's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusChange {
    /// The peer.
    pub peer: IpAddr,
    /// Its new status.
    pub status: Status,
}

/// Liveness settings.
#[derive(Debug, Clone, Copy)]
pub struct LivenessConfig {
    /// Between two echoes to a peer (and how long each may take).
    pub interval: Duration,
    /// Silence after which a peer is DOWN.
    pub down_after: Duration,
}

impl Default for LivenessConfig {
    /// An echo a second; DOWN after 10 s of silence (Cassandra's failure detector convicts
    /// after about that long with its defaults).
    fn default() -> Self {
        LivenessConfig {
            interval: Duration::from_secs(1),
            down_after: Duration::from_secs(10),
        }
    }
}

/// The liveness of the peers this node watches.
pub struct Liveness {
    messaging: Arc<Messaging>,
    config: LivenessConfig,
    peers: Mutex<HashMap<IpAddr, Watched>>,
    events: broadcast::Sender<StatusChange>,
}

struct Watched {
    status: Arc<Mutex<Option<Status>>>,
    pinger: JoinHandle<()>,
}

impl Liveness {
    /// Liveness over `messaging`, watching nobody yet.
    pub fn new(messaging: Arc<Messaging>, config: LivenessConfig) -> Liveness {
        Liveness {
            messaging,
            config,
            peers: Mutex::new(HashMap::new()),
            events: broadcast::channel(1024).0,
        }
    }

    /// Starts watching `peer` (nothing if already watched).
    pub fn watch(&self, peer: IpAddr) {
        let mut peers = self.peers.lock();
        if peers.contains_key(&peer) {
            return;
        }
        let status = Arc::new(Mutex::new(None));
        let pinger = tokio::spawn(ping_loop(
            Arc::clone(&self.messaging),
            self.config,
            peer,
            Arc::clone(&status),
            self.events.clone(),
        ));
        peers.insert(peer, Watched { status, pinger });
    }

    /// Stops watching `peer`.
    pub fn forget(&self, peer: IpAddr) {
        if let Some(w) = self.peers.lock().remove(&peer) {
            w.pinger.abort();
        }
    }

    /// `peer`'s status: `None` before the first evidence, or for a peer not watched.
    pub fn status(&self, peer: IpAddr) -> Option<Status> {
        self.peers.lock().get(&peer).and_then(|w| *w.status.lock())
    }

    /// Every change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<StatusChange> {
        self.events.subscribe()
    }
}

impl Drop for Liveness {
    fn drop(&mut self) {
        for (_, w) in self.peers.lock().drain() {
            w.pinger.abort();
        }
    }
}

async fn ping_loop(
    messaging: Arc<Messaging>,
    config: LivenessConfig,
    peer: IpAddr,
    status: Arc<Mutex<Option<Status>>>,
    events: broadcast::Sender<StatusChange>,
) {
    let mut last_answer = Instant::now();
    let mut ticks = tokio::time::interval(config.interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let answered = messaging
            .request(peer, Verb::Echo, Bytes::new(), config.interval)
            .await
            .is_ok();
        if answered {
            last_answer = Instant::now();
        }
        let now = if answered {
            Some(Status::Up)
        } else if last_answer.elapsed() >= config.down_after {
            Some(Status::Down)
        } else {
            None // not yet evidence either way
        };
        let Some(now) = now else { continue };
        let changed = {
            let mut s = status.lock();
            let changed = *s != Some(now);
            *s = Some(now);
            changed
        };
        if changed {
            tracing::info!(%peer, "node is {}", if now == Status::Up { "UP" } else { "DOWN" });
            let _ = events.send(StatusChange { peer, status: now });
        }
    }
}
