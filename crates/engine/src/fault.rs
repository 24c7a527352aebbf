//! Storage faults: a corrupt sstable, an I/O error reading or writing the data directory, a
//! commitlog that cannot be written or synced — counted, logged, and answered as the node's
//! `disk_failure_policy` and `commit_failure_policy` say, the way Cassandra does.
//!
//! Cassandra's answers (5.0: `DefaultFSErrorHandler`, `JVMStabilityInspector`,
//! `CommitLog.handleCommitError`), which [`respond`] reproduces:
//!
//! | fault | `die` | `stop_paranoid` | `stop` | `best_effort` | `ignore` |
//! |---|---|---|---|---|---|
//! | corrupt sstable | exit | stop transports | — | — | — |
//! | read I/O error | exit | stop transports | stop transports | sstable out of reads | — |
//! | write I/O error | exit | stop transports | stop transports | stop transports | — |
//!
//! | commitlog fault | `die` | `stop` | `stop_commit` | `ignore` |
//! |---|---|---|---|---|
//! | write or sync failed | exit | stop transports, refuse writes | refuse writes | — |
//!
//! While the database opens, an sstable that fails to open refuses the start under `stop`,
//! `stop_paranoid` and `die` (Cassandra exits) and is skipped under `best_effort` and `ignore`
//! ([`skip_at_startup`]).
//!
//! Two deliberate differences, both because a Cairn node has one data directory: under
//! `best_effort` Cassandra takes every sstable of the failed *directory* out of reads, Cairn
//! only the sstable whose file failed (taking the only directory out would leave nothing to
//! read); and a write error under `best_effort` stops the transports at once, where Cassandra
//! marks the directory unwritable and stops them when no writable directory is left — which,
//! with one directory, is the same thing. "Stop transports" stops the native (CQL) port; the
//! process keeps running so an operator can inspect it through the REST API and nodetool.
//!
//! Invariants: every fault is counted exactly once, where it happens (a read's fault in the
//! read, a commitlog's in the commitlog), never again by the callers the error travels
//! through; the log gets at most one ERROR per file and offset per [`LOG_INTERVAL`] (a hot
//! corrupt chunk does not flood it: the next line says how many were not logged); actions
//! that leave the engine (stop transports, exit) go to the node's [`FaultListener`], and one
//! decided before the listener is set is handed to it when it is.

use crate::error::{Error, FaultKind};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `disk_failure_policy`: what the node does when a data file fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskFailurePolicy {
    /// Stop the client transports on an I/O error (Cassandra's shipped default).
    Stop,
    /// Stop the client transports on an I/O error or a corrupt sstable.
    StopParanoid,
    /// Take a file that failed to read out of reads; stop the transports when writing fails.
    BestEffort,
    /// Log, count, and go on.
    Ignore,
    /// Exit the process.
    Die,
}

impl DiskFailurePolicy {
    /// Every policy, in the order the configuration's error lists them.
    pub const ALL: [DiskFailurePolicy; 5] = [
        DiskFailurePolicy::Stop,
        DiskFailurePolicy::StopParanoid,
        DiskFailurePolicy::BestEffort,
        DiskFailurePolicy::Ignore,
        DiskFailurePolicy::Die,
    ];

    /// The name in `cassandra.yaml`.
    pub fn name(self) -> &'static str {
        match self {
            DiskFailurePolicy::Stop => "stop",
            DiskFailurePolicy::StopParanoid => "stop_paranoid",
            DiskFailurePolicy::BestEffort => "best_effort",
            DiskFailurePolicy::Ignore => "ignore",
            DiskFailurePolicy::Die => "die",
        }
    }

    /// The policy named `name` in `cassandra.yaml`.
    pub fn from_name(name: &str) -> Option<DiskFailurePolicy> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// `commit_failure_policy`: what the node does when the commitlog cannot be written or synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitFailurePolicy {
    /// Stop the client transports and refuse writes (Cassandra's default).
    Stop,
    /// Refuse writes; reads go on.
    StopCommit,
    /// Log, count, and go on (the failed writes fail; later ones try again).
    Ignore,
    /// Exit the process.
    Die,
}

