//! What names things in the cache: clustering positions inside a cached partition, row
//! entries and sstable index pages in the shared LRU.
//!
//! The LRU holds [`Evictable`]s, so rows of every table and index pages of every sstable age
//! in one order and are evicted from one end (ScyllaDB's single LRU with `index_evictable`s).

use crate::model::{ClusteringKey, DecoratedKey};
use bytes::Bytes;

/// A clustering position.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    key: Bytes,
    /// -1 before the key, 0 at it, 1 after it.
    weight: i8,
}

impl Position {
    /// Just before `key` (a range's inclusive start or exclusive end).
    pub fn before(key: &Bytes) -> Self {
        Position {
            key: key.clone(),
            weight: -1,
        }
    }

    /// A row's position.
    pub fn at(key: &ClusteringKey) -> Self {
        Position {
            key: key.0.clone(),
            weight: 0,
        }
    }

    /// The position's clustering bytes.
    pub fn key(&self) -> &Bytes {
        &self.key
    }

    /// Just after `key`.
    pub fn after(key: &ClusteringKey) -> Self {
        Position {
            key: key.0.clone(),
            weight: 1,
        }
    }
}

/// What identifies a cached partition's entry in the shared LRU.
#[derive(Debug, Clone)]
pub struct EntryRef {
    /// The table's slot in the tracker.
    pub table: u64,
    /// The partition.
    pub key: DecoratedKey,
    /// The entry's position.
    pub pos: Position,
}

/// One partition-index page of one sstable. The sstable's number is the tracker's, issued
/// when the sstable opened and never reused, so a page of a dropped sstable cannot be hit by
/// a later one with the same generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageKey {
    /// The sstable's number in the tracker.
    pub sstable: u64,
    /// The page's number in the sstable's index summary.
    pub page: u32,
}

/// An item of the shared LRU.
#[derive(Debug, Clone)]
pub enum Evictable {
    /// A cached partition's entry (a row or a dummy).
    Row(EntryRef),
    /// An sstable's index page.
    IndexPage(PageKey),
}
