//! Mutations: an update to one partition of one table, and their commitlog encoding.

use super::codec::{
    get_deletion, get_range_tombstone, get_row, put_bytes, put_deletion, put_range_tombstone,
    put_row, put_uvarint, put_varint, DecodeError, DecodeResult, Decoder,
};
use super::{ClusteringKey, DecoratedKey, Partition};
use crate::error::CorruptionKind;
use bytes::Bytes;

/// An update to one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutation {
    /// Target table id.
    pub table: u128,
    /// Partition key.
    pub key: DecoratedKey,
    /// The update (data and tombstones).
    pub update: Partition,
}

const HAS_DELETION: u8 = 1;
const HAS_STATIC: u8 = 2;

/// Encodes a batch of mutations as one commitlog payload.
pub fn encode_batch(muts: &[Mutation], out: &mut Vec<u8>) {
    put_uvarint(out, muts.len() as u64);
    for m in muts {
        let mut base = i64::MAX;
        m.update.for_each_timestamp(|t| base = base.min(t));
        if base == i64::MAX {
            base = 0;
        }
        out.extend_from_slice(&m.table.to_le_bytes());
        put_bytes(out, &m.key.key);
        put_varint(out, base);
        let p = &m.update;
        let mut flags = 0;
        if p.deletion.is_some() {
            flags |= HAS_DELETION;
        }
        if p.static_row.is_some() {
            flags |= HAS_STATIC;
        }
        out.push(flags);
        if let Some(d) = &p.deletion {
            put_deletion(out, d, base);
        }
        if let Some(s) = &p.static_row {
            put_row(out, s, base);
        }
        put_uvarint(out, p.range_tombstones.len() as u64);
        for rt in &p.range_tombstones {
            put_range_tombstone(out, rt, base);
        }
        put_uvarint(out, p.rows.len() as u64);
        for (k, r) in &p.rows {
            put_bytes(out, &k.0);
            put_row(out, r, base);
        }
    }
}

/// Decodes a payload written by [`encode_batch`].
pub fn decode_batch(buf: &Bytes) -> DecodeResult<Vec<Mutation>> {
    let mut d = Decoder::from_bytes(buf);
    let n = d.len()?;
    let mut out = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        let mut id = [0u8; 16];
        id.copy_from_slice(d.raw(16)?);
        let key = DecoratedKey::new(d.bytes()?);
        let base = d.varint()?;
        let flags = d.u8()?;
        if flags & !(HAS_DELETION | HAS_STATIC) != 0 {
            return Err(DecodeError {
                offset: d.position() - 1,
                kind: CorruptionKind::Invalid("mutation flags"),
            });
        }
        let mut p = Partition::default();
        if flags & HAS_DELETION != 0 {
            p.deletion = Some(get_deletion(&mut d, base)?);
        }
        if flags & HAS_STATIC != 0 {
            p.static_row = Some(get_row(&mut d, base)?);
        }
        let rts = d.len()?;
        for _ in 0..rts {
            p.range_tombstones.push(get_range_tombstone(&mut d, base)?);
        }
        let rows = d.len()?;
        for _ in 0..rows {
            let k = ClusteringKey(d.bytes()?);
            let r = get_row(&mut d, base)?;
            p.rows.insert(k, r);
        }
        out.push(Mutation {
            table: u128::from_le_bytes(id),
            key,
            update: p,
        });
    }
    Ok(out)
}
