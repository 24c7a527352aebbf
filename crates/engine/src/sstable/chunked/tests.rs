//! The chunk layer round-tripped for every codec and chunk size, and corrupted.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::error::{CorruptionKind, Error, Result};
use crate::io::Wait;
use crate::schema::compression::{Codec, CompressionParams};
use crate::sstable::compression::Compressor;
use rand::{Rng, RngCore, SeedableRng};
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

const KIB: u32 = 1024;

fn codecs() -> [Codec; 5] {
    [
        Codec::None,
        Codec::Lz4,
        Codec::Snappy,
        Codec::Deflate,
        Codec::Zstd { level: 3 },
    ]
}

fn structured(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut s = Vec::with_capacity(len + 100);
    while s.len() < len {
        let id: u32 = rng.gen_range(0..100_000);
        s.extend_from_slice(
            format!(
                "row key={id:08} col=value-{} ts=17000{}\n",
                id % 313,
                id % 7
            )
            .as_bytes(),
        );
    }
    s.truncate(len);
    s
}

fn random(len: usize, seed: u64) -> Vec<u8> {
    let mut v = vec![0u8; len];
    rand::rngs::StdRng::seed_from_u64(seed).fill_bytes(&mut v);
    v
}

/// Every read verifies the CRC (`crc_check_chance` 1), chunks of `kb` KiB.
fn params(codec: Codec, kb: u32) -> CompressionParams {
    CompressionParams {
        codec,
        chunk_length: kb * KIB,
        crc_check_chance: 1.0,
    }
}

fn write_file(
    data: &[u8],
    params: &CompressionParams,
) -> (tempfile::NamedTempFile, ChunkedSummary) {
    let tmp = tempfile::NamedTempFile::new().unwrap();
    let f = tmp.reopen().unwrap();
    let mut w = ChunkedWriter::new(io::BufWriter::new(f), params).with_path(tmp.path());
    // Odd-sized writes exercise buffering across chunk boundaries and the direct path.
    let mut rng = rand::rngs::StdRng::seed_from_u64(data.len() as u64);
    let mut rest = data;
    while !rest.is_empty() {
        let n = rng.gen_range(1..=rest.len().min(3 * params.chunk_length as usize));
        w.write_all(&rest[..n]).unwrap();
        rest = &rest[n..];
    }
    assert_eq!(w.position(), data.len() as u64);
    let (_, summary) = w.finish().unwrap();
    (tmp, summary)
}

fn reader(
    tmp: &tempfile::NamedTempFile,
    s: &ChunkedSummary,
    params: &CompressionParams,
) -> Result<ChunkedReader> {
    ChunkedReader::new(
        File::open(tmp.path()).unwrap(),
        tmp.path().to_path_buf(),
        Arc::new(s.offsets.clone()),
        s.uncompressed_len,
        params.codec,
        params.chunk_length,
    )
}

fn read_all(r: &ChunkedReader) -> Vec<u8> {
    let mut dec = Compressor::new(r.codec());
    let mut all = Vec::new();
    let mut out = Vec::new();
    for i in 0..r.chunk_count() {
        r.read_chunk(i, &mut dec, &mut out, Wait::Allowed).unwrap();
        all.extend_from_slice(&out);
    }
    all
}

/// Writes 200 KiB of structured data in 4 KiB chunks with `codec`, then reads every chunk
/// in order through one 32 KiB window, mapped or not: (the data, what was read back, the
/// bytes each read reported, the compressed length, and the reader, window and
/// decompressor for more reads).
#[allow(clippy::type_complexity)]
fn read_sequentially(
    codec: Codec,
    mapped: bool,
) -> (
    Vec<u8>,
    Vec<u8>,
    Vec<u64>,
    u64,
    (
        tempfile::NamedTempFile,
        ChunkedReader,
        ReadWindow,
        Compressor,
    ),
) {
    let params = params(codec, 4);
    let data = structured(200 * 1024 + 13, 9);
    let (tmp, s) = write_file(&data, &params);
    let r = reader(&tmp, &s, &params)
        .unwrap()
        .map_sequential_reads(mapped);
    let mut window = ReadWindow::new(32 * 1024);
    let mut dec = Compressor::new(codec);
    let (mut all, mut out, mut reads) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..r.chunk_count() {
        reads.push(
            r.read_chunk_ahead(i, &mut window, &mut dec, &mut out, Wait::Allowed)
                .unwrap(),
        );
        all.extend_from_slice(&out);
    }
    (data, all, reads, s.compressed_len, (tmp, r, window, dec))
}

