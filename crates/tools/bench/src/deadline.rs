//! `-timeout`: each request's deadline, enforced by one reaper task instead of a timer per
//! request.
//!
//! A timeout per request (`tokio::time::timeout`, as the Rust driver did) registers a timer
//! in, and removes it from, the runtime's timer wheel per request — about 5 % of the bench's
//! CPU per operation in a profile of single-row reads. Here each worker owns a [`Deadline`]:
//! a request arms it (one atomic store), and a reaper task wakes every `tick` (1/50 of the
//! timeout, between 1 and 20 ms), fails the requests that are overdue, and sleeps again. A
//! request therefore fails between `timeout` and `timeout + tick` after it was sent, with an
//! error of its own; its future is dropped, which gives up the request (the `wire` client
//! keeps its stream id until the node's late reply comes).
//!
//! Invariant: a worker has at most one request in flight, so one slot per worker suffices;
//! only that worker arms and disarms it, only the reaper expires it.

use futures::task::AtomicWaker;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// One worker's request deadline.
#[derive(Default)]
pub struct Deadline {
    /// When the request in flight is overdue, ns since the reaper's origin (0: none).
    due: AtomicU64,
    expired: AtomicBool,
    waker: AtomicWaker,
}

/// The deadlines of all workers and the clock they are measured on.
pub struct Deadlines {
    origin: Instant,
    timeout: Duration,
    slots: Vec<Deadline>,
}

impl Deadlines {
    pub fn new(workers: usize, timeout: Duration) -> Deadlines {
        Deadlines {
            origin: Instant::now(),
            timeout,
            slots: (0..workers).map(|_| Deadline::default()).collect(),
        }
    }

    /// How often the reaper looks: a fiftieth of the timeout, between 1 and 20 ms.
    pub fn tick(&self) -> Duration {
        (self.timeout / 50).clamp(Duration::from_millis(1), Duration::from_millis(20))
    }

    fn nanos(&self, t: Instant) -> u64 {
        u64::try_from(t.saturating_duration_since(self.origin).as_nanos()).unwrap_or(u64::MAX)
    }

    /// Runs `request` (pinned by the caller, so that a large future is never moved) for worker `worker`, sent at `sent`: its result, or a
    /// timeout error once `timeout` has passed.
    pub fn run<'a, F>(
        &'a self,
        worker: usize,
        sent: Instant,
        request: Pin<&'a mut F>,
    ) -> Timed<'a, F> {
        let slot = self.slots.get(worker);
        if let Some(slot) = slot {
            slot.expired.store(false, Ordering::Relaxed);
            // 0 means "none": a deadline at the origin itself is pushed to 1 ns.
            let due = self.nanos(sent + self.timeout).max(1);
            slot.due.store(due, Ordering::Release);
        }
        Timed {
            request,
            slot,
            timeout: self.timeout,
        }
    }

    /// The reaper: every tick, expires the overdue requests. Runs until aborted.
    pub async fn reap(&self) {
        let mut next = tokio::time::Instant::now();
        loop {
            next += self.tick();
            tokio::time::sleep_until(next).await;
            let now = self.nanos(Instant::now());
            for s in &self.slots {
                let due = s.due.load(Ordering::Acquire);
                if due != 0 && now >= due && !s.expired.swap(true, Ordering::AcqRel) {
                    s.waker.wake();
                }
            }
        }
    }
}

/// A request racing its deadline (see [`Deadlines::run`]).
pub struct Timed<'a, F> {
    request: Pin<&'a mut F>,
    slot: Option<&'a Deadline>,
    timeout: Duration,
}

impl<F, T, E> Future for Timed<'_, F>
where
    F: Future<Output = Result<T, E>>,
    E: std::fmt::Display,
{
    type Output = Result<T, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Poll::Ready(r) = self.request.as_mut().poll(cx) {
            self.disarm();
            return Poll::Ready(r.map_err(|e| e.to_string()));
        }
        let Some(slot) = self.slot else {
            return Poll::Pending;
        };
        // Registered before the check, so an expiry between the two still wakes us.
        slot.waker.register(cx.waker());
        if slot.expired.load(Ordering::Acquire) {
            self.disarm();
            return Poll::Ready(Err(format!(
                "request timed out after {} (-timeout)",
                super::stats::go_duration(self.timeout.as_nanos() as f64)
            )));
        }
        Poll::Pending
    }
}

impl<F> Timed<'_, F> {
    fn disarm(&mut self) {
        if let Some(slot) = self.slot.take() {
            slot.due.store(0, Ordering::Release);
        }
    }
}

impl<F> Drop for Timed<'_, F> {
    fn drop(&mut self) {
        self.disarm();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn a_late_request_fails_and_a_prompt_one_succeeds() {
        let d = std::sync::Arc::new(Deadlines::new(2, Duration::from_millis(200)));
        let reaper = tokio::spawn({
            let d = d.clone();
            async move { d.reap().await }
        });
        let ok = std::pin::pin!(async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            Ok::<_, String>(7)
        });
        let ok = d.run(0, Instant::now(), ok).await;
        assert_eq!(ok, Ok(7));
        let late = std::pin::pin!(async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok::<_, String>(8)
        });
        let late = d.run(1, Instant::now(), late).await;
        assert_eq!(
            late,
            Err("request timed out after 200ms (-timeout)".to_string())
        );
        // The slot is reusable: the next request is not failed by the old expiry.
        let again = std::pin::pin!(async { Ok::<_, String>(9) });
        let again = d.run(1, Instant::now(), again).await;
        assert_eq!(again, Ok(9));
        reaper.abort();
    }
}
