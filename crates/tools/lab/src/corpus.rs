//! The text corpus used by the labs: Debian changelogs, or a user-supplied file.
//!
//! Changelogs are `/usr/share/doc/*/changelog*.gz`, decompressed, with byte-identical files
//! dropped (same crc32 and length), sorted by path and concatenated, then cut to size.

use anyhow::{bail, Context, Result};
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Loads `limit` bytes of corpus text from `file`, or from the Debian changelogs.
pub fn load(file: Option<&Path>, limit: usize) -> Result<Vec<u8>> {
    let mut data = match file {
        Some(f) => std::fs::read(f).with_context(|| format!("reading corpus {}", f.display()))?,
        None => debian_changelogs(limit)?,
    };
    if data.is_empty() {
        bail!("the corpus is empty");
    }
    if data.len() < limit {
        eprintln!(
            "note: corpus has only {} bytes (< {limit}); using all of it",
            data.len()
        );
    }
    data.truncate(limit);
    Ok(data)
}

fn debian_changelogs(limit: usize) -> Result<Vec<u8>> {
    let mut paths: Vec<PathBuf> = Vec::new();
    let docs = std::fs::read_dir("/usr/share/doc").context("listing /usr/share/doc")?;
    for pkg in docs {
        let pkg = pkg.context("listing /usr/share/doc")?.path();
        let Ok(entries) = std::fs::read_dir(&pkg) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("changelog") && name.ends_with(".gz") {
                paths.push(e.path());
            }
        }
    }
    paths.sort();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for p in &paths {
        let f = std::fs::File::open(p).with_context(|| format!("opening {}", p.display()))?;
        let mut buf = Vec::new();
        if flate2::read::GzDecoder::new(f)
            .read_to_end(&mut buf)
            .is_err()
        {
            eprintln!("note: skipping unreadable {}", p.display());
            continue;
        }
        if !seen.insert((crc32fast::hash(&buf), buf.len())) {
            continue;
        }
        out.extend_from_slice(&buf);
        if out.len() >= limit {
            break;
        }
    }
    if out.is_empty() {
        bail!("no Debian changelogs found under /usr/share/doc; pass --corpus FILE");
    }
    Ok(out)
}

/// Turns a byte slice into a valid UTF-8 string (lossy), for `text` cells.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