impl CommitFailurePolicy {
    /// Every policy, in the order the configuration's error lists them.
    pub const ALL: [CommitFailurePolicy; 4] = [
        CommitFailurePolicy::Stop,
        CommitFailurePolicy::StopCommit,
        CommitFailurePolicy::Ignore,
        CommitFailurePolicy::Die,
    ];

    /// The name in `cassandra.yaml`.
    pub fn name(self) -> &'static str {
        match self {
            CommitFailurePolicy::Stop => "stop",
            CommitFailurePolicy::StopCommit => "stop_commit",
            CommitFailurePolicy::Ignore => "ignore",
            CommitFailurePolicy::Die => "die",
        }
    }

    /// The policy named `name` in `cassandra.yaml`.
    pub fn from_name(name: &str) -> Option<CommitFailurePolicy> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// What the engine was doing when a fault happened: decides whether an I/O error is a read or
/// a write error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Serving a read.
    Read,
    /// Writing an sstable (flush, compaction output).
    Write,
    /// Compacting: an I/O error on one of the inputs is a read error, otherwise a write error.
    Compaction {
        /// Whether the failed file is one of the live sstables (an input).
        input: bool,
    },
    /// Writing or syncing the commitlog.
    Commit,
}

/// A fault as the policies see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Corrupt sstable data (Cassandra's `CorruptSSTableException`).
    CorruptSSTable,
    /// An I/O error reading a data file (`FSReadError`).
    ReadError,
    /// An I/O error writing a data file (`FSWriteError`).
    WriteError,
    /// The commitlog failed (`handleCommitError`).
    Commit,
}

/// What the policies ask for after a fault (all false: log and count only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Response {
    /// Stop the client transports (the native port); the process keeps running.
    pub stop_transports: bool,
    /// Exit the process (Cassandra exits with status 100).
    pub die: bool,
    /// Take the sstable whose file failed out of reads (its files stay on disk).
    pub remove_sstable: bool,
    /// Refuse every write from now on (the commitlog stops).
    pub stop_commits: bool,
}

/// The policies' answer to `fault`, as Cassandra 5.0 gives it (see the module doc's tables).
pub fn respond(disk: DiskFailurePolicy, commit: CommitFailurePolicy, fault: Fault) -> Response {
    use DiskFailurePolicy as D;
    let none = Response::default();
    let stop = Response {
        stop_transports: true,
        ..none
    };
    let die = Response { die: true, ..none };
    match fault {
        Fault::CorruptSSTable => match disk {
            D::Die => die,
            D::StopParanoid => stop,
            D::Stop | D::BestEffort | D::Ignore => none,
        },
        Fault::ReadError => match disk {
            D::Die => die,
            D::Stop | D::StopParanoid => stop,
            D::BestEffort => Response {
                remove_sstable: true,
                ..none
            },
            D::Ignore => none,
        },
        Fault::WriteError => match disk {
            D::Die => die,
            D::Stop | D::StopParanoid | D::BestEffort => stop,
            D::Ignore => none,
        },
        Fault::Commit => match commit {
            CommitFailurePolicy::Die => die,
            CommitFailurePolicy::Stop => Response {
                stop_transports: true,
                stop_commits: true,
                ..none
            },
            CommitFailurePolicy::StopCommit => Response {
                stop_commits: true,
                ..none
            },
            CommitFailurePolicy::Ignore => none,
        },
    }
}

