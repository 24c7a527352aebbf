//! Walking an sstable's partition index in key order (scans and compaction).

use super::*;

/// Walks index entries in key order from a start position.
pub struct IndexScanner {
    pub(super) table: Arc<SSTable>,
    pub(super) page_no: usize,
    pub(super) page: Option<Page>,
    pub(super) idx: usize,
    pub(super) start: PartitionPos,
    pub(super) kind: ReadKind,
    pub(super) wait: Wait,
}

impl IndexScanner {
    /// The sstable being scanned.
    pub fn sstable(&self) -> &Arc<SSTable> {
        &self.table
    }

    /// The next entry at or after the start position.
    pub fn next_entry(&mut self) -> Result<Option<IndexEntry>> {
        loop {
            if self.page.is_none() {
                match self
                    .table
                    .load_index_page(self.page_no, self.kind, self.wait)?
                {
                    Some(p) => {
                        self.page = Some(p);
                        self.idx = 0;
                    }
                    None => return Ok(None),
                }
            }
            let Some(page) = self.page.as_ref() else {
                return Ok(None);
            };
            match page.entries.get(self.idx) {
                Some((k, v)) => {
                    self.idx += 1;
                    let offset = self
                        .table
                        .summary
                        .pages
                        .get(self.page_no)
                        .map_or(0, |p| p.offset);
                    let e = self.table.parse_entry(k, v, offset)?;
                    if self.start.admits(&e.key) {
                        return Ok(Some(e));
                    }
                }
                None => {
                    self.page = None;
                    self.page_no += 1;
                }
            }
        }
    }
}