#[test]
fn read_ahead_matches_single_chunk_reads_and_reads_once_per_window() {
    for codec in codecs() {
        let (data, all, reads, compressed_len, (_tmp, r, mut window, mut dec)) =
            read_sequentially(codec, false);
        assert_eq!(all, data, "{codec:?}");
        let read: u64 = reads.iter().sum();
        assert!(read >= compressed_len, "every byte is read at least once");
        let syscalls = reads.iter().filter(|&&n| n > 0).count();
        let windows = compressed_len.div_ceil(32 * 1024) as usize;
        assert!(
            syscalls <= windows + 1,
            "{syscalls} reads for {windows} windows"
        );
        // Going back re-reads.
        let mut out = Vec::new();
        assert!(
            r.read_chunk_ahead(0, &mut window, &mut dec, &mut out, Wait::Allowed)
                .unwrap()
                > 0
        );
    }
}

#[test]
fn mapped_sequential_reads_match_and_count_each_chunk_once() {
    for codec in codecs() {
        let (data, all, reads, compressed_len, (_tmp, r, mut window, mut dec)) =
            read_sequentially(codec, true);
        assert!(window.map.is_some(), "{codec:?}: the file was not mapped");
        assert_eq!(all, data, "{codec:?}");
        assert_eq!(
            reads.iter().sum::<u64>(),
            compressed_len,
            "{codec:?}: bytes read"
        );
        // Out of order too (a cursor that goes back).
        let mut out = Vec::new();
        r.read_chunk_ahead(0, &mut window, &mut dec, &mut out, Wait::Allowed)
            .unwrap();
        assert_eq!(out, &data[..4 * KIB as usize]);
    }
}

#[test]
fn read_ahead_reports_a_corrupt_chunk_at_its_offset() {
    let params = CompressionParams::default();
    let data = structured(64 * 1024, 3);
    let (tmp, s) = write_file(&data, &params);
    let (off5, _) = s.offsets.chunk_range(5).unwrap();
    let mut bytes = std::fs::read(tmp.path()).unwrap();
    bytes[off5 as usize + 1] ^= 0xFF;
    std::fs::write(tmp.path(), &bytes).unwrap();
    for mapped in [false, true] {
        let r = reader(&tmp, &s, &params)
            .unwrap()
            .map_sequential_reads(mapped);
        let mut window = ReadWindow::new(1 << 20);
        let mut dec = Compressor::new(params.codec);
        let mut out = Vec::new();
        for i in 0..r.chunk_count() {
            let res = r.read_chunk_ahead(i, &mut window, &mut dec, &mut out, Wait::Allowed);
            if i == 5 {
                match res {
                    Err(Error::Corruption { offset, .. }) => {
                        assert_eq!(offset, off5, "mapped {mapped}")
                    }
                    other => panic!("mapped {mapped}: expected corruption, got {other:?}"),
                }
            } else {
                res.unwrap();
            }
        }
    }
}

#[test]
fn round_trip_every_codec_and_chunk_size() {
    for codec in codecs() {
        for kb in [1u32, 4, 16, 64, 128] {
            let params = params(codec, kb);
            // Not a multiple of the chunk length, so the last chunk is short.
            let len = (kb * KIB) as usize * 5 + 777;
            for data in [structured(len, 1), random(len, 2)] {
                let (tmp, s) = write_file(&data, &params);
                assert_eq!(s.uncompressed_len, len as u64);
                assert_eq!(s.offsets.chunk_count(), 6);
                assert_eq!(s.compressed_len, tmp.as_file().metadata().unwrap().len());
                assert_eq!(s.offsets.total_len(), s.compressed_len);
                assert_eq!(s.codec_stats.calls, 6);
                let r = reader(&tmp, &s, &params).unwrap();
                assert_eq!(read_all(&r), data, "{codec:?} {kb} KiB");
                assert_eq!(r.chunk_of(0), 0);
                assert_eq!(r.chunk_of(u64::from(kb * KIB)), 1);
                assert_eq!(r.chunk_of(len as u64 - 1), 5);
            }
        }
    }
}

#[test]
fn empty_stream() {
    let params = CompressionParams::default();
    let (tmp, s) = write_file(&[], &params);
    assert_eq!(s.offsets.chunk_count(), 0);
    assert_eq!(s.compressed_len, 0);
    let r = reader(&tmp, &s, &params).unwrap();
    let mut out = Vec::new();
    assert!(r
        .read_chunk(
            0,
            &mut Compressor::new(params.codec),
            &mut out,
            Wait::Allowed
        )
        .is_err());
}

