//! Small file-system helpers shared by every component that reads or writes files, and
//! [`Wait`], whether an operation may wait.
//!
//! Crash safety rule: a multi-step change is write-temp, fsync, rename, fsync directory. A
//! reader never sees a half-written file under its final name.
//!
//! Waiting is explicit: every operation that could wait takes a [`Wait`] (itself, or in the
//! request it is given: `ReadCommand::wait`, `SourceQuery::wait`, the sstable cursors). A
//! server runs short requests on its reactor threads with [`Wait::Never`]: then every
//! operation that would wait — a positional read that misses the page cache
//! ([`read_exact_at`] uses `preadv2(RWF_NOWAIT)`), full memtables, a commitlog sync or a
//! segment not yet prepared — fails with [`Error::WouldBlock`] *before* it changes anything,
//! and the caller retries the whole operation with [`Wait::Allowed`] on a thread that may
//! block. Everything that runs on its own threads (flush, compaction, startup, tools) passes
//! [`Wait::Allowed`]. The mode is a value, not a property of the thread: a read carries the
//! mode it was given for its whole life (its lazy row streams included), whichever thread
//! drives it. Not covered: a sequential reader whose window maps the data file (a scan,
//! `ChunkedReader::map_sequential_reads`) takes page faults, which wait for the disk under
//! either mode.

use crate::error::{CorruptionKind, Error, IoResultExt, Result};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{mpsc, Arc};

/// Whether an operation may wait: for the disk (a read missing the page cache), for memtable
/// space, for a commitlog sync or segment, for a lock another request holds (see the module
/// docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// The caller's thread may block: the operation waits as long as it must.
    Allowed,
    /// The caller's thread must not block (a reactor thread): an operation that would wait
    /// fails with [`Error::WouldBlock`] before it changes anything.
    Never,
}

impl Wait {
    /// `Ok` when waiting is allowed, [`Error::WouldBlock`] under [`Wait::Never`]: for a caller
    /// about to wait.
    pub fn permit(self) -> Result<()> {
        match self {
            Wait::Allowed => Ok(()),
            Wait::Never => Err(Error::WouldBlock),
        }
    }
}

/// Reads exactly `buf.len()` bytes of `file` (`path` names it in errors) at `offset`. A
/// short file is a truncation at `offset`. Under [`Wait::Never`], data not in the page cache
/// is [`Error::WouldBlock`].
pub fn read_exact_at(
    file: &File,
    path: &Path,
    buf: &mut [u8],
    offset: u64,
    wait: Wait,
) -> Result<()> {
    let result = match wait {
        Wait::Allowed => file.read_exact_at(buf, offset),
        Wait::Never => read_exact_at_nowait(file, buf, offset),
    };
    result.map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => {
            Error::corruption(path, offset, CorruptionKind::Truncated)
        }
        std::io::ErrorKind::WouldBlock => Error::WouldBlock,
        _ => Error::io(path, e),
    })
}

/// `read_exact_at` with `RWF_NOWAIT`: `WouldBlock` instead of waiting for the disk.
fn read_exact_at_nowait(file: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    while !buf.is_empty() {
        let iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        let off = libc::off_t::try_from(offset)
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        // SAFETY: `iov` describes `buf`, which is valid for writes of `buf.len()` bytes for
        // the duration of the call; the descriptor is owned by `file`, alive across the call.
        let n = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, off, libc::RWF_NOWAIT) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                // Not supported here (an old kernel or an odd file system): let a thread
                // that may block do the read.
                Some(libc::EAGAIN) | Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => {
                    return Err(std::io::ErrorKind::WouldBlock.into())
                }
                _ => return Err(e),
            }
        }
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        // 0 < n <= buf.len(), as the kernel promises.
        let n = n as usize;
        buf = &mut buf[n..];
        offset += n as u64;
    }
    Ok(())
}

