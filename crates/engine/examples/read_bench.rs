//! Read-path benchmark of the engine alone: point reads, `LIMIT 1` head reads and full
//! scans over a table of three sstables and a memtable (every partition in all four, so each
//! read merges four sources). Meant to be timed from outside, one mode per run, A/B against
//! another build: `cargo run --release -p cairn-engine --example read_bench -- MODE [N]`
//! with MODE `point`, `head`, `reversed` or `scan` and N the number of reads (scans: passes);
//! a third argument, a budget in MiB, turns the row cache on (0 or none: off).
//! It prints the time of its read loop and a checksum of what it read.

use bytes::Bytes;
use cairn_engine::database::{Database, DatabaseConfig};
use cairn_engine::model::clustering::{ClusteringLayout, Order};
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{
    Cell, ColumnData, DecoratedKey, LivenessInfo, Mutation, Partition, PartitionPos, Row, Token,
};
use cairn_engine::read::ReadCommand;
use cairn_engine::schema::{ColumnKind, TableSchema};
use cairn_engine::Wait;
use std::time::Instant;

const PARTITIONS: i32 = 2_000;
const ROWS: i32 = 40;

fn pk(a: i32) -> DecoratedKey {
    DecoratedKey::new(Bytes::copy_from_slice(&a.to_be_bytes()))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map_or("point", String::as_str).to_string();
    let n: usize = args.get(2).map_or(Ok(200_000), |s| s.parse())?;
    let cache_mib: usize = args.get(3).map_or(Ok(0), |s| s.parse())?;
    let dir = tempfile::tempdir()?;
    let mut cfg = DatabaseConfig::new(dir.path());
    cfg.row_cache_bytes = cache_mib << 20;
    let db = Database::open(cfg)?;
    let schema = TableSchema::new("ks", "t")
        .with_column("a", CqlType::Int, ColumnKind::PartitionKey)
        .with_clustering("b", CqlType::Int, Order::Asc)
        .with_column("c", CqlType::Text, ColumnKind::Regular);
    let id = db.create_table(schema)?.schema().id;
    let layout = ClusteringLayout {
        columns: vec![(CqlType::Int, Order::Asc)],
    };
    // Four generations of every partition: rows b ≡ round (mod 4), timestamps by round.
    for round in 0..4i32 {
        let mut muts = Vec::new();
        for a in 0..PARTITIONS {
            let mut p = Partition::default();
            for b in (round..ROWS).step_by(4) {
                let ck = layout
                    .encode_key(&[&b.to_be_bytes()])
                    .map_err(|e| format!("{e:?}"))?;
                let ts = i64::from(round) + 1;
                p.rows.insert(
                    ck,
                    Row {
                        marker: Some(LivenessInfo::live(ts)),
                        deletion: None,
                        columns: vec![(
                            2,
                            ColumnData::Simple(Cell::live(ts, Bytes::from(vec![b'x'; 60]))),
                        )],
                    },
                );
            }
            muts.push(Mutation {
                table: id,
                key: pk(a),
                update: p,
            });
        }
        db.apply(muts, Wait::Allowed)?;
        if round < 3 {
            db.flush("ks", "t")?;
        }
    }
    let mut sum = 0usize;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % PARTITIONS as u64) as i32
    };
    let started = Instant::now();
    match mode.as_str() {
        "scan" => {
            for _ in 0..n {
                for p in db.scan(
                    "ks",
                    "t",
                    PartitionPos::TokenStart(Token::MIN),
                    None,
                    ReadCommand::all(0, Wait::Allowed),
                )? {
                    sum += p?.rows.len();
                }
            }
        }
        _ => {
            let mut cmd = ReadCommand::all(0, Wait::Allowed);
            if mode == "head" || mode == "reversed" {
                cmd.limit = Some(1);
                cmd.reversed = mode == "reversed";
            }
            for _ in 0..n {
                if let Some(p) = db.read("ks", "t", &pk(next()), &cmd)? {
                    sum += p.rows.len();
                }
            }
        }
    }
    println!("{mode}: {n} in {:?}, {sum} rows", started.elapsed());
    if let Some(c) = db.row_cache() {
        println!("{:?}", c.stats());
    }
    Ok(())
}
