//! Small file-system helpers shared by every component that writes files.
//!
//! Crash safety rule: a multi-step change is write-temp, fsync, rename, fsync directory. A
//! reader never sees a half-written file under its final name.

use crate::error::{CorruptionKind, Error, IoResultExt, Result};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

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
