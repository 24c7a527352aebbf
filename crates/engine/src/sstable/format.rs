//! SSTable file naming and the constants of the data stream (see `docs/sstable-format.md`).
//!
//! An sstable is a *generation* number and a set of component files in its table's directory:
//! `ca-<generation>-<Component>`. `TOC.txt` is written last (temp file, fsync, rename,
//! directory fsync): an sstable exists iff its TOC exists. Startup removes every component
//! whose generation has no TOC; deletion removes the TOC first.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Format version prefix of every component file name.
pub const FORMAT_PREFIX: &str = "ca";
/// Version number stored in every component header.
pub const FORMAT_VERSION: u32 = 1;

/// Magic at the start of the metadata components.
pub const MAGIC: &[u8; 4] = b"CRN1";

/// The files that make one sstable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Component {
    /// Chunk-compressed partitions.
    Data,
    /// Paged partition index.
    Index,
    /// Clustering-block indexes of large partitions.
    Rows,
    /// In-memory index sample, first and last key.
    Summary,
    /// Partition-key bloom filter.
    Filter,
    /// Codec parameters and chunk offsets.
    CompressionInfo,
    /// Statistics (timestamps, histograms, level, run id, commitlog interval).
    Statistics,
    /// Table of contents; its presence commits the sstable.
    Toc,
}

impl Component {
    /// Every component, TOC last.
    pub const ALL: [Component; 8] = [
        Component::Data,
        Component::Index,
        Component::Rows,
        Component::Summary,
        Component::Filter,
        Component::CompressionInfo,
        Component::Statistics,
        Component::Toc,
    ];

    /// File-name suffix.
    pub fn suffix(self) -> &'static str {
        match self {
            Component::Data => "Data.db",
            Component::Index => "Index.db",
            Component::Rows => "Rows.db",
            Component::Summary => "Summary.db",
            Component::Filter => "Filter.db",
            Component::CompressionInfo => "CompressionInfo.db",
            Component::Statistics => "Statistics.db",
            Component::Toc => "TOC.txt",
        }
    }
}

/// Path of one component.
pub fn component_path(dir: &Path, generation: u64, c: Component) -> PathBuf {
    dir.join(format!("{FORMAT_PREFIX}-{generation}-{}", c.suffix()))
}

/// Parses `ca-<gen>-<suffix>` (also `.tmp` leftovers) into the generation.
pub fn parse_generation(file_name: &str) -> Option<u64> {
    let rest = file_name.strip_prefix(FORMAT_PREFIX)?.strip_prefix('-')?;
    let (gen, _) = rest.split_once('-')?;
    gen.parse().ok()
}

/// Tag before a partition in the data stream.
pub const TAG_PARTITION: u8 = 0x01;
/// Padding byte between partitions: skip to the next chunk boundary.
pub const TAG_PADDING: u8 = 0x00;
/// Tag before a clustering row inside a partition.
pub const TAG_ROW: u8 = 0x01;
/// Tag ending a partition.
pub const TAG_END: u8 = 0x02;

/// Partition header flags.
pub const PART_HAS_DELETION: u8 = 0x01;
/// The partition has a static row.
pub const PART_HAS_STATIC: u8 = 0x02;
/// The partition has range tombstones.
pub const PART_HAS_RTS: u8 = 0x04;

/// The byte-comparable form of a decorated key used as the partition index key: the token
/// big-endian with its sign bit flipped, then the key bytes.
pub fn index_key(key: &crate::model::DecoratedKey) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + key.key.len());
    put_index_key(&mut v, key);
    v
}

/// Appends [`index_key`] to `out`.
pub fn put_index_key(out: &mut Vec<u8>, key: &crate::model::DecoratedKey) {
    out.extend_from_slice(&((key.token.0 as u64) ^ (1 << 63)).to_be_bytes());
    out.extend_from_slice(&key.key);
}

/// Inverse of [`index_key`].
pub fn decorated_from_index_key(k: &bytes::Bytes) -> Option<crate::model::DecoratedKey> {
    let head = k.get(..8)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(head);
    let token = (u64::from_be_bytes(a) ^ (1 << 63)) as i64;
    Some(crate::model::DecoratedKey {
        token: crate::model::Token(token),
        key: k.slice(8..),
    })
}

/// Deletes an sstable's files, TOC first so a crash midway leaves an uncommitted remainder.
pub fn delete_sstable_files(dir: &Path, generation: u64) -> Result<()> {
    let toc = component_path(dir, generation, Component::Toc);
    remove_if_exists(&toc)?;
    for c in Component::ALL {
        remove_if_exists(&component_path(dir, generation, c))?;
    }
    Ok(())
}

fn remove_if_exists(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DecoratedKey, Token};
    use bytes::Bytes;

    #[test]
    fn index_key_order_matches_decorated_order() {
        let keys = [
            DecoratedKey {
                token: Token(i64::MIN + 1),
                key: Bytes::from_static(b"z"),
            },
            DecoratedKey {
                token: Token(-5),
                key: Bytes::from_static(b"a"),
            },
            DecoratedKey {
                token: Token(-5),
                key: Bytes::from_static(b"ab"),
            },
            DecoratedKey {
                token: Token(0),
                key: Bytes::new(),
            },
            DecoratedKey {
                token: Token(7),
                key: Bytes::from_static(b"a"),
            },
        ];
        for w in keys.windows(2) {
            assert!(index_key(&w[0]) < index_key(&w[1]));
        }
        for k in &keys {
            assert_eq!(
                decorated_from_index_key(&Bytes::from(index_key(k))).as_ref(),
                Some(k)
            );
        }
    }

    #[test]
    fn generation_parsing() {
        assert_eq!(parse_generation("ca-42-Data.db"), Some(42));
        assert_eq!(parse_generation("ca-7-TOC.txt.tmp"), Some(7));
        assert_eq!(parse_generation("schema.cairn"), None);
    }
}