/// How much a [`WritebackFile`] writes between two background syncs.
pub const WRITEBACK_STEP: u64 = 1 << 20;

/// A file written front to back (an sstable component) that is synced in the background
/// while it is still being written: every [`WRITEBACK_STEP`] bytes, a helper thread (started
/// at the first step, so small files never have one) runs `fdatasync` on what is written so
/// far, while the writer goes on compressing. The final [`WritebackFile::sync_data`] then
/// finds little left to do.
///
/// Why a whole `fdatasync` and not only `sync_file_range(WRITE)` (what this did before): on
/// this machine's virtual disk the time of a sync grows with the bytes written since the last
/// one (~2 ms per MB, host-side cache flushing) even when the kernel's writeback finished long
/// before, so only syncing early takes that wait off the writer (`docs/benchmarks.md`,
/// issue 2: the final sync of a 6.5 MB data file went from 12.5–13.5 ms to 0.1 ms, and a
/// 10 MiB LZ4 flush from 61–70 ms to 51–61 ms).
///
/// Durability is unchanged: only [`WritebackFile::sync_data`] promises anything, and it
/// fails if any background sync failed (after a failed `fdatasync` Linux may report the next
/// one as successful, so the first error is kept, not retried away).
pub struct WritebackFile {
    file: Arc<File>,
    written: u64,
    /// Bytes covered by the background syncs requested so far.
    started: u64,
    syncer: Option<BackgroundSync>,
}

/// The helper thread of a [`WritebackFile`]: one `fdatasync` per request, until the request
/// channel closes or a sync fails (its error is the thread's result).
struct BackgroundSync {
    requests: mpsc::SyncSender<()>,
    thread: std::thread::JoinHandle<std::io::Result<()>>,
}

impl BackgroundSync {
    fn start(file: &Arc<File>) -> Option<BackgroundSync> {
        // One pending request at most: a request made while another waits is covered by it.
        let (requests, pending) = mpsc::sync_channel::<()>(1);
        let file = Arc::clone(file);
        let thread = std::thread::Builder::new()
            .name("cairn-writeback".into())
            .spawn(move || {
                for () in pending {
                    file.sync_data()?;
                }
                Ok(())
            })
            // Without a thread the final sync does all the work, as it always may.
            .ok()?;
        Some(BackgroundSync { requests, thread })
    }

    /// Waits for the thread and returns the first sync error it met.
    fn finish(self) -> std::io::Result<()> {
        drop(self.requests);
        self.thread
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the background sync thread panicked")))
    }
}

impl WritebackFile {
    /// Wraps a file opened for writing at offset 0.
    pub fn new(file: File) -> Self {
        WritebackFile {
            file: Arc::new(file),
            written: 0,
            started: 0,
            syncer: None,
        }
    }

    /// Everything written is on disk when this returns `Ok`: waits for the background syncs,
    /// reports the first that failed, then `fdatasync`s the rest.
    pub fn sync_data(mut self) -> std::io::Result<()> {
        if let Some(syncer) = self.syncer.take() {
            syncer.finish()?;
        }
        self.file.sync_data()
    }

    fn request_sync(&mut self) {
        if self.syncer.is_none() {
            self.syncer = BackgroundSync::start(&self.file);
        }
        if let Some(syncer) = &self.syncer {
            // Full: a sync is already queued and covers these bytes too. Disconnected: the
            // thread stopped at an error, which `sync_data` reports.
            let _ = syncer.requests.try_send(());
        }
        self.started = self.written;
    }
}

impl Write for WritebackFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = (&*self.file).write(buf)?;
        self.written += n as u64;
        if self.written - self.started >= WRITEBACK_STEP {
            self.request_sync();
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        (&*self.file).flush()
    }
}

/// Tells the kernel `file` will be read front to back (a larger read-ahead). Advice only:
/// a failure changes nothing and is ignored.
pub fn advise_sequential(file: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is owned by `file`, alive across the call; offset and length 0
    // mean the whole file.
    let _ = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_SEQUENTIAL) };
}

