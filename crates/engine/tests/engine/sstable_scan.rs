//! Forward full-partition reads stream rows straight out of the decompressed chunks (see
//! `SSTable::rows`): rows that straddle chunk boundaries, rows many chunks long, rows kept
//! alive by the caller while the scan goes on, slices, and damage in the middle of a scan.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::ck;
use bytes::Bytes;
use cairn_engine::metrics::{IoCounters, ReadKind};
use cairn_engine::model::{
    Cell, ClusteringKey, ClusteringRange, ColumnData, DecoratedKey, LivenessInfo, Partition,
    PartitionPos, Row, Slice, Token,
};
use cairn_engine::schema::compression::{Codec, CompressionParams};
use cairn_engine::sstable::format::Component;
use cairn_engine::sstable::reader::SSTable;
use cairn_engine::sstable::writer::{SSTableWriter, WriterOptions};
use cairn_engine::{CorruptionKind, Error, Wait};
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::sync::Arc;

fn row(value: Vec<u8>) -> Row {
    Row {
        marker: Some(LivenessInfo::live(7)),
        deletion: None,
        columns: vec![(2, ColumnData::Simple(Cell::live(7, Bytes::from(value))))],
    }
}

/// Partitions of 1 row (small), of many rows of mixed sizes (clustering-block index), and
/// one with rows far longer than a chunk.
fn partitions(seed: u64) -> Vec<(DecoratedKey, Partition)> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut out = Vec::new();
    for a in 0..12i32 {
        let rows = match a % 4 {
            0 => 1,
            1 => 3,
            _ => 40 + a as usize * 5,
        };
        let mut p = Partition::default();
        for b in 0..rows as i32 {
            let len = match (a, b % 7) {
                (11, _) => 20_000 + rng.gen_range(0..90_000),
                (_, 0) => rng.gen_range(0..16),
                (_, 1) => 9_000 + rng.gen_range(0..3_000),
                _ => rng.gen_range(200..1_500),
            };
            let value: Vec<u8> = (0..len)
                .map(|i| (i as u8) ^ (b as u8) ^ (a as u8))
                .collect();
            p.rows.insert(ck(b), row(value));
        }
        out.push((DecoratedKey::new(Bytes::from(a.to_be_bytes().to_vec())), p));
    }
    out.sort_by(|x, y| x.0.cmp(&y.0));
    out
}

fn write(dir: &Path, codec: Codec, chunk_kb: u32, parts: &[(DecoratedKey, Partition)]) {
    let opts = WriterOptions::new(CompressionParams {
        codec,
        chunk_length: chunk_kb * 1024,
        crc_check_chance: 1.0,
    });
    let mut w = SSTableWriter::create(dir, 1, opts, Arc::new(IoCounters::default())).unwrap();
    for (k, p) in parts {
        w.write_partition(k, p).unwrap();
    }
    w.finish().unwrap().unwrap();
}

/// Every row of every partition through one scan cursor, as the lab and compaction read.
fn scan(
    sst: &Arc<SSTable>,
    slice: &Slice,
    reversed: bool,
) -> Result<Vec<(ClusteringKey, Row)>, Error> {
    let mut scanner = sst.scan(
        &PartitionPos::TokenStart(Token::MIN),
        ReadKind::Query,
        Wait::Allowed,
    );
    let mut cursor = Some(sst.scan_cursor(ReadKind::Query, Wait::Allowed));
    let mut rows = Vec::new();
    while let Some(entry) = scanner.next_entry()? {
        let mut cur = cursor.take().unwrap();
        sst.read_header(&entry, &mut cur)?;
        let mut it = sst.rows(&entry, slice, reversed, cur);
        for r in it.by_ref() {
            rows.push(r?);
        }
        cursor = Some(it.into_cursor());
    }
    Ok(rows)
}

fn expected(
    parts: &[(DecoratedKey, Partition)],
    slice: &Slice,
    reversed: bool,
) -> Vec<(ClusteringKey, Row)> {
    let mut out = Vec::new();
    for (_, p) in parts {
        let mut rows: Vec<_> = p
            .rows
            .iter()
            .filter(|(k, _)| slice.contains(&k.0))
            .map(|(k, r)| (k.clone(), r.clone()))
            .collect();
        if reversed {
            rows.reverse();
        }
        out.extend(rows);
    }
    out
}

const CODECS: [Codec; 5] = [
    Codec::None,
    Codec::Lz4,
    Codec::Snappy,
    Codec::Deflate,
    Codec::Zstd { level: 1 },
];