/// Whether, while the node starts, an sstable that fails to open (corrupt, unreadable) is
/// skipped — left on disk, not read — rather than the start refused: Cassandra's
/// `SSTableReader.openAll` skips it and `handleStartupFSError` exits under `stop`,
/// `stop_paranoid` and `die`, so only `best_effort` and `ignore` start without it.
pub fn skip_at_startup(disk: DiskFailurePolicy) -> bool {
    match disk {
        DiskFailurePolicy::BestEffort | DiskFailurePolicy::Ignore => true,
        DiskFailurePolicy::Stop | DiskFailurePolicy::StopParanoid | DiskFailurePolicy::Die => false,
    }
}

/// An action that leaves the engine: the node carries it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeAction {
    /// Stop the client transports; `reason` is the log line's text.
    StopTransports { reason: String },
    /// Exit the process; `reason` is the log line's text.
    Die { reason: String },
}

/// Carries out [`NodeAction`]s (set by the node with [`Faults::set_listener`]).
pub type FaultListener = Arc<dyn Fn(&NodeAction) + Send + Sync>;

/// Counts of storage faults since the node started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultStats {
    /// Corrupt sstable data found.
    pub corrupt_sstable: u64,
    /// I/O errors reading data files.
    pub read_io: u64,
    /// I/O errors writing data files.
    pub write_io: u64,
    /// Commitlog write or sync failures.
    pub commitlog: u64,
    /// Reads (single-partition and scans) that failed with an error.
    pub reads_failed: u64,
    /// Writes that failed with an error.
    pub writes_failed: u64,
    /// SSTables taken out of reads (`best_effort`).
    pub sstables_removed: u64,
    /// Whether a fault stopped the client transports.
    pub transports_stopped: bool,
}

/// How often one file and offset may be logged.
pub const LOG_INTERVAL: Duration = Duration::from_secs(10);
/// Files and offsets remembered for the rate limit (past this the oldest are forgotten).
const LOG_MEMORY: usize = 1024;

/// One database's storage-fault accounting and policies.
pub struct Faults {
    disk: DiskFailurePolicy,
    commit: CommitFailurePolicy,
    corrupt_sstable: AtomicU64,
    read_io: AtomicU64,
    write_io: AtomicU64,
    commitlog: AtomicU64,
    reads_failed: AtomicU64,
    writes_failed: AtomicU64,
    sstables_removed: AtomicU64,
    transports_stopped: AtomicBool,
    logged: Mutex<LogLimit>,
    listener: Mutex<Listener>,
}

#[derive(Default)]
struct Listener {
    f: Option<FaultListener>,
    /// Actions decided before the listener was set.
    pending: Vec<NodeAction>,
}

/// When each file and offset was last logged, and how many were not logged since.
#[derive(Default)]
struct LogLimit {
    last: HashMap<(PathBuf, Option<u64>), (Instant, u64)>,
}

impl LogLimit {
    /// Whether to log a fault at `key` now; if so, how many were suppressed before it.
    fn admit(&mut self, key: (PathBuf, Option<u64>), now: Instant) -> Option<u64> {
        if let Some((at, suppressed)) = self.last.get_mut(&key) {
            if now.duration_since(*at) < LOG_INTERVAL {
                *suppressed += 1;
                return None;
            }
            let n = *suppressed;
            *at = now;
            *suppressed = 0;
            return Some(n);
        }
        if self.last.len() >= LOG_MEMORY {
            self.last
                .retain(|_, (at, _)| now.duration_since(*at) < LOG_INTERVAL);
            if self.last.len() >= LOG_MEMORY {
                self.last.clear();
            }
        }
        self.last.insert(key, (now, 0));
        Some(0)
    }
}

impl Faults {
    /// Accounting under the given policies.
    pub fn new(disk: DiskFailurePolicy, commit: CommitFailurePolicy) -> Faults {
        Faults {
            disk,
            commit,
            corrupt_sstable: AtomicU64::new(0),
            read_io: AtomicU64::new(0),
            write_io: AtomicU64::new(0),
            commitlog: AtomicU64::new(0),
            reads_failed: AtomicU64::new(0),
            writes_failed: AtomicU64::new(0),
            sstables_removed: AtomicU64::new(0),
            transports_stopped: AtomicBool::new(false),
            logged: Mutex::new(LogLimit::default()),
            listener: Mutex::new(Listener::default()),
        }
    }

