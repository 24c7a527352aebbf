//! Small file-system helpers shared by every component that reads or writes files.
//!
//! Crash safety rule: a multi-step change is write-temp, fsync, rename, fsync directory. A
//! reader never sees a half-written file under its final name.
//!
//! Non-blocking mode: a server may run short requests on its reactor threads inside
//! [`nonblocking`]. On such a thread every operation that could wait — a positional read
//! that misses the page cache ([`read_exact_at`] uses `preadv2(RWF_NOWAIT)`), full memtables,
//! a commitlog sync or a segment not yet prepared — fails with [`Error::WouldBlock`] *before*
//! it changes anything, and the caller retries the whole operation on a thread that may
//! block.

use crate::error::{CorruptionKind, Error, IoResultExt, Result};
use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;

thread_local! {
    static NONBLOCKING: Cell<bool> = const { Cell::new(false) };
}

/// While alive, this thread is in non-blocking mode (see the module docs).
#[must_use = "non-blocking mode ends when the guard is dropped"]
pub struct NonBlocking {
    previous: bool,
    _not_send: std::marker::PhantomData<*const ()>,
}

/// Enters non-blocking mode on this thread until the guard is dropped.
pub fn nonblocking() -> NonBlocking {
    NonBlocking {
        previous: NONBLOCKING.with(|c| c.replace(true)),
        _not_send: std::marker::PhantomData,
    }
}

impl Drop for NonBlocking {
    fn drop(&mut self) {
        NONBLOCKING.with(|c| c.set(self.previous));
    }
}

/// True when this thread must not wait (inside [`nonblocking`]).
pub fn is_nonblocking() -> bool {
    NONBLOCKING.with(Cell::get)
}

/// `Err(WouldBlock)` in non-blocking mode: for callers about to wait.
pub fn may_block() -> Result<()> {
    if is_nonblocking() {
        Err(Error::WouldBlock)
    } else {
        Ok(())
    }
}

/// Reads exactly `buf.len()` bytes of `file` (`path` names it in errors) at `offset`. A
/// short file is a truncation at `offset`. In non-blocking mode, data not in the page cache
/// is [`Error::WouldBlock`].
pub fn read_exact_at(file: &File, path: &Path, buf: &mut [u8], offset: u64) -> Result<()> {
    let result = if is_nonblocking() {
        read_exact_at_nowait(file, buf, offset)
    } else {
        file.read_exact_at(buf, offset)
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

/// How much a [`WritebackFile`] writes before it starts the kernel writing it to disk.
pub const WRITEBACK_STEP: u64 = 1 << 20;

/// A file written front to back (an sstable component) whose pages go to the disk while it
/// is still being written: every [`WRITEBACK_STEP`] bytes, `sync_file_range(WRITE)` starts
/// writeback of what was written since the last step, without waiting for it. The final
/// `fdatasync` then finds little left to write, so a flush or compaction no longer
/// compresses first and waits for the whole file's writeback after (on this machine's disk,
/// ~25 ms per 6 MiB); the disk works while the CPU compresses. Durability is unchanged:
/// only [`WritebackFile::sync_data`] promises anything.
pub struct WritebackFile {
    file: File,
    written: u64,
    started: u64,
}

impl WritebackFile {
    /// Wraps a file opened for writing at offset 0.
    pub fn new(file: File) -> Self {
        WritebackFile {
            file,
            written: 0,
            started: 0,
        }
    }

    /// `fdatasync`: everything written is on disk when this returns.
    pub fn sync_data(&self) -> std::io::Result<()> {
        self.file.sync_data()
    }

    fn start_writeback(&mut self) {
        use std::os::fd::AsRawFd;
        let (Ok(from), Ok(len)) = (
            libc::off64_t::try_from(self.started),
            libc::off64_t::try_from(self.written - self.started),
        ) else {
            return;
        };
        // SAFETY: a plain syscall on a descriptor `self.file` owns; no memory is passed.
        // Only a hint: when it fails (a file system without it), the final fdatasync still
        // writes everything.
        unsafe {
            libc::sync_file_range(
                self.file.as_raw_fd(),
                from,
                len,
                libc::SYNC_FILE_RANGE_WRITE,
            );
        }
        self.started = self.written;
    }
}

impl Write for WritebackFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        if self.written - self.started >= WRITEBACK_STEP {
            self.start_writeback();
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
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

    /// Writeback is started step by step while writing, and what is read back is exactly
    /// what was written (the hint never changes the file).
    #[test]
    fn writeback_file_starts_writeback_in_steps_and_keeps_the_bytes() {
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
        f.sync_data().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), expected);
    }
}
