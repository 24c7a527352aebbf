//! The tests' key-value table `(a int, b int, c text, PRIMARY KEY (a, b))` (the compression
//! seed's table): its schema, partition and clustering keys, and a one-row insert.
//!
//! Helpers panic on what cannot fail for these fixed types: they are for tests.

use bytes::Bytes;
use cairn_engine::model::clustering::{ClusteringLayout, Order};
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{
    Cell, ClusteringKey, ColumnData, DecoratedKey, LivenessInfo, Partition, Row,
};
use cairn_engine::schema::{ColumnKind, TableSchema};

/// `ks.t (a int, b int, c text, PRIMARY KEY (a, b))`, with the default compaction options.
pub fn kv_schema(ks: &str, table: &str) -> TableSchema {
    TableSchema::new(ks, table)
        .with_column("a", CqlType::Int, ColumnKind::PartitionKey)
        .with_clustering("b", CqlType::Int, Order::Asc)
        .with_column("c", CqlType::Text, ColumnKind::Regular)
}

/// The partition key `a`.
pub fn pk(a: i32) -> DecoratedKey {
    DecoratedKey::new(Bytes::copy_from_slice(&a.to_be_bytes()))
}

/// The clustering key `b`.
pub fn ck(b: i32) -> ClusteringKey {
    let layout = ClusteringLayout {
        columns: vec![(CqlType::Int, Order::Asc)],
    };
    layout.encode_key(&[&b.to_be_bytes()]).unwrap()
}

/// An INSERT of one row `b`: a row marker and the cell `c` (column id 2), both at `ts`.
pub fn insert(b: i32, value: &str, ts: i64) -> Partition {
    let mut p = Partition::default();
    p.rows.insert(
        ck(b),
        Row {
            marker: Some(LivenessInfo::live(ts)),
            deletion: None,
            columns: vec![(
                2,
                ColumnData::Simple(Cell::live(ts, Bytes::copy_from_slice(value.as_bytes()))),
            )],
        },
    );
    p
}

/// Seconds since the epoch (a read command's "now").
pub fn now() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as u32
}