#[test]
fn offsets_stay_under_three_bytes_per_chunk() {
    // Worst case for the bit width: every chunk incompressible (stored longer than the chunk
    // length). 4096 chunks so the fixed struct size does not dominate.
    for kb in [1u32, 2, 4, 8, 16, 32, 64, 128] {
        let cl = kb * KIB;
        for (name, len) in [
            (
                "incompressible",
                lz4_flex::block::get_maximum_output_size(cl as usize) as u32 + CRC_LEN,
            ),
            ("compressible", cl / 3 + CRC_LEN),
        ] {
            let mut b = ChunkOffsetsBuilder::new();
            let mut rng = rand::rngs::StdRng::seed_from_u64(3);
            for _ in 0..4096 {
                b.push(rng.gen_range(len / 2..=len));
            }
            let o = b.finish();
            assert!(
                o.bytes_per_chunk() <= 3.0,
                "{kb} KiB {name}: {}",
                o.bytes_per_chunk()
            );
        }
    }
}

#[test]
fn real_files_stay_under_three_bytes_per_chunk() {
    for kb in [1u32, 4, 16, 64, 128] {
        let params = params(Codec::Lz4, kb);
        // 256 chunks each.
        let len = (kb * KIB) as usize * 256;
        for data in [structured(len, 5), random(len, 6)] {
            let (_tmp, s) = write_file(&data, &params);
            let bpc = s.offsets.bytes_per_chunk();
            println!(
                "{kb:>3} KiB chunks, {} chunks, ratio {:.2}: {bpc:.3} bytes/chunk",
                s.offsets.chunk_count(),
                s.compressed_len as f64 / s.uncompressed_len as f64
            );
            assert!(bpc <= 3.0, "{kb} KiB: {bpc}");
        }
    }
}

#[test]
fn chunk_ranges_match_lengths() {
    let mut b = ChunkOffsetsBuilder::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let lens: Vec<u32> = (0..1000).map(|_| rng.gen_range(4..200_000)).collect();
    for &l in &lens {
        b.push(l);
    }
    let o = b.finish();
    let mut pos = 0u64;
    for (i, &l) in lens.iter().enumerate() {
        assert_eq!(o.chunk_range(i), Some((pos, l)));
        pos += u64::from(l);
    }
    assert_eq!(o.chunk_range(lens.len()), None);
    assert_eq!(o.total_len(), pos);
}

#[test]
fn offsets_encode_decode() {
    for n in [0usize, 1, 63, 64, 65, 1000] {
        let mut b = ChunkOffsetsBuilder::new();
        for i in 0..n {
            b.push(4 + (i as u32 * 7919) % 5000);
        }
        let o = b.finish();
        let mut buf = Vec::new();
        o.encode(&mut buf);
        assert_eq!(ChunkOffsets::decode(&buf).unwrap(), o);
        // Every truncation and an extra byte are rejected.
        for cut in 0..buf.len() {
            assert!(ChunkOffsets::decode(&buf[..cut]).is_err());
        }
        let mut longer = buf.clone();
        longer.push(0);
        assert!(ChunkOffsets::decode(&longer).is_err());
        // A wrong base offset is caught.
        if n > 64 {
            let mut bad = buf.clone();
            bad[9 + 8] ^= 1;
            assert!(ChunkOffsets::decode(&bad).is_err());
        }
    }
    // Garbage, including absurd counts, is an error and never a panic or a huge allocation.
    let mut rng = rand::rngs::StdRng::seed_from_u64(4);
    for _ in 0..1000 {
        let mut g = vec![0u8; rng.gen_range(0..200)];
        rng.fill_bytes(&mut g);
        let _ = ChunkOffsets::decode(&g);
    }
    let mut huge = u64::MAX.to_le_bytes().to_vec();
    huge.push(20);
    assert!(ChunkOffsets::decode(&huge).is_err());
    let mut huge = (1u64 << 40).to_le_bytes().to_vec();
    huge.push(20);
    assert_eq!(ChunkOffsets::decode(&huge), Err(CorruptionKind::Truncated));
}

#[test]
fn flipped_byte_names_the_chunk_and_spares_the_others() {
    for codec in codecs() {
        let params = params(codec, 4);
        let data = structured(4 * 4096 + 100, 8);
        let (tmp, s) = write_file(&data, &params);
        let (off, len) = s.offsets.chunk_range(2).unwrap();
        let mut bytes = std::fs::read(tmp.path()).unwrap();
        bytes[(off + u64::from(len) / 2) as usize] ^= 0x40;
        std::fs::write(tmp.path(), &bytes).unwrap();
        let r = reader(&tmp, &s, &params).unwrap();
        let mut dec = Compressor::new(codec);
        let mut out = Vec::new();
        match r.read_chunk(2, &mut dec, &mut out, Wait::Allowed) {
            Err(Error::Corruption {
                path,
                offset,
                kind: CorruptionKind::ChecksumMismatch { .. },
            }) => {
                assert_eq!(offset, off);
                assert_eq!(path, tmp.path());
            }
            other => panic!("{codec:?}: {other:?}"),
        }
        for i in [0usize, 1, 3, 4] {
            r.read_chunk(i, &mut dec, &mut out, Wait::Allowed).unwrap();
            let st = i * 4096;
            assert_eq!(&out[..], &data[st..(st + 4096).min(data.len())]);
        }
    }
}

