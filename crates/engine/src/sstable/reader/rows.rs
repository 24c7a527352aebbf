//! Reading a partition's rows out of an sstable, lazily: the decompression cursor over the
//! data stream, and the row iterator that walks a slice forward or reversed, through the
//! clustering-block index for large partitions or straight through the body for streams
//! (see the parent module's doc for the contract).

use super::*;

/// Decompression state for reading one sstable's data stream.
///
/// Holds the last decompressed chunk (possibly preceded by the carried-over head of a row that
/// started in the chunk before), so consecutive reads of the same chunk decompress it once.
pub struct DataCursor {
    /// Decompressed stream bytes `[buf_pos, buf_pos + buf.len())`; empty when nothing is held.
    pub(super) buf: Bytes,
    pub(super) buf_pos: u64,
    pub(super) decomp: Compressor,
    pub(super) kind: ReadKind,
    /// Whether its reads may wait for the disk (the read's mode, for its whole life).
    pub(super) wait: Wait,
    pub(super) window: Option<ReadWindow>,
}

impl DataCursor {
    /// True when stream position `p` is in the held bytes.
    pub(super) fn holds(&self, p: u64) -> bool {
        p >= self.buf_pos && p < self.end()
    }

    /// Stream position just past the held bytes.
    pub(super) fn end(&self) -> u64 {
        self.buf_pos + self.buf.len() as u64
    }
}

pub(super) struct RowIndexState {
    pub(super) summary: Summary,
    pub(super) page_no: usize,
    pub(super) page: Page,
}

/// The unread part `[pos, end)` of a partition body read front to back.
pub(super) struct Stream {
    pub(super) pos: u64,
    pub(super) end: u64,
}

/// Lazily reads a partition's rows within a slice.
pub struct RowIter {
    pub(super) table: Arc<SSTable>,
    pub(super) entry: IndexEntry,
    pub(super) ranges: Vec<ClusteringRange>,
    pub(super) range_idx: usize,
    pub(super) reversed: bool,
    pub(super) cursor: DataCursor,
    /// Set for reads that stream through the partition body (see [`SSTable::rows`]).
    pub(super) stream: Option<Stream>,
    pub(super) pending: VecDeque<(ClusteringKey, Row)>,
    pub(super) row_index: Option<RowIndexState>,
    /// Current block within the row index: (page, entry), or None to seek for the range.
    pub(super) block: Option<(usize, usize)>,
    pub(super) small_done: bool,
    pub(super) failed: bool,
}

impl RowIter {
    fn fill(&mut self) -> Result<()> {
        let t = Arc::clone(&self.table);
        let Some(rows_ref) = self.entry.rows_ref else {
            // Small partition: one read, then filter.
            if self.small_done {
                return Ok(());
            }
            self.small_done = true;
            let body_len = self.entry.len - self.entry.header_len;
            let buf = t.read_range(
                &mut self.cursor,
                self.entry.data_pos + self.entry.header_len,
                body_len,
            )?;
            let mut rows = Vec::new();
            t.decode_rows(&buf, self.entry.data_pos + self.entry.header_len, &mut rows)?;
            let ranges = &self.ranges;
            rows.retain(|(k, _)| ranges.iter().any(|r| r.contains(&k.0)));
            if self.reversed {
                rows.reverse();
            }
            self.pending.extend(rows);
            return Ok(());
        };
        let (kind, wait) = (self.cursor.kind, self.cursor.wait);
        if self.row_index.is_none() {
            let summary = t.read_rows_summary(rows_ref, kind, wait)?;
            let Some(page) = t.read_rows_page(&summary, 0, kind, wait)? else {
                self.range_idx = self.ranges.len();
                return Ok(());
            };
            self.row_index = Some(RowIndexState {
                summary,
                page_no: 0,
                page,
            });
        }
        while self.pending.is_empty() && self.range_idx < self.ranges.len() {
            let range = self.ranges[self.range_idx].clone();
            let Some(ri) = self.row_index.as_mut() else {
                return Ok(());
            };
            // Position on the first block to read for this range.
            let (page_no, idx) = match self.block {
                Some(b) => b,
                None => {
                    let probe = if self.reversed {
                        &range.end
                    } else {
                        &range.start
                    };
                    let page_no = ri.summary.floor(probe).unwrap_or(0);
                    if ri.page_no != page_no {
                        if let Some(p) = t.read_rows_page(&ri.summary, page_no, kind, wait)? {
                            ri.page = p;
                            ri.page_no = page_no;
                        }
                    }
                    (page_no, ri.page.floor(probe).unwrap_or(0))
                }
            };
            if ri.page_no != page_no {
                match t.read_rows_page(&ri.summary, page_no, kind, wait)? {
                    Some(p) => {
                        ri.page = p;
                        ri.page_no = page_no;
                    }
                    None => {
                        self.next_range();
                        continue;
                    }
                }
            }
            let Some((first_key, value)) = ri.page.entries.get(idx).cloned() else {
                self.next_range();
                continue;
            };
            let rows_path = &t.rows_path;
            let offset = ri.summary.pages.get(page_no).map_or(0, |p| p.offset);
            let mut d = Decoder::new(&value);
            let (off, len) = (|| Ok((d.uvarint()?, d.uvarint()?)))()
                .map_err(|e: DecodeError| Error::corruption(rows_path, offset, e.kind))?;
            if off.checked_add(len).is_none_or(|end| end > self.entry.len) {
                return Err(Error::corruption(
                    rows_path,
                    offset,
                    CorruptionKind::Invalid("row index entry"),
                ));
            }
            let pos = self.entry.data_pos + off;
            let buf = t.read_range(&mut self.cursor, pos, len)?;
            let mut rows = Vec::new();
            t.decode_rows(&buf, pos, &mut rows)?;
            rows.retain(|(k, _)| range.contains(&k.0));
            if self.reversed {
                rows.reverse();
            }
            self.pending.extend(rows);
            // Advance to the neighbouring block, or finish the range.
            if self.reversed {
                if first_key.as_ref() <= range.start.as_ref() {
                    self.next_range();
                } else if idx > 0 {
                    self.block = Some((page_no, idx - 1));
                } else if page_no > 0 {
                    match t.read_rows_page(&ri.summary, page_no - 1, kind, wait)? {
                        Some(pg) => {
                            let last = pg.entries.len().saturating_sub(1);
                            ri.page = pg;
                            ri.page_no = page_no - 1;
                            self.block = Some((page_no - 1, last));
                        }
                        None => self.next_range(),
                    }
                } else {
                    self.next_range();
                }
            } else {
                let next = if idx + 1 < ri.page.entries.len() {
                    ri.page
                        .entries
                        .get(idx + 1)
                        .map(|e| (page_no, idx + 1, e.0.clone()))
                } else {
                    ri.summary
                        .pages
                        .get(page_no + 1)
                        .map(|p| (page_no + 1, 0, p.first_key.clone()))
                };
                match next {
                    Some((p, i, k)) if k.as_ref() < range.end.as_ref() => self.block = Some((p, i)),
                    _ => self.next_range(),
                }
            }
        }
        Ok(())
    }

