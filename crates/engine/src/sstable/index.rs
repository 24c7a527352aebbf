//! A paged, sorted index of `(key, value)` byte pairs with an in-memory summary.
//!
//! Used twice: the partition index (`Index.db`, keys = [`super::format::index_key`]) and the
//! clustering-block index of large partitions (`Rows.db`, keys = the first clustering key of
//! each block). Entries are packed into pages of about `page_size` bytes; each page ends with a
//! CRC32 of its bytes, so a corrupt page is reported with its file and offset while other pages
//! stay readable. The summary — each page's first key, offset and length — is small enough to
//! keep in memory, so finding a key costs one page read.
//!
//! Page layout: `uvarint count`, then `count` × (`bytes key`, `bytes value`), then `u32 LE crc`.

use crate::error::{CorruptionKind, Error, Result};
use crate::io::Wait;
use crate::model::codec::{put_bytes, put_uvarint, Decoder};
use bytes::Bytes;
use std::path::Path;

/// Where one page lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRef {
    /// The first key in the page.
    pub first_key: Bytes,
    /// File offset of the page.
    pub offset: u64,
    /// Page length including its CRC.
    pub len: u32,
}

/// The in-memory summary of a paged index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Pages in key order.
    pub pages: Vec<PageRef>,
}

impl Summary {
    /// The page that may contain `key` (the last page whose first key is `<= key`).
    pub fn floor(&self, key: &[u8]) -> Option<usize> {
        let n = self.pages.partition_point(|p| p.first_key.as_ref() <= key);
        n.checked_sub(1)
    }

    /// Serializes the summary.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_uvarint(out, self.pages.len() as u64);
        for p in &self.pages {
            put_bytes(out, &p.first_key);
            put_uvarint(out, p.offset);
            put_uvarint(out, u64::from(p.len));
        }
    }

    /// Parses a summary written by [`Summary::encode`].
    pub fn decode(d: &mut Decoder<'_>) -> crate::model::codec::DecodeResult<Summary> {
        let n = d.len()?;
        let mut pages = Vec::with_capacity(n);
        for _ in 0..n {
            let first_key = d.bytes()?;
            let offset = d.uvarint()?;
            let len = d.uvarint32()?;
            pages.push(PageRef {
                first_key,
                offset,
                len,
            });
        }
        Ok(Summary { pages })
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.pages
            .iter()
            .map(|p| p.first_key.len() + std::mem::size_of::<PageRef>())
            .sum()
    }
}

/// Builds pages; the caller writes the bytes it returns.
pub struct PagedIndexWriter {
    page: Vec<u8>,
    count: u64,
    first_key: Option<Bytes>,
    page_size: usize,
    offset: u64,
    summary: Summary,
}

impl PagedIndexWriter {
    /// A writer whose first page starts at file offset `offset`.
    pub fn new(page_size: usize, offset: u64) -> Self {
        PagedIndexWriter {
            page: Vec::with_capacity(page_size + 256),
            count: 0,
            first_key: None,
            page_size,
            offset,
            summary: Summary::default(),
        }
    }

    /// Adds an entry (keys must arrive in increasing order). Returns a finished page to write.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Option<Vec<u8>> {
        if self.first_key.is_none() {
            self.first_key = Some(Bytes::copy_from_slice(key));
        }
        put_bytes(&mut self.page, key);
        put_bytes(&mut self.page, value);
        self.count += 1;
        (self.page.len() >= self.page_size).then(|| self.seal())
    }

    /// Seals the last page (if any) and returns it with the summary.
    pub fn finish(mut self) -> (Option<Vec<u8>>, Summary) {
        let last = (self.count > 0).then(|| self.seal());
        (last, self.summary)
    }

    fn seal(&mut self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.page.len() + 14);
        put_uvarint(&mut out, self.count);
        out.extend_from_slice(&self.page);
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        self.summary.pages.push(PageRef {
            first_key: self.first_key.take().unwrap_or_default(),
            offset: self.offset,
            len: out.len() as u32,
        });
        self.offset += out.len() as u64;
        self.page.clear();
        self.count = 0;
        out
    }
}

/// A decoded page.
#[derive(Debug, Clone)]
pub struct Page {
    /// Entries in key order.
    pub entries: Vec<(Bytes, Bytes)>,
}

impl Page {
    /// Reads and verifies the page `r` of `file` (`path` names it in errors).
    pub fn read(file: &std::fs::File, path: &Path, r: &PageRef, wait: Wait) -> Result<Page> {
        Self::decode_body(Self::read_body(file, path, r, wait)?, path, r.offset)
    }

    /// Reads the page `r` of `file` and verifies its CRC; returns its body (the entries,
    /// without the CRC), which [`Page::lookup_in`] and [`Page::decode_body`] read.
    pub fn read_body(file: &std::fs::File, path: &Path, r: &PageRef, wait: Wait) -> Result<Bytes> {
        let mut buf = vec![0u8; r.len as usize];
        crate::io::read_exact_at(file, path, &mut buf, r.offset, wait)?;
        let body_len = verified_len(&buf, path, r.offset)?;
        buf.truncate(body_len);
        Ok(Bytes::from(buf))
    }

    /// Reads and verifies the page `r` of `file`, and returns the value stored under exactly
    /// `key` without decoding the other entries (a point lookup's page read).
    pub fn lookup(
        file: &std::fs::File,
        path: &Path,
        r: &PageRef,
        key: &[u8],
        wait: Wait,
    ) -> Result<Option<Bytes>> {
        Self::lookup_in(&Self::read_body(file, path, r, wait)?, path, r.offset, key)
    }