#[test]
fn bad_compressed_data_with_good_crc_is_decompress_error() {
    // A chunk whose CRC matches but whose contents do not decompress (a writer bug, or a
    // codec mismatch) must say Decompress at the chunk's offset.
    let params = params(Codec::Lz4, 4);
    let data = random(3 * 4096, 1);
    let (tmp, s) = write_file(&data, &params);
    let (off, _) = s.offsets.chunk_range(1).unwrap();
    let r = ChunkedReader::new(
        File::open(tmp.path()).unwrap(),
        tmp.path().to_path_buf(),
        Arc::new(s.offsets.clone()),
        s.uncompressed_len,
        Codec::Zstd { level: 3 },
        params.chunk_length,
    )
    .unwrap();
    let mut out = Vec::new();
    match r.read_chunk(
        1,
        &mut Compressor::new(Codec::Zstd { level: 3 }),
        &mut out,
        Wait::Allowed,
    ) {
        Err(Error::Corruption {
            offset,
            kind: CorruptionKind::Decompress,
            ..
        }) => assert_eq!(offset, off),
        other => panic!("{other:?}"),
    }
}

#[test]
fn truncated_file_is_an_error() {
    let params = CompressionParams::default();
    let data = structured(10 * 4096, 3);
    let (tmp, s) = write_file(&data, &params);
    let full = s.compressed_len;
    // Truncated before opening: refused at open.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(tmp.path())
        .unwrap();
    f.set_len(full - 10).unwrap();
    match reader(&tmp, &s, &params) {
        Err(Error::Corruption {
            kind: CorruptionKind::Truncated,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    // Truncated after opening: the read of the cut chunk fails, earlier chunks still read.
    f.set_len(full).unwrap();
    let r = reader(&tmp, &s, &params).unwrap();
    f.set_len(full - 10).unwrap();
    let mut dec = Compressor::new(params.codec);
    let mut out = Vec::new();
    let last = s.offsets.chunk_count() - 1;
    let (off, _) = s.offsets.chunk_range(last).unwrap();
    match r.read_chunk(last, &mut dec, &mut out, Wait::Allowed) {
        Err(Error::Corruption {
            offset,
            kind: CorruptionKind::Truncated,
            ..
        }) => assert_eq!(offset, off),
        other => panic!("{other:?}"),
    }
    r.read_chunk(0, &mut dec, &mut out, Wait::Allowed).unwrap();
    assert_eq!(&out[..], &data[..4096]);
    // Offsets that do not match the data length are refused.
    assert!(ChunkedReader::new(
        File::open(tmp.path()).unwrap(),
        tmp.path().to_path_buf(),
        Arc::new(s.offsets.clone()),
        s.uncompressed_len + 4096,
        params.codec,
        params.chunk_length,
    )
    .is_err());
}

#[test]
fn reader_is_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ChunkedReader>();
    let params = params(Codec::Zstd { level: 1 }, 4);
    let data = structured(64 * 4096, 12);
    let (tmp, s) = write_file(&data, &params);
    let r = Arc::new(reader(&tmp, &s, &params).unwrap());
    std::thread::scope(|scope| {
        for t in 0..4 {
            let r = Arc::clone(&r);
            let data = &data;
            scope.spawn(move || {
                let mut dec = Compressor::new(r.codec());
                let mut out = Vec::new();
                let mut stats = CodecStats::default();
                for i in (t..64).step_by(4) {
                    r.read_chunk_timed(i, &mut dec, &mut out, &mut stats, Wait::Allowed)
                        .unwrap();
                    assert_eq!(&out[..], &data[i * 4096..(i + 1) * 4096]);
                }
                assert_eq!(stats.calls, 16);
            });
        }
    });
}

#[test]
fn write_error_surfaces() {
    struct Failing;
    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::other("disk on fire"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut w = ChunkedWriter::new(Failing, &CompressionParams::default()).with_path("/x/Data.db");
    assert!(w.write_all(&[0u8; 5000]).is_err());
    match w.finish() {
        Err(Error::Io { path, .. }) => assert_eq!(path, Path::new("/x/Data.db")),
        other => panic!("{:?}", other.map(|(_, s)| s)),
    }
}