#[test]
fn full_scans_match_what_was_written_for_every_codec_and_chunk_size() {
    let parts = partitions(1);
    for codec in CODECS {
        for kb in [1, 4, 64] {
            let dir = tempfile::tempdir().unwrap();
            write(dir.path(), codec, kb, &parts);
            let io = Arc::new(IoCounters::default());
            let sst = Arc::new(SSTable::open(dir.path(), 1, Arc::clone(&io)).unwrap());
            // Rows are all kept until the end: buffers they point into must never be reused.
            let kept = scan(&sst, &Slice::all(), false).unwrap();
            assert!(
                kept == expected(&parts, &Slice::all(), false),
                "{codec:?} {kb} KiB"
            );
            // Each chunk is decompressed once, however many partitions and rows share it.
            let chunks = sst.stats.uncompressed_length.div_ceil(u64::from(kb) * 1024);
            assert_eq!(io.chunks_read(), chunks, "{codec:?} {kb} KiB");
            // Rows dropped as they come (the buffer is then reused in place).
            let mut n = 0;
            let mut want = expected(&parts, &Slice::all(), false).into_iter();
            let mut scanner = sst.scan(
                &PartitionPos::TokenStart(Token::MIN),
                ReadKind::Query,
                Wait::Allowed,
            );
            let mut cursor = Some(sst.scan_cursor(ReadKind::Query, Wait::Allowed));
            while let Some(entry) = scanner.next_entry().unwrap() {
                let mut it = sst.rows(&entry, &Slice::all(), false, cursor.take().unwrap());
                for r in it.by_ref() {
                    assert!(
                        r.unwrap() == want.next().unwrap(),
                        "{codec:?} {kb} KiB row {n}"
                    );
                    n += 1;
                }
                cursor = Some(it.into_cursor());
            }
            assert!(want.next().is_none());
        }
    }
}

#[test]
fn slices_and_reversed_reads_agree_with_the_written_rows() {
    let parts = partitions(2);
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), Codec::Lz4, 4, &parts);
    let sst = Arc::new(SSTable::open(dir.path(), 1, Arc::new(IoCounters::default())).unwrap());
    let range = |lo: i32, hi: i32| ClusteringRange {
        start: ck(lo).0,
        end: ck(hi).0,
    };
    let slices = [
        Slice::all(),
        // Starts at the first row: streamed, stops at the end bound.
        Slice::new(vec![ClusteringRange {
            start: Bytes::new(),
            end: ck(10).0,
        }]),
        // Starts later: the clustering-block index seeks.
        Slice::new(vec![range(5, 30)]),
        Slice::new(vec![range(0, 2), range(7, 9), range(33, 1000)]),
        Slice::new(vec![range(2, 3)]),
    ];
    for slice in &slices {
        for reversed in [false, true] {
            assert!(
                scan(&sst, slice, reversed).unwrap() == expected(&parts, slice, reversed),
                "{slice:?} reversed {reversed}"
            );
        }
    }
}

#[test]
fn damage_in_the_middle_of_a_scan_names_the_file_and_chunk() {
    let parts = partitions(3);
    for codec in CODECS {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), codec, 4, &parts);
        let data = dir.path().join("ca-1-Data.db");
        let len = std::fs::metadata(&data).unwrap().len();
        let at = len / 2;
        let mut bytes = std::fs::read(&data).unwrap();
        bytes[at as usize] ^= 0x5A;
        std::fs::write(&data, &bytes).unwrap();
        let sst = Arc::new(SSTable::open(dir.path(), 1, Arc::new(IoCounters::default())).unwrap());
        assert_eq!(sst.path(Component::Data), data);
        match scan(&sst, &Slice::all(), false) {
            Err(Error::Corruption { path, offset, kind }) => {
                assert_eq!(path, data, "{codec:?}");
                assert!(
                    matches!(kind, CorruptionKind::ChecksumMismatch { .. }),
                    "{codec:?}: {kind:?}"
                );
                // The offset is where the damaged chunk starts: at or before the flipped byte,
                // less than one (possibly incompressible) chunk away.
                assert!(
                    offset <= at && at - offset < 4096 + 64,
                    "{codec:?}: {offset} vs {at}"
                );
            }
            other => panic!(
                "{codec:?}: expected corruption, got {:?}",
                other.map(|r| r.len())
            ),
        }
    }
}