    fn next_range(&mut self) {
        self.range_idx += 1;
        self.block = None;
    }

    /// The next row of a streamed read: decoded straight from the cursor's chunk buffer (cell
    /// values and keys are slices of it), filtered by the slice's ranges.
    fn next_streamed(&mut self) -> Result<Option<(ClusteringKey, Row)>> {
        let t = &self.table;
        let base = t.timestamp_base();
        let Some(st) = self.stream.as_mut() else {
            return Ok(None);
        };
        loop {
            if st.pos >= st.end || self.range_idx >= self.ranges.len() {
                st.pos = st.end;
                return Ok(None);
            }
            let cur = &mut self.cursor;
            if !cur.holds(st.pos) {
                t.load_chunk(cur, t.data.chunk_of(st.pos), None)?;
            }
            let from = (st.pos - cur.buf_pos) as usize;
            let limit = (cur.end().min(st.end) - cur.buf_pos) as usize;
            let mut d = Decoder::from_bytes_range(&cur.buf, from..limit);
            let item = get_body_item(&mut d, base);
            let used = d.position() as u64;
            match item {
                Ok(Some((ck, row))) => {
                    st.pos += used;
                    // Ranges are sorted and disjoint: skip those wholly before the key.
                    while self
                        .ranges
                        .get(self.range_idx)
                        .is_some_and(|r| ck.0.as_ref() >= r.end.as_ref())
                    {
                        self.range_idx += 1;
                    }
                    match self.ranges.get(self.range_idx) {
                        Some(r) if ck.0.as_ref() >= r.start.as_ref() => return Ok(Some((ck, row))),
                        Some(_) => continue,
                        None => {
                            st.pos = st.end;
                            return Ok(None);
                        }
                    }
                }
                Ok(None) => {
                    st.pos = st.end;
                    return Ok(None);
                }
                Err(e) if e.kind == CorruptionKind::Truncated && cur.end() < st.end => {
                    // The row continues in the next chunk: carry its head over and retry.
                    let next = t.data.chunk_of(cur.end());
                    t.load_chunk(cur, next, Some(st.pos))?;
                    if !cur.holds(st.pos) {
                        return Err(Error::corruption(
                            t.data.path(),
                            st.pos,
                            CorruptionKind::Truncated,
                        ));
                    }
                }
                Err(e) => {
                    return Err(Error::corruption(
                        t.data.path(),
                        st.pos + e.offset as u64,
                        e.kind,
                    ))
                }
            }
        }
    }

    /// The cursor, for the next partition of a scan (keeps its read-ahead window).
    pub fn into_cursor(self) -> DataCursor {
        self.cursor
    }
}

impl Iterator for RowIter {
    type Item = Result<(ClusteringKey, Row)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if self.stream.is_some() {
            return match self.next_streamed() {
                Ok(row) => row.map(Ok),
                Err(e) => {
                    self.failed = true;
                    Some(Err(e))
                }
            };
        }
        if self.pending.is_empty() {
            if let Err(e) = self.fill() {
                self.failed = true;
                return Some(Err(e));
            }
        }
        self.pending.pop_front().map(Ok)
    }
}