/// Asks the kernel to start reading `len` bytes of `file` at `offset` into the page cache
/// (read-ahead a reader will soon need). Advice only: a failure is ignored.
pub fn advise_will_need(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return;
    };
    // SAFETY: as in `advise_sequential`; the range is only a hint, beyond the end it is
    // ignored by the kernel.
    let _ =
        unsafe { libc::posix_fadvise(file.as_raw_fd(), offset, len, libc::POSIX_FADV_WILLNEED) };
}

/// fsyncs a directory so renames and creations inside it survive a crash.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|f| f.sync_all()).with_path(dir)
}

/// Writes `data` to `path` atomically (temp file, fsync, rename, directory fsync).
pub fn write_file_atomically(path: &Path, data: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)
        .with_path(&tmp)?;
    let written = f.write_all(data).and_then(|()| f.sync_data());
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(&tmp, e));
    }
    std::fs::rename(&tmp, path).with_path(path)?;
    if let Some(dir) = path.parent() {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Appends a little-endian CRC32 of `data` to it.
pub fn with_crc(mut data: Vec<u8>) -> Vec<u8> {
    let crc = crc32fast::hash(&data);
    data.extend_from_slice(&crc.to_le_bytes());
    data
}

/// Verifies the trailing CRC32 written by [`with_crc`] and returns the body.
pub fn check_crc<'a>(buf: &'a [u8], path: &Path) -> Result<&'a [u8]> {
    let split = buf
        .len()
        .checked_sub(4)
        .ok_or_else(|| Error::corruption(path, 0, CorruptionKind::Truncated))?;
    let (body, tail) = buf.split_at(split);
    let expected = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    let actual = crc32fast::hash(body);
    if expected != actual {
        return Err(Error::corruption(
            path,
            split as u64,
            CorruptionKind::ChecksumMismatch { expected, actual },
        ));
    }
    Ok(body)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::BufWriter;

    /// Background syncs are requested step by step while writing, and what is read back is
    /// exactly what was written.
    #[test]
    fn writeback_file_syncs_in_steps_and_keeps_the_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap();
        let mut w = BufWriter::with_capacity(64 * 1024, WritebackFile::new(file));
        let mut expected = Vec::new();
        for i in 0..(3 * WRITEBACK_STEP / 1000 + 7) {
            let chunk: Vec<u8> = (0..1000u32).map(|j| (i as u32 ^ j) as u8).collect();
            w.write_all(&chunk).unwrap();
            expected.extend_from_slice(&chunk);
        }
        let f = w.into_inner().map_err(|e| e.into_error()).unwrap();
        assert_eq!(f.written, expected.len() as u64);
        assert!(f.started >= 2 * WRITEBACK_STEP, "started {}", f.started);
        assert!(f.written - f.started < WRITEBACK_STEP);
        assert!(f.syncer.is_some(), "no background sync was started");
        f.sync_data().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), expected);
    }

    /// A small file never starts a background thread; its one sync is the final one.
    #[test]
    fn writeback_file_below_one_step_syncs_only_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("small");
        let mut w = WritebackFile::new(File::create(&path).unwrap());
        w.write_all(&[7u8; 4096]).unwrap();
        assert!(w.syncer.is_none());
        w.sync_data().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), vec![7u8; 4096]);
    }

    /// A file that cannot be synced (`/dev/null` refuses `fdatasync`) takes its writes, and
    /// `sync_data` reports the failure instead of promising durability.
    #[test]
    fn writeback_file_reports_a_failed_sync() {
        let null = OpenOptions::new().write(true).open("/dev/null").unwrap();
        let mut w = WritebackFile::new(null);
        for _ in 0..3 {
            w.write_all(&vec![1u8; WRITEBACK_STEP as usize]).unwrap();
        }
        assert!(w.syncer.is_some());
        assert!(w.sync_data().is_err());
    }
}