    /// The value stored under exactly `key` in a verified page body (of the page at `offset`
    /// of `path`), found without decoding the other entries.
    pub fn lookup_in(body: &Bytes, path: &Path, offset: u64, key: &[u8]) -> Result<Option<Bytes>> {
        let mut d = Decoder::new(body);
        let found = (|| {
            let n = d.len()?;
            for _ in 0..n {
                let k_len = d.len()?;
                let k = d.raw(k_len)?;
                let v_len = d.len()?;
                let v_start = d.position();
                d.raw(v_len)?;
                match k.cmp(key) {
                    std::cmp::Ordering::Less => {}
                    std::cmp::Ordering::Equal => return Ok(Some(v_start..v_start + v_len)),
                    std::cmp::Ordering::Greater => break,
                }
            }
            Ok(None)
        })();
        match found {
            Ok(range) => Ok(range.map(|range| body.slice(range))),
            Err(e) => {
                let e: crate::model::codec::DecodeError = e;
                Err(Error::corruption(path, offset + e.offset as u64, e.kind))
            }
        }
    }

    /// Decodes a verified page body (of the page at `offset` of `path`); the entries are
    /// slices of it.
    pub fn decode_body(body: Bytes, path: &Path, offset: u64) -> Result<Page> {
        let mut d = Decoder::from_bytes(&body);
        let decoded = (|| {
            let n = d.len()?;
            let mut entries = Vec::with_capacity(n);
            for _ in 0..n {
                entries.push((d.bytes()?, d.bytes()?));
            }
            Ok(entries)
        })();
        decoded
            .map(|entries| Page { entries })
            .map_err(|e: crate::model::codec::DecodeError| {
                Error::corruption(path, offset + e.offset as u64, e.kind)
            })
    }

    /// Index of the entry with exactly `key`.
    pub fn find(&self, key: &[u8]) -> Option<usize> {
        self.entries
            .binary_search_by(|(k, _)| k.as_ref().cmp(key))
            .ok()
    }

    /// Index of the last entry whose key is `<= key`.
    pub fn floor(&self, key: &[u8]) -> Option<usize> {
        self.entries
            .partition_point(|(k, _)| k.as_ref() <= key)
            .checked_sub(1)
    }

    /// Index of the first entry whose key is `>= key`.
    pub fn ceil(&self, key: &[u8]) -> usize {
        self.entries.partition_point(|(k, _)| k.as_ref() < key)
    }
}

/// The length of a page's body once its trailing CRC (the page is `buf`, at `offset` of
/// `path`) has been checked.
fn verified_len(buf: &[u8], path: &Path, offset: u64) -> Result<usize> {
    let body_len = buf
        .len()
        .checked_sub(4)
        .ok_or_else(|| Error::corruption(path, offset, CorruptionKind::Truncated))?;
    let tail = &buf[body_len..];
    let expected = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    let actual = crc32fast::hash(&buf[..body_len]);
    if expected != actual {
        return Err(Error::corruption(
            path,
            offset,
            CorruptionKind::ChecksumMismatch { expected, actual },
        ));
    }
    Ok(body_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_then_find_every_key_with_one_page_read() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("tmp", e))?;
        let path = dir.path().join("idx");
        let mut w = PagedIndexWriter::new(512, 0);
        let mut file_bytes = Vec::new();
        for i in 0..2000u32 {
            if let Some(p) = w.add(&i.to_be_bytes(), &(i * 3).to_le_bytes()) {
                file_bytes.extend(p);
            }
        }
        let (last, summary) = w.finish();
        file_bytes.extend(last.unwrap_or_default());
        std::fs::write(&path, &file_bytes).map_err(|e| Error::io(&path, e))?;
        assert!(summary.pages.len() > 10);
        let f = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
        for i in (0..2000u32).step_by(7) {
            let key = i.to_be_bytes();
            let page_no = summary.floor(&key).ok_or(Error::Closed)?;
            let page = Page::read(&f, &path, &summary.pages[page_no], Wait::Allowed)?;
            let at = page.find(&key).ok_or(Error::Closed)?;
            assert_eq!(page.entries[at].1.as_ref(), &(i * 3).to_le_bytes());
            let value = Page::lookup(&f, &path, &summary.pages[page_no], &key, Wait::Allowed)?;
            assert_eq!(value.as_deref(), Some(&(i * 3).to_le_bytes()[..]));
            // A key between two entries is absent.
            let mut between = key.to_vec();
            between.push(0);
            assert_eq!(
                Page::lookup(&f, &path, &summary.pages[page_no], &between, Wait::Allowed)?,
                None
            );
        }
        // A flipped byte in page 3 is reported at that page's offset; page 0 still reads.
        let mut bad = file_bytes.clone();
        let p3 = &summary.pages[3];
        bad[p3.offset as usize + 5] ^= 0xFF;
        std::fs::write(&path, &bad).map_err(|e| Error::io(&path, e))?;
        let f = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
        match Page::read(&f, &path, p3, Wait::Allowed) {
            Err(Error::Corruption { offset, .. }) => assert_eq!(offset, p3.offset),
            other => panic!("expected corruption, got {other:?}"),
        }
        match Page::lookup(&f, &path, p3, &summary.pages[3].first_key, Wait::Allowed) {
            Err(Error::Corruption { offset, .. }) => assert_eq!(offset, p3.offset),
            other => panic!("expected corruption, got {other:?}"),
        }
        assert!(Page::read(&f, &path, &summary.pages[0], Wait::Allowed).is_ok());
        Ok(())
    }
}
