//! Taking files out of the OS page cache, so that the next read of them must wait for the
//! disk (what the non-blocking read paths refuse to do).

use std::os::fd::AsRawFd;
use std::path::Path;

/// Drops every file under `dir` from the page cache. Only clean pages go, which a flushed
/// sstable's are; on tmpfs nothing can go (every page lives in memory).
pub fn evict(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            evict(&path);
        } else if let Ok(f) = std::fs::File::open(&path) {
            // SAFETY: a plain advisory call on a descriptor owned by `f`, alive across it.
            unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        }
    }
}