    /// The policies in force.
    pub fn policies(&self) -> (DiskFailurePolicy, CommitFailurePolicy) {
        (self.disk, self.commit)
    }

    /// Sets who carries out [`NodeAction`]s; actions decided before are handed to it now.
    pub fn set_listener(&self, f: FaultListener) {
        let pending = {
            let mut l = self.listener.lock();
            l.f = Some(Arc::clone(&f));
            std::mem::take(&mut l.pending)
        };
        for a in &pending {
            f(a);
        }
    }

    /// The counts so far.
    pub fn stats(&self) -> FaultStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        FaultStats {
            corrupt_sstable: get(&self.corrupt_sstable),
            read_io: get(&self.read_io),
            write_io: get(&self.write_io),
            commitlog: get(&self.commitlog),
            reads_failed: get(&self.reads_failed),
            writes_failed: get(&self.writes_failed),
            sstables_removed: get(&self.sstables_removed),
            transports_stopped: self.transports_stopped.load(Ordering::Relaxed),
        }
    }

    /// An sstable failed to open with `e` while the database opened: counts and logs the fault
    /// and says whether to start without the sstable ([`skip_at_startup`]); `false` (refuse
    /// the start with `e`) for what is no storage fault.
    pub fn skip_at_startup(&self, e: &Error) -> bool {
        let Some(fault) = e.storage_fault() else {
            return false;
        };
        let counter = match fault.kind {
            FaultKind::CorruptSSTable => &self.corrupt_sstable,
            FaultKind::DataIo => &self.read_io,
            FaultKind::Commitlog | FaultKind::CommitlogStopped => return false,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let skip = skip_at_startup(self.disk);
        if skip {
            tracing::error!(
                file = %fault.path.display(),
                "{fault}; skipping the sstable (its files stay on disk) as disk_failure_policy is {}: {e}",
                self.disk.name()
            );
        }
        skip
    }

    /// Counts a read that failed with `e` (not one that would have blocked).
    pub fn read_failed(&self, e: &Error) {
        if !matches!(e, Error::WouldBlock | Error::SourceChanged) {
            self.reads_failed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts a write that failed with `e` (not one that would have blocked).
    pub fn write_failed(&self, e: &Error) {
        if !matches!(e, Error::WouldBlock) {
            self.writes_failed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts an sstable taken out of reads.
    pub fn sstable_removed(&self) {
        self.sstables_removed.fetch_add(1, Ordering::Relaxed);
    }

    /// Reports `e`, met while doing `op`: when it is a storage fault, counts it, logs it (rate
    /// limited), hands node actions to the listener and returns the policies' response for
    /// the caller to carry out its engine part (`remove_sstable`, `stop_commits`). `None` when
    /// `e` is no new storage fault.
    pub fn report(&self, op: Operation, e: &Error) -> Option<Response> {
        let fault = e.storage_fault()?;
        let class = match (fault.kind, op) {
            (FaultKind::CommitlogStopped, _) => return None,
            (FaultKind::Commitlog, _) | (_, Operation::Commit) => Fault::Commit,
            (FaultKind::CorruptSSTable, _) => Fault::CorruptSSTable,
            (FaultKind::DataIo, Operation::Read | Operation::Compaction { input: true }) => {
                Fault::ReadError
            }
            (FaultKind::DataIo, Operation::Write | Operation::Compaction { input: false }) => {
                Fault::WriteError
            }
        };
        let counter = match class {
            Fault::CorruptSSTable => &self.corrupt_sstable,
            Fault::ReadError => &self.read_io,
            Fault::WriteError => &self.write_io,
            Fault::Commit => &self.commitlog,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let response = respond(self.disk, self.commit, class);
        let admitted = self
            .logged
            .lock()
            .admit((fault.path.to_path_buf(), fault.offset), Instant::now());
        if let Some(suppressed) = admitted {
            let offset = fault.offset.map_or(String::new(), |o| o.to_string());
            let also = if suppressed > 0 {
                format!(" ({suppressed} more at the same place not logged)")
            } else {
                String::new()
            };
            tracing::error!(
                file = %fault.path.display(),
                offset = %offset,
                "storage fault ({}) while {}: {e}{also}",
                fault_name(class),
                op_name(op),
            );
        }
        if response.die {
            let reason = format!("{fault} and {} is die", policy_key(class));
            self.act(NodeAction::Die { reason });
        } else if response.stop_transports && !self.transports_stopped.swap(true, Ordering::AcqRel)
        {
            let policy = match class {
                Fault::Commit => self.commit.name(),
                _ => self.disk.name(),
            };
            let reason = format!("Stopping transports as {} is {policy}", policy_key(class));
            self.act(NodeAction::StopTransports { reason });
        }
        Some(response)
    }

    fn act(&self, action: NodeAction) {
        let f = {
            let mut l = self.listener.lock();
            match &l.f {
                Some(f) => Arc::clone(f),
                None => {
                    l.pending.push(action);
                    return;
                }
            }
        };
        f(&action);
    }
}

fn policy_key(f: Fault) -> &'static str {
    match f {
        Fault::Commit => "commit_failure_policy",
        _ => "disk_failure_policy",
    }
}

fn fault_name(f: Fault) -> &'static str {
    match f {
        Fault::CorruptSSTable => "corrupt sstable",
        Fault::ReadError => "read error",
        Fault::WriteError => "write error",
        Fault::Commit => "commitlog failure",
    }
}

fn op_name(op: Operation) -> &'static str {
    match op {
        Operation::Read => "reading",
        Operation::Write => "writing an sstable",
        Operation::Compaction { .. } => "compacting",
        Operation::Commit => "writing the commitlog",
    }
}

impl std::fmt::Debug for Faults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Faults")
            .field("disk_failure_policy", &self.disk)
            .field("commit_failure_policy", &self.commit)
            .field("stats", &self.stats())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CommitFailurePolicy as C;
    use DiskFailurePolicy as D;

    const NONE: Response = Response {
        stop_transports: false,
        die: false,
        remove_sstable: false,
        stop_commits: false,
    };
    const STOP: Response = Response {
        stop_transports: true,
        ..NONE
    };
    const DIE: Response = Response { die: true, ..NONE };
    const REMOVE: Response = Response {
        remove_sstable: true,
        ..NONE
    };
    const STOP_COMMITS: Response = Response {
        stop_commits: true,
        ..NONE
    };
    const STOP_ALL: Response = Response {
        stop_transports: true,
        stop_commits: true,
        ..NONE
    };

    #[test]
    fn disk_policies_answer_as_cassandra() {
        // (policy, corrupt sstable, read error, write error)
        let table = [
            (D::Die, DIE, DIE, DIE),
            (D::StopParanoid, STOP, STOP, STOP),
            (D::Stop, NONE, STOP, STOP),
            (D::BestEffort, NONE, REMOVE, STOP),
            (D::Ignore, NONE, NONE, NONE),
        ];
        for (policy, corrupt, read, write) in table {
            for commit in C::ALL {
                assert_eq!(
                    respond(policy, commit, Fault::CorruptSSTable),
                    corrupt,
                    "{policy:?}"
                );
                assert_eq!(
                    respond(policy, commit, Fault::ReadError),
                    read,
                    "{policy:?}"
                );
                assert_eq!(
                    respond(policy, commit, Fault::WriteError),
                    write,
                    "{policy:?}"
                );
            }
        }
    }

    #[test]
    fn commit_policies_answer_as_cassandra() {
        let table = [
            (C::Die, DIE),
            (C::Stop, STOP_ALL),
            (C::StopCommit, STOP_COMMITS),
            (C::Ignore, NONE),
        ];
        for (policy, expected) in table {
            for disk in D::ALL {
                assert_eq!(respond(disk, policy, Fault::Commit), expected, "{policy:?}");
            }
        }
    }

    #[test]
    fn only_best_effort_and_ignore_start_without_a_bad_sstable() {
        let table = [
            (D::Stop, false),
            (D::StopParanoid, false),
            (D::BestEffort, true),
            (D::Ignore, true),
            (D::Die, false),
        ];
        for (policy, skip) in table {
            assert_eq!(skip_at_startup(policy), skip, "{policy:?}");
        }
    }

    #[test]
    fn policy_names_round_trip() {
        for p in D::ALL {
            assert_eq!(D::from_name(p.name()), Some(p));
        }
        for p in C::ALL {
            assert_eq!(C::from_name(p.name()), Some(p));
        }
        assert_eq!(D::from_name("Stop"), None);
        assert_eq!(C::from_name("best_effort"), None);
    }

    fn corrupt(path: &str, offset: u64) -> Error {
        Error::corruption(path, offset, crate::error::CorruptionKind::Decompress)
    }

    #[test]
    fn faults_are_counted_once_and_logged_rate_limited() {
        let f = Faults::new(D::Stop, C::Stop);
        let e = corrupt("/d/ks/t/ca-1-Data.db", 0);
        for _ in 0..5 {
            assert_eq!(f.report(Operation::Read, &e), Some(NONE));
        }
        assert_eq!(f.stats().corrupt_sstable, 5);
        let mut limit = LogLimit::default();
        let now = Instant::now();
        let key = (PathBuf::from("/x"), Some(3));
        assert_eq!(limit.admit(key.clone(), now), Some(0));
        assert_eq!(limit.admit(key.clone(), now), None);
        assert_eq!(limit.admit(key.clone(), now), None);
        assert_eq!(limit.admit((PathBuf::from("/x"), Some(4)), now), Some(0));
        assert_eq!(limit.admit(key, now + LOG_INTERVAL), Some(2));
    }

    #[test]
    fn node_actions_reach_a_listener_set_later_once() {
        let f = Faults::new(D::StopParanoid, C::Stop);
        let e = corrupt("/d/ks/t/ca-1-Data.db", 0);
        f.report(Operation::Read, &e);
        f.report(Operation::Read, &e);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = Arc::clone(&seen);
        f.set_listener(Arc::new(move |a: &NodeAction| s.lock().push(a.clone())));
        f.report(Operation::Read, &e);
        let seen = seen.lock();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(matches!(&seen[0], NodeAction::StopTransports { reason }
            if reason == "Stopping transports as disk_failure_policy is stop_paranoid"));
        assert!(f.stats().transports_stopped);
    }

    #[test]
    fn io_errors_are_read_or_write_by_operation() {
        let f = Faults::new(D::BestEffort, C::Ignore);
        let e = Error::io("/d/ks/t/ca-2-Data.db", std::io::Error::from_raw_os_error(5));
        assert_eq!(f.report(Operation::Read, &e), Some(REMOVE));
        assert_eq!(
            f.report(Operation::Compaction { input: true }, &e),
            Some(REMOVE)
        );
        assert_eq!(f.report(Operation::Write, &e), Some(STOP));
        let cl = Error::io("/c/CommitLog-1-7.log", std::io::Error::from_raw_os_error(5));
        assert_eq!(f.report(Operation::Commit, &cl), Some(NONE));
        let s = f.stats();
        assert_eq!((s.read_io, s.write_io, s.commitlog), (2, 1, 1));
        // Not faults: nothing counted.
        assert_eq!(f.report(Operation::Read, &Error::WouldBlock), None);
        assert_eq!(f.report(Operation::Read, &Error::Overloaded), None);
    }
}
