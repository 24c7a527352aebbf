//! The paging state of a SELECT: where a page stopped, opaque to drivers.
//!
//! Layout: `u8 version (1) | u32 len | partition key | u32 len | clustering key of the last
//! row read (empty: the partition is finished) | i64 rows (or groups) still allowed by LIMIT |
//! u32 rows (or groups) already returned from that partition`. A page resumes strictly after
//! that position.

use crate::error::{Error, Result};
use bytes::Bytes;

/// Where a page stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PagingState {
    /// The partition key (serialized).
    pub key: Bytes,
    /// The clustering key of the last row read; empty when the partition is finished.
    pub clustering: Bytes,
    /// What LIMIT still allows.
    pub remaining: i64,
    /// Rows (or groups) already returned from that partition (PER PARTITION LIMIT).
    pub partition_rows: u32,
}

impl PagingState {
    /// The opaque bytes.
    pub fn encode(&self) -> Bytes {
        let mut out = vec![1u8];
        for b in [&self.key, &self.clustering] {
            out.extend_from_slice(&(b.len() as u32).to_be_bytes());
            out.extend_from_slice(b);
        }
        out.extend_from_slice(&self.remaining.to_be_bytes());
        out.extend_from_slice(&self.partition_rows.to_be_bytes());
        Bytes::from(out)
    }

    /// Reads the bytes a driver sent back.
    pub fn decode(b: &[u8]) -> Result<PagingState> {
        let bad = || Error::Invalid("Invalid paging state".into());
        if b.first() != Some(&1) {
            return Err(bad());
        }
        let mut pos = 1usize;
        let mut part = || -> Result<Bytes> {
            let len = b.get(pos..pos + 4).ok_or_else(bad)?;
            let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
            let v = b.get(pos + 4..pos + 4 + len).ok_or_else(bad)?;
            pos += 4 + len;
            Ok(Bytes::copy_from_slice(v))
        };
        let key = part()?;
        let clustering = part()?;
        let rem = b.get(pos..pos + 8).ok_or_else(bad)?;
        let remaining = i64::from_be_bytes(rem.try_into().map_err(|_| bad())?);
        let pr = b.get(pos + 8..pos + 12).ok_or_else(bad)?;
        let partition_rows = u32::from_be_bytes(pr.try_into().map_err(|_| bad())?);
        Ok(PagingState {
            key,
            clustering,
            remaining,
            partition_rows,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_garbage() {
        let s = PagingState {
            key: Bytes::from_static(b"k"),
            clustering: Bytes::from_static(b"\x10c"),
            remaining: 7,
            partition_rows: 3,
        };
        assert_eq!(PagingState::decode(&s.encode()).ok(), Some(s.clone()));
        let enc = s.encode();
        for cut in 0..enc.len() {
            assert!(PagingState::decode(&enc[..cut]).is_err());
        }
        assert!(PagingState::decode(b"\x02").is_err());
    }
}
