//! The encoding checked against the comparator for every type, ASC and DESC.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::format::*;
use super::*;
use crate::model::key::{after_prefix, ClusteringRange};
use crate::model::types::compare::unorder_timestamp;
use crate::model::types::{self, encode_duration};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cmp::Ordering;

const NATIVE: &[CqlType] = &types::NATIVE_TYPES;

/// Shortest two's complement, computed independently of the code under test.
fn minimal_varint(v: &[u8]) -> Vec<u8> {
    let mut v = v.to_vec();
    while v.len() > 1 && ((v[0] == 0 && v[1] & 0x80 == 0) || (v[0] == 0xFF && v[1] & 0x80 != 0)) {
        v.remove(0);
    }
    v
}

fn random_varint(rng: &mut StdRng, max_len: usize) -> Vec<u8> {
    let len = rng.gen_range(1..=max_len);
    let mut v: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
    if rng.gen_bool(0.3) {
        // Many ties in the leading bytes.
        v[0] = if rng.gen() { 0 } else { 0xFF };
    }
    minimal_varint(&v)
}

fn v1_uuid(ts: u64, lsb: [u8; 8]) -> Vec<u8> {
    let msb = unorder_timestamp((ts & 0x0FFF_FFFF_FFFF_FFFF) | (1 << 60));
    let mut v = msb.to_be_bytes().to_vec();
    v.extend_from_slice(&lsb);
    v
}

fn uuid_with_version(rng: &mut StdRng, version: u8) -> Vec<u8> {
    let mut v: Vec<u8> = (0..16).map(|_| rng.gen()).collect();
    v[6] = (v[6] & 0x0F) | (version << 4);
    v
}

/// Canonical valid values of `ty`: edge cases plus random ones. Every value is already
/// in the form `decode` returns.
fn values(ty: &CqlType, rng: &mut StdRng) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = vec![Vec::new()];
    let n = 120;
    match ty {
        CqlType::Tinyint => {
            out.extend([i8::MIN, -1, 0, 1, i8::MAX].map(|x| x.to_be_bytes().to_vec()));
            out.extend((0..n).map(|_| rng.gen::<i8>().to_be_bytes().to_vec()));
        }
        CqlType::Smallint => {
            out.extend([i16::MIN, -1, 0, 1, i16::MAX].map(|x| x.to_be_bytes().to_vec()));
            out.extend((0..n).map(|_| rng.gen::<i16>().to_be_bytes().to_vec()));
        }
        CqlType::Int => {
            out.extend(
                [i32::MIN, -256, -1, 0, 1, 255, 256, i32::MAX].map(|x| x.to_be_bytes().to_vec()),
            );
            out.extend((0..n).map(|_| rng.gen::<i32>().to_be_bytes().to_vec()));
        }
        CqlType::Bigint | CqlType::Counter | CqlType::Timestamp => {
            out.extend([i64::MIN, -1, 0, 1, i64::MAX].map(|x| x.to_be_bytes().to_vec()));
            out.extend((0..n).map(|_| {
                (rng.gen::<i64>() >> rng.gen_range(0..63))
                    .to_be_bytes()
                    .to_vec()
            }));
        }
        CqlType::Boolean => out.extend([vec![0], vec![1]]),
        CqlType::Float => {
            out.extend(
                [
                    f32::NEG_INFINITY,
                    f32::MIN,
                    -1.0,
                    -f32::MIN_POSITIVE,
                    -1e-45,
                    -0.0,
                    0.0,
                    1e-45,
                    f32::MIN_POSITIVE,
                    1.0,
                    f32::MAX,
                    f32::INFINITY,
                    f32::NAN,
                ]
                .map(|x| x.to_be_bytes().to_vec()),
            );
            out.extend((0..n).map(|_| {
                let x = f32::from_bits(rng.gen());
                let x = if x.is_nan() { f32::NAN } else { x };
                x.to_be_bytes().to_vec()
            }));
        }
        CqlType::Double => {
            out.extend(
                [
                    f64::NEG_INFINITY,
                    f64::MIN,
                    -1.0,
                    -f64::MIN_POSITIVE,
                    -5e-324,
                    -0.0,
                    0.0,
                    5e-324,
                    f64::MIN_POSITIVE,
                    1.0,
                    f64::MAX,
                    f64::INFINITY,
                    f64::NAN,
                ]
                .map(|x| x.to_be_bytes().to_vec()),
            );
            out.extend((0..n).map(|_| {
                let x = f64::from_bits(rng.gen());
                let x = if x.is_nan() { f64::NAN } else { x };
                x.to_be_bytes().to_vec()
            }));
        }
        CqlType::Text => {
            let alphabet = [
                '\0',
                '\u{1}',
                'a',
                'b',
                'é',
                '\u{FF}',
                '\u{FFFF}',
                '\u{10FFFF}',
            ];
            out.extend(
                ["\0", "\0\0", "a", "a\0", "a\0b", "a\u{1}", "ÿ"].map(|s| s.as_bytes().to_vec()),
            );
            out.extend((0..n).map(|_| {
                let len = rng.gen_range(0..6);
                let s: String = (0..len)
                    .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
                    .collect();
                s.into_bytes()
            }));
        }
        CqlType::Ascii => {
            out.extend([
                b"\0".to_vec(),
                b"\0\0".to_vec(),
                b"\x7f".to_vec(),
                b"a\0".to_vec(),
            ]);
            out.extend((0..n).map(|_| {
                let len = rng.gen_range(0..6);
                (0..len)
                    .map(|_| [0u8, 1, b'a', 0x7F][rng.gen_range(0..4)])
                    .collect()
            }));
        }
        CqlType::Blob => {
            out.extend([
                vec![0],
                vec![0, 0],
                vec![0xFF],
                vec![0xFF, 0],
                vec![0, 0xFF],
                vec![1],
            ]);
            out.extend((0..n).map(|_| {
                let len = rng.gen_range(0..7);
                (0..len)
                    .map(|_| match rng.gen_range(0..5) {
                        0 => 0,
                        1 => 0xFF,
                        2 => 1,
                        3 => 0xFE,
                        _ => rng.gen(),
                    })
                    .collect()
            }));
        }
        CqlType::Inet => {
            out.extend([
                vec![0; 4],
                vec![0xFF; 4],
                vec![0; 16],
                vec![0xFF; 16],
                vec![1, 2, 3, 4],
            ]);
            let mut v6 = vec![1, 2, 3, 4];
            v6.extend([0; 12]);
            out.push(v6);
            out.extend((0..n).map(|_| {
                let len = if rng.gen() { 4 } else { 16 };
                (0..len)
                    .map(|_| if rng.gen_bool(0.3) { 0 } else { rng.gen() })
                    .collect()
            }));
        }
        CqlType::Date => {
            out.extend([0u32, 1 << 31, u32::MAX].map(|x| x.to_be_bytes().to_vec()));
            out.extend((0..n).map(|_| rng.gen::<u32>().to_be_bytes().to_vec()));
            out.retain(|v| !v.is_empty()); // date refuses the empty value; see below
        }
        CqlType::Time => {
            let max = crate::model::types::NANOS_PER_DAY - 1;
            out.extend([0i64, 1, max].map(|x| x.to_be_bytes().to_vec()));
            out.extend((0..n).map(|_| rng.gen_range(0..=max).to_be_bytes().to_vec()));
            out.retain(|v| !v.is_empty());
        }
        CqlType::Uuid => {
            out.push(vec![0; 16]);
            out.push(vec![0xFF; 16]);
            for version in [0u8, 1, 2, 3, 4, 5, 6, 7, 15] {
                out.extend((0..12).map(|_| uuid_with_version(rng, version)));
            }
            // Version 1 with tied timestamps and low bytes on both sides of 0x80.
            for lsb0 in [0x00u8, 0x7F, 0x80, 0xFF] {
                out.push(v1_uuid(42, [lsb0, 0, 0, 0, 0, 0, 0, 1]));
                out.push(v1_uuid(1 << 40, [lsb0, 0x80, 0, 0, 0, 0, 0, 1]));
            }
            out.extend((0..20).map(|_| v1_uuid(rng.gen(), rng.gen())));
        }
        CqlType::Timeuuid => {
            for lsb0 in [0x00u8, 0x7F, 0x80, 0xFF] {
                for ts in [0u64, 42, 0xFFFF_FFFF, 1 << 32, 0x0FFF_FFFF_FFFF_FFFF] {
                    out.push(v1_uuid(ts, [lsb0, 0x80, 0x7F, 0, 0, 0, 0, lsb0]));
                }
            }
            out.extend((0..n).map(|_| {
                let ts = rng.gen::<u64>() >> rng.gen_range(4..64);
                v1_uuid(ts, rng.gen())
            }));
        }
        CqlType::Varint => {
            out.extend(
                [
                    0i64,
                    1,
                    -1,
                    127,
                    128,
                    -128,
                    -129,
                    255,
                    256,
                    -256,
                    -257,
                    i64::MIN,
                    i64::MAX,
                ]
                .map(|x| minimal_varint(&x.to_be_bytes())),
            );
            out.push(minimal_varint(&[0x7F; 300]));
            out.push(minimal_varint(&[0x80; 300]));
            let mut long = vec![0x01];
            long.extend([0; 299]);
            out.push(long);
            out.extend((0..n).map(|_| random_varint(rng, 24)));
            out.extend((0..10).map(|_| random_varint(rng, 400)));
        }
        CqlType::Decimal => {
            let dec = |scale: i32, unscaled: Vec<u8>| {
                let mut v = scale.to_be_bytes().to_vec();
                v.extend(unscaled);
                v
            };
            // Canonical: zero is scale 0; otherwise no trailing decimal zero.
            out.push(dec(0, vec![0]));
            for scale in [i32::MIN, -5, -1, 0, 1, 2, 5, i32::MAX] {
                for u in [1i64, -1, 7, -7, 123, -123, 99, 101, i64::MAX, i64::MIN + 1] {
                    out.push(dec(scale, minimal_varint(&u.to_be_bytes())));
                }
            }
            out.extend((0..n).map(|_| {
                let mut u: i64 = rng.gen::<i64>() >> rng.gen_range(0..63);
                while u % 10 == 0 {
                    u = rng.gen_range(-99..100);
                }
                dec(rng.gen_range(-12..12), minimal_varint(&u.to_be_bytes()))
            }));
            // Long unscaled values ending in an odd byte are never multiples of 10.
            out.extend((0..12).map(|_| {
                let mut u = random_varint(rng, 60);
                if let Some(last) = u.last_mut() {
                    *last |= 1;
                }
                if u.len() == 1 && u[0] == 0 {
                    u = vec![1];
                }
                dec(rng.gen_range(-40..40), minimal_varint(&u))
            }));
        }
        CqlType::Duration => {
            out.retain(|v| !v.is_empty());
            for (m, d, ns) in [
                (0, 0, 0),
                (1, 0, 0),
                (0, 1, 0),
                (0, 0, 1),
                (-1, 0, 0),
                (0, 0, -1),
                (i32::MAX, i32::MAX, i64::MAX),
                (i32::MIN, i32::MIN, i64::MIN),
            ] {
                out.push(encode_duration(m, d, ns));
            }
            out.extend((0..n).map(|_| {
                let (m, d, ns) = (
                    rng.gen_range(0..=i32::MAX) >> rng.gen_range(0..31),
                    rng.gen_range(0..=i32::MAX) >> rng.gen_range(0..31),
                    rng.gen_range(0..=i64::MAX) >> rng.gen_range(0..63),
                );
                if rng.gen() {
                    encode_duration(m, d, ns)
                } else {
                    encode_duration(-m, -d, -ns)
                }
            }));
        }
        _ => unreachable!("not a native type"),
    }
    for v in &out {
        if !v.is_empty() {
            ty.validate(v)
                .unwrap_or_else(|e| panic!("{ty}: generated {v:02x?}: {e}"));
        }
    }
    if matches!(ty, CqlType::Date | CqlType::Time | CqlType::Duration) {
        // Protocol validation refuses the empty value for these, but the encoding still
        // orders it first (Cassandra's comparators accept it).
        out.push(Vec::new());
    }
    out
}

fn layout(ty: &CqlType, order: Order) -> ClusteringLayout {
    ClusteringLayout::new(vec![(ty.clone(), order)])
}

#[test]
fn every_native_type_orders_and_round_trips() {
    let mut rng = StdRng::seed_from_u64(0xCA1B);
    for ty in NATIVE {
        let vals = values(ty, &mut rng);
        for order in [Order::Asc, Order::Desc] {
            let l = layout(ty, order);
            let encs: Vec<Vec<u8>> = vals
                .iter()
                .map(|v| {
                    l.encode_key(&[v])
                        .unwrap_or_else(|e| panic!("{ty} {v:02x?}: {e}"))
                        .0
                        .to_vec()
                })
                .collect();
            for (v, e) in vals.iter().zip(&encs) {
                assert_eq!(e.first(), Some(&COMPONENT_MARKER));
                let back = l
                    .decode(e)
                    .unwrap_or_else(|err| panic!("{ty} {order:?} {v:02x?}: {err}"));
                assert_eq!(
                    back,
                    vec![Bytes::copy_from_slice(v)],
                    "{ty} {order:?} round trip"
                );
            }
            for (a, ea) in vals.iter().zip(&encs) {
                for (b, eb) in vals.iter().zip(&encs) {
                    let want = types::compare(ty, a, b);
                    let want = if order == Order::Desc {
                        want.reverse()
                    } else {
                        want
                    };
                    assert_eq!(ea.cmp(eb), want, "{ty} {order:?}: {a:02x?} vs {b:02x?}");
                    // Prefix-freedom: no body is a proper prefix of another.
                    if ea != eb {
                        assert!(
                            !eb.starts_with(ea),
                            "{ty} {order:?}: {a:02x?} prefixes {b:02x?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn empty_value_sorts_first_for_every_type() {
    let mut rng = StdRng::seed_from_u64(5);
    for ty in NATIVE {
        let l = layout(ty, Order::Asc);
        let empty = l.encode_key(&[&[]]).unwrap();
        assert_eq!(
            l.decode(empty.as_bytes()).unwrap(),
            vec![Bytes::new()],
            "{ty}"
        );
        for v in values(ty, &mut rng).iter().filter(|v| !v.is_empty()) {
            assert!(empty < l.encode_key(&[v]).unwrap(), "{ty} {v:02x?}");
        }
    }
}

/// Values Cassandra considers equal to a canonical one encode identically and decode to
/// the canonical form.
#[test]
fn non_canonical_values_normalise() {
    let cases: Vec<(CqlType, Vec<u8>, Vec<u8>)> = vec![
        (CqlType::Boolean, vec![2], vec![1]),
        (CqlType::Boolean, vec![0xFF], vec![1]),
        (
            CqlType::Float,
            0x7FC0_0001u32.to_be_bytes().to_vec(),
            f32::NAN.to_be_bytes().to_vec(),
        ),
        (
            CqlType::Float,
            0xFFC0_0000u32.to_be_bytes().to_vec(),
            f32::NAN.to_be_bytes().to_vec(),
        ),
        (
            CqlType::Double,
            0xFFF0_0000_0000_0001u64.to_be_bytes().to_vec(),
            f64::NAN.to_be_bytes().to_vec(),
        ),
        (CqlType::Varint, vec![0, 0, 1], vec![1]),
        (CqlType::Varint, vec![0xFF, 0xFF], vec![0xFF]),
        (CqlType::Varint, vec![0xFF, 0x80], vec![0x80]),
        (CqlType::Varint, vec![0, 0], vec![0]),
        // 1.0 (unscaled 10, scale 1) == 1 (unscaled 1, scale 0)
        (CqlType::Decimal, vec![0, 0, 0, 1, 10], vec![0, 0, 0, 0, 1]),
        // 1.00
        (CqlType::Decimal, vec![0, 0, 0, 2, 100], vec![0, 0, 0, 0, 1]),
        // 0 with scale 7, and -0 written with a redundant byte
        (CqlType::Decimal, vec![0, 0, 0, 7, 0], vec![0, 0, 0, 0, 0]),
        (
            CqlType::Decimal,
            vec![0xFF, 0xFF, 0xFF, 0xFF, 0, 0],
            vec![0, 0, 0, 0, 0],
        ),
        // A bare scale is read as zero.
        (CqlType::Decimal, vec![0, 0, 0, 3], vec![0, 0, 0, 0, 0]),
        // 1000 at scale 0 is 1 at scale -3
        (
            CqlType::Decimal,
            vec![0, 0, 0, 0, 0x03, 0xE8],
            vec![0xFF, 0xFF, 0xFF, 0xFD, 1],
        ),
        // -20 at scale -1 is -2 at scale -2
        (
            CqlType::Decimal,
            vec![0xFF, 0xFF, 0xFF, 0xFF, 0xEC],
            vec![0xFF, 0xFF, 0xFF, 0xFE, 0xFE],
        ),
        // Scales at the ends of the i32 range. 10 at scale i32::MIN cannot lose its
        // zero (the scale would underflow), so it is its own canonical form.
        (
            CqlType::Decimal,
            vec![0x80, 0, 0, 0, 10],
            vec![0x80, 0, 0, 0, 10],
        ),
        (
            CqlType::Decimal,
            vec![0x80, 0, 0, 0, 100],
            vec![0x80, 0, 0, 0, 100],
        ),
        (
            CqlType::Decimal,
            vec![0x80, 0, 0, 1, 100],
            vec![0x80, 0, 0, 0, 10],
        ),
        (
            CqlType::Decimal,
            vec![0x7F, 0xFF, 0xFF, 0xFF, 10],
            vec![0x7F, 0xFF, 0xFF, 0xFE, 1],
        ),
        // Duration with a non-shortest vint (0x80 0x02 = 2 = zigzag(1)).
        (CqlType::Duration, vec![0x80, 0x02, 0, 0], vec![2, 0, 0]),
    ];
    for (ty, raw, canonical) in cases {
        assert_eq!(
            types::compare(&ty, &raw, &canonical),
            Ordering::Equal,
            "{ty} {raw:02x?}"
        );
        for order in [Order::Asc, Order::Desc] {
            let l = layout(&ty, order);
            let e = l.encode_key(&[&raw]).unwrap();
            assert_eq!(e, l.encode_key(&[&canonical]).unwrap(), "{ty} {raw:02x?}");
            assert_eq!(
                l.decode(e.as_bytes()).unwrap(),
                vec![Bytes::from(canonical.clone())],
                "{ty}"
            );
        }
    }
}

#[test]
fn non_canonical_varints_and_decimals_order_numerically() {
    let mut rng = StdRng::seed_from_u64(99);
    let l = layout(&CqlType::Varint, Order::Asc);
    let ld = layout(&CqlType::Decimal, Order::Asc);
    for _ in 0..3000 {
        let (x, y): (i64, i64) = (
            rng.gen::<i64>() >> rng.gen_range(0..63),
            rng.gen::<i64>() >> rng.gen_range(0..63),
        );
        // Padded (non-minimal) two's complement.
        let pad = |v: i64, rng: &mut StdRng| {
            let mut b = vec![if v < 0 { 0xFF } else { 0 }; rng.gen_range(0..3)];
            b.extend(v.to_be_bytes());
            b
        };
        let (bx, by) = (pad(x, &mut rng), pad(y, &mut rng));
        assert_eq!(types::compare(&CqlType::Varint, &bx, &by), x.cmp(&y));
        let (ex, ey) = (l.encode_key(&[&bx]).unwrap(), l.encode_key(&[&by]).unwrap());
        assert_eq!(ex.cmp(&ey), x.cmp(&y), "{x} vs {y}");
        assert_eq!(
            l.decode(ex.as_bytes()).unwrap()[0].as_ref(),
            minimal_varint(&x.to_be_bytes()).as_slice()
        );

        // Decimals: an exact rational comparison with i128 as the oracle.
        let (sx, sy) = (rng.gen_range(-9..=9i32), rng.gen_range(-9..=9i32));
        let dx: i64 = rng.gen_range(-1_000_000..1_000_000) * [1, 10, 100][rng.gen_range(0..3)];
        let dy: i64 = rng.gen_range(-1_000_000..1_000_000) * [1, 10, 100][rng.gen_range(0..3)];
        let common = sx.max(sy);
        let ix = i128::from(dx) * 10i128.pow((common - sx) as u32);
        let iy = i128::from(dy) * 10i128.pow((common - sy) as u32);
        let dec = |s: i32, u: i64, rng: &mut StdRng| {
            let mut v = s.to_be_bytes().to_vec();
            v.extend(pad(u, rng));
            v
        };
        let (vx, vy) = (dec(sx, dx, &mut rng), dec(sy, dy, &mut rng));
        assert_eq!(types::compare(&CqlType::Decimal, &vx, &vy), ix.cmp(&iy));
        let (ex, ey) = (
            ld.encode_key(&[&vx]).unwrap(),
            ld.encode_key(&[&vy]).unwrap(),
        );
        assert_eq!(ex.cmp(&ey), ix.cmp(&iy), "{dx}e-{sx} vs {dy}e-{sy}");
        let back = ld.decode(ex.as_bytes()).unwrap();
        assert_eq!(
            types::compare(&CqlType::Decimal, &back[0], &vx),
            Ordering::Equal
        );
    }
}

#[test]
fn compare_values_matches_native_semantics() {
    use CqlType::*;
    let cv = types::compare;
    assert_eq!(
        cv(&Int, &(-1i32).to_be_bytes(), &1i32.to_be_bytes()),
        Ordering::Less
    );
    assert_eq!(
        cv(&Bigint, &i64::MIN.to_be_bytes(), &i64::MAX.to_be_bytes()),
        Ordering::Less
    );
    assert_eq!(
        cv(&Float, &(-0.0f32).to_be_bytes(), &0.0f32.to_be_bytes()),
        Ordering::Less
    );
    assert_eq!(
        cv(
            &Float,
            &f32::NAN.to_be_bytes(),
            &f32::INFINITY.to_be_bytes()
        ),
        Ordering::Greater
    );
    assert_eq!(
        cv(&Double, &(-f64::NAN).to_be_bytes(), &f64::NAN.to_be_bytes()),
        Ordering::Equal
    );
    assert_eq!(cv(&Blob, &[0xFF], &[0x00, 0x00]), Ordering::Greater);
    assert_eq!(cv(&Inet, &[1, 2, 3, 4], &[0; 16]), Ordering::Greater);
    assert_eq!(
        cv(
            &Date,
            &0x8000_0000u32.to_be_bytes(),
            &0x7FFF_FFFFu32.to_be_bytes()
        ),
        Ordering::Greater
    );
    assert_eq!(cv(&Varint, &[0x80], &[0x7F]), Ordering::Less);
    assert_eq!(cv(&Varint, &[0x00, 0x80], &[0x7F]), Ordering::Greater);
    assert_eq!(cv(&Boolean, &[0], &[1]), Ordering::Less);
    // Version 4 sorts after every version 1 UUID, whatever the bytes.
    let mut v4 = [0u8; 16];
    v4[6] = 0x40;
    let v1 = v1_uuid(u64::MAX, [0xFF; 8]);
    assert_eq!(cv(&Uuid, &v4, &v1), Ordering::Greater);
}

#[test]
fn timeuuids_sort_by_time_not_bytes() {
    // t1 is earlier (timestamp 0xFFFF_FFFF) but its bytes start with 0xFF; t2 is later
    // (timestamp 2^32) and its bytes start with 0x00.
    let t1 = v1_uuid(0xFFFF_FFFF, [0; 8]);
    let t2 = v1_uuid(1 << 32, [0; 8]);
    assert_eq!(&t1[..8], &[0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x10, 0x00]);
    assert_eq!(&t2[..8], &[0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x10, 0x00]);
    assert!(t1 > t2);
    // Real-world shape: a later time_hi beats an earlier one in time_low.
    let t3 = [
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x11, 0xEF, 0x80, 0, 0, 0, 0, 0, 0, 0,
    ];
    let t4 = [
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x11, 0xEE, 0x80, 0, 0, 0, 0, 0, 0, 0,
    ];
    for ty in [CqlType::Timeuuid, CqlType::Uuid] {
        let l = layout(&ty, Order::Asc);
        assert!(
            l.encode_key(&[&t1]).unwrap() < l.encode_key(&[&t2]).unwrap(),
            "{ty}"
        );
        assert!(
            l.encode_key(&[&t4]).unwrap() < l.encode_key(&[&t3]).unwrap(),
            "{ty}"
        );
        let ld = layout(&ty, Order::Desc);
        assert!(
            ld.encode_key(&[&t1]).unwrap() > ld.encode_key(&[&t2]).unwrap(),
            "{ty}"
        );
    }
    // Same timestamp: timeuuid compares the low bytes signed, uuid unsigned.
    let lo = v1_uuid(7, [0x7F, 0, 0, 0, 0, 0, 0, 0]);
    let hi = v1_uuid(7, [0x80, 0, 0, 0, 0, 0, 0, 0]);
    let lt = layout(&CqlType::Timeuuid, Order::Asc);
    let lu = layout(&CqlType::Uuid, Order::Asc);
    assert!(lt.encode_key(&[&hi]).unwrap() < lt.encode_key(&[&lo]).unwrap());
    assert!(lu.encode_key(&[&lo]).unwrap() < lu.encode_key(&[&hi]).unwrap());
}

#[test]
fn invalid_values_are_rejected() {
    let l = |ty: CqlType| layout(&ty, Order::Asc);
    assert!(l(CqlType::Int).encode_key(&[&[1, 2, 3]]).is_err());
    assert!(l(CqlType::Text).encode_key(&[&[0xFF]]).is_err());
    assert!(l(CqlType::Time)
        .encode_key(&[&(-1i64).to_be_bytes()])
        .is_err());
    assert!(l(CqlType::Timeuuid).encode_key(&[&[0u8; 16]]).is_err());
    assert!(l(CqlType::Decimal).encode_key(&[&[0, 0]]).is_err());
    let frozen = CqlType::Frozen(Box::new(CqlType::List(Box::new(CqlType::Int))));
    assert!(l(frozen.clone()).encode_key(&[&[0, 0, 0, 0]]).is_ok());
    assert!(l(frozen).encode_key(&[&[0, 0, 0, 1]]).is_err());
    let two = ClusteringLayout::new(vec![(CqlType::Int, Order::Asc), (CqlType::Int, Order::Asc)]);
    assert!(two.encode_key(&[&[0, 0, 0, 1]]).is_err());
    assert!(two
        .encode_prefix(&[&[0, 0, 0, 1], &[0, 0, 0, 1], &[0, 0, 0, 1]])
        .is_err());
    // A corrupt decimal exponent far beyond the i32 scale range fails fast.
    let mut huge = vec![COMPONENT_MARKER, TAG_POS];
    huge.extend_from_slice(&((1u64 << 40) ^ (1 << 63)).to_be_bytes());
    huge.extend_from_slice(&[11, 0]);
    assert!(l(CqlType::Decimal).decode(&huge).is_err());
    huge[2..10].copy_from_slice(&((-(1i64 << 40)) as u64 ^ (1 << 63)).to_be_bytes());
    assert!(l(CqlType::Decimal).decode(&huge).is_err());
    // Garbage encodings do not panic and mostly fail.
    let mut rng = StdRng::seed_from_u64(3);
    for ty in NATIVE {
        for order in [Order::Asc, Order::Desc] {
            let l = layout(ty, order);
            for _ in 0..300 {
                let len = rng.gen_range(0..24);
                let mut junk: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
                if rng.gen() && !junk.is_empty() {
                    junk[0] = COMPONENT_MARKER;
                }
                if let Ok(vals) = l.decode(&junk) {
                    // Whatever decodes must be a valid value that re-encodes.
                    for v in vals {
                        assert!(l.encode_key(&[&v]).is_ok(), "{ty}: {junk:02x?}");
                    }
                }
            }
        }
    }
}

fn compare_keys(l: &ClusteringLayout, a: &[Vec<u8>], b: &[Vec<u8>]) -> Ordering {
    for (((ty, order), x), y) in l.columns.iter().zip(a).zip(b) {
        let c = types::compare(ty, x, y);
        let c = if *order == Order::Desc {
            c.reverse()
        } else {
            c
        };
        if c.is_ne() {
            return c;
        }
    }
    a.len().cmp(&b.len())
}

#[test]
fn multi_column_keys_and_prefixes() {
    let mut rng = StdRng::seed_from_u64(0x5EED);
    let l = ClusteringLayout::new(vec![
        (CqlType::Int, Order::Asc),
        (CqlType::Text, Order::Desc),
        (CqlType::Timeuuid, Order::Asc),
        (CqlType::Varint, Order::Desc),
        (CqlType::Double, Order::Asc),
        (CqlType::Blob, Order::Desc),
    ]);
    // Small per-column domains so keys share prefixes often.
    let domains: Vec<Vec<Vec<u8>>> = l
        .columns
        .iter()
        .map(|(ty, _)| {
            let mut v = values(ty, &mut rng);
            v.truncate(6);
            v
        })
        .collect();
    let keys: Vec<Vec<Vec<u8>>> = (0..250)
        .map(|_| {
            domains
                .iter()
                .map(|d| d[rng.gen_range(0..d.len())].clone())
                .collect()
        })
        .collect();
    let encoded: Vec<ClusteringKey> = keys
        .iter()
        .map(|k| {
            l.encode_key(&k.iter().map(Vec::as_slice).collect::<Vec<_>>())
                .unwrap()
        })
        .collect();
    for (k, e) in keys.iter().zip(&encoded) {
        let back: Vec<Vec<u8>> = l
            .decode(e.as_bytes())
            .unwrap()
            .iter()
            .map(|b| b.to_vec())
            .collect();
        assert_eq!(&back, k);
    }
    for (ka, ea) in keys.iter().zip(&encoded) {
        for (kb, eb) in keys.iter().zip(&encoded) {
            assert_eq!(
                ea.cmp(eb),
                compare_keys(&l, ka, kb),
                "{ka:02x?} vs {kb:02x?}"
            );
        }
        for n in 0..=ka.len() {
            let refs: Vec<&[u8]> = ka[..n].iter().map(Vec::as_slice).collect();
            let p = l.encode_prefix(&refs).unwrap();
            assert!(ea.as_bytes().starts_with(&p));
            let decoded: Vec<Vec<u8>> = l.decode(&p).unwrap().iter().map(|b| b.to_vec()).collect();
            assert_eq!(decoded, ka[..n].to_vec());
            let range = ClusteringRange::prefix(&p);
            assert!(after_prefix(&p).as_ref() > ea.as_bytes());
            // Exactly the keys that agree with `ka` on the first n columns are in range.
            for (kb, eb) in keys.iter().zip(&encoded) {
                let same = compare_keys(&l, &ka[..n], &kb[..n]).is_eq();
                assert_eq!(range.contains(eb.as_bytes()), same, "prefix {n}");
                if !same {
                    let c = compare_keys(&l, &ka[..n], &kb[..n]);
                    assert_eq!(p.as_slice().cmp(eb.as_bytes()), c);
                }
            }
        }
    }
    assert_eq!(l.encode_prefix(&[]).unwrap(), Vec::<u8>::new());
    assert!(l.decode(&[]).unwrap().is_empty());
}

proptest::proptest! {
    #[test]
    fn prop_bigint_text_pairs(a: i64, b: i64, s: String, t: String, desc: bool) {
        let order = if desc { Order::Desc } else { Order::Asc };
        let l = ClusteringLayout::new(vec![(CqlType::Bigint, order), (CqlType::Text, Order::Asc)]);
        let ea = l.encode_key(&[&a.to_be_bytes(), s.as_bytes()]).unwrap();
        let eb = l.encode_key(&[&b.to_be_bytes(), t.as_bytes()]).unwrap();
        let first = if desc { b.cmp(&a) } else { a.cmp(&b) };
        proptest::prop_assert_eq!(ea.cmp(&eb), first.then(s.as_bytes().cmp(t.as_bytes())));
    }

    #[test]
    fn prop_blob_round_trip(v: Vec<u8>, desc: bool) {
        let order = if desc { Order::Desc } else { Order::Asc };
        let l = layout(&CqlType::Blob, order);
        let e = l.encode_key(&[&v]).unwrap();
        proptest::prop_assert_eq!(l.decode(e.as_bytes()).unwrap(), vec![Bytes::from(v)]);
    }

    #[test]
    fn prop_varint_order(a: Vec<u8>, b: Vec<u8>) {
        let l = layout(&CqlType::Varint, Order::Asc);
        let ea = l.encode_key(&[&a]).unwrap();
        let eb = l.encode_key(&[&b]).unwrap();
        proptest::prop_assert_eq!(ea.cmp(&eb), types::compare(&CqlType::Varint, &a, &b));
    }
}

/// Frozen collections and tuples, checked against a model whose derived `Ord` is the
/// reference order.
mod composite {
    use super::*;
    use proptest::collection::{btree_map, btree_set, vec as pvec};
    use proptest::prelude::*;

    /// A value of one of the tested types. Within one type the variants never mix except
    /// `Empty` (the zero-byte value), which comes first, as Cassandra orders it; so the
    /// derived `Ord` is Cassandra's order: numbers numerically, text by its UTF-8 bytes,
    /// `Vec` element by element then shorter first (lists, sets, and maps as their
    /// (key, value) entries), `Option` with `None` (a null tuple field) first.
    #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
    enum M {
        Empty,
        Int(i32),
        Big(i64),
        Text(String),
        Coll(Vec<M>),
        Map(Vec<(M, M)>),
        Tuple(Vec<Option<M>>),
    }

    fn framed(v: Option<&[u8]>, out: &mut Vec<u8>) {
        match v {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(v) => {
                out.extend_from_slice(&(v.len() as i32).to_be_bytes());
                out.extend_from_slice(v);
            }
        }
    }

    /// Native protocol v4 serialization of a model value.
    fn ser(m: &M) -> Vec<u8> {
        let mut out = Vec::new();
        match m {
            M::Empty => {}
            M::Int(x) => out.extend_from_slice(&x.to_be_bytes()),
            M::Big(x) => out.extend_from_slice(&x.to_be_bytes()),
            M::Text(t) => out.extend_from_slice(t.as_bytes()),
            M::Coll(es) => {
                out.extend_from_slice(&(es.len() as i32).to_be_bytes());
                for e in es {
                    framed(Some(&ser(e)), &mut out);
                }
            }
            M::Map(es) => {
                out.extend_from_slice(&(es.len() as i32).to_be_bytes());
                for (k, v) in es {
                    framed(Some(&ser(k)), &mut out);
                    framed(Some(&ser(v)), &mut out);
                }
            }
            M::Tuple(fs) => {
                for f in fs {
                    framed(f.as_ref().map(ser).as_deref(), &mut out);
                }
            }
        }
        out
    }

    fn frozen(t: CqlType) -> CqlType {
        CqlType::Frozen(Box::new(t))
    }
    fn list(t: CqlType) -> CqlType {
        CqlType::List(Box::new(t))
    }
    fn set(t: CqlType) -> CqlType {
        CqlType::Set(Box::new(t))
    }
    fn map(k: CqlType, v: CqlType) -> CqlType {
        CqlType::Map(Box::new(k), Box::new(v))
    }

    fn int_m() -> BoxedStrategy<M> {
        prop_oneof![
            1 => Just(M::Empty),
            8 => (-3i32..3).prop_map(M::Int),
            3 => any::<i32>().prop_map(M::Int),
        ]
        .boxed()
    }

    fn big_m() -> BoxedStrategy<M> {
        prop_oneof![
            1 => Just(M::Empty),
            6 => (-2i64..2).prop_map(M::Big),
            3 => any::<i64>().prop_map(M::Big),
        ]
        .boxed()
    }

    /// Short strings over an alphabet with NUL, 0x01 and multi-byte characters.
    fn text_m() -> BoxedStrategy<M> {
        pvec(
            proptest::sample::select(vec!['\0', '\u{1}', 'a', 'b', 'ÿ', '\u{10FFFF}']),
            0..4,
        )
        .prop_map(|cs| M::Text(cs.into_iter().collect()))
        .boxed()
    }

    fn list_of(e: BoxedStrategy<M>, max: usize) -> BoxedStrategy<M> {
        pvec(e, 0..max).prop_map(M::Coll).boxed()
    }

    /// Sorted and distinct, as in a valid set value.
    fn set_of(e: BoxedStrategy<M>, max: usize) -> BoxedStrategy<M> {
        btree_set(e, 0..max)
            .prop_map(|s| M::Coll(s.into_iter().collect()))
            .boxed()
    }

    fn map_of(k: BoxedStrategy<M>, v: BoxedStrategy<M>, max: usize) -> BoxedStrategy<M> {
        btree_map(k, v, 0..max)
            .prop_map(|m| M::Map(m.into_iter().collect()))
            .boxed()
    }

    /// Up to `fields.len()` leading fields, each null or a value.
    fn tuple_of(fields: Vec<BoxedStrategy<M>>) -> BoxedStrategy<M> {
        let n = fields.len();
        let fields: Vec<_> = fields
            .into_iter()
            .map(|f| proptest::option::weighted(0.75, f))
            .collect();
        (fields, 0..=n)
            .prop_map(|(fs, len)| M::Tuple(fs.into_iter().take(len).collect()))
            .boxed()
    }

    /// The zero-byte value of a collection type, now and then.
    fn or_empty(s: BoxedStrategy<M>) -> BoxedStrategy<M> {
        prop_oneof![1 => Just(M::Empty), 12 => s].boxed()
    }

    /// The tested types with a strategy for their canonical values.
    fn cases() -> Vec<(CqlType, BoxedStrategy<M>)> {
        use CqlType::{Bigint, Int, Text};
        vec![
            (frozen(list(Int)), or_empty(list_of(int_m(), 5))),
            (frozen(set(Text)), or_empty(set_of(text_m(), 4))),
            (
                frozen(map(Int, Text)),
                or_empty(map_of(int_m(), text_m(), 4)),
            ),
            (
                CqlType::Tuple(vec![Int, Text, Bigint]),
                tuple_of(vec![int_m(), text_m(), big_m()]),
            ),
            (
                frozen(list(frozen(list(Int)))),
                or_empty(list_of(list_of(int_m(), 3), 4)),
            ),
            // Nested both ways, with non-frozen inner types as a frozen outer type
            // implies them.
            (
                frozen(map(
                    frozen(set(Int)),
                    CqlType::Tuple(vec![Text, list(Bigint)]),
                )),
                or_empty(map_of(
                    set_of(int_m(), 3),
                    tuple_of(vec![text_m(), list_of(big_m(), 3)]),
                    3,
                )),
            ),
        ]
    }

    /// Orders, round trips, prefix-freedom, and composite keys with a trailing `int`
    /// column and their prefixes, for all pairs of `vals`.
    fn check(ty: &CqlType, vals: &[M], ints: &[i32]) -> std::result::Result<(), TestCaseError> {
        let sers: Vec<Vec<u8>> = vals.iter().map(ser).collect();
        for order in [Order::Asc, Order::Desc] {
            let dir = |o: Ordering| if order == Order::Desc { o.reverse() } else { o };
            let l = layout(ty, order);
            let encs: Vec<ClusteringKey> =
                sers.iter().map(|s| l.encode_key(&[s]).unwrap()).collect();
            for (s, e) in sers.iter().zip(&encs) {
                prop_assert_eq!(
                    l.decode(e.as_bytes()).unwrap(),
                    vec![Bytes::from(s.clone())]
                );
            }
            for (i, (a, ea)) in vals.iter().zip(&encs).enumerate() {
                for (j, (b, eb)) in vals.iter().zip(&encs).enumerate() {
                    let want = a.cmp(b);
                    prop_assert_eq!(
                        types::compare(ty, &sers[i], &sers[j]),
                        want,
                        "compare_values {:?} vs {:?}",
                        a,
                        b
                    );
                    prop_assert_eq!(ea.cmp(eb), dir(want), "{:?} {:?} vs {:?}", order, a, b);
                    if ea != eb {
                        prop_assert!(!eb.as_bytes().starts_with(ea.as_bytes()));
                    }
                }
            }

            let l2 = ClusteringLayout::new(vec![(ty.clone(), order), (CqlType::Int, Order::Asc)]);
            let keys: Vec<(&M, &Vec<u8>, i32)> = vals
                .iter()
                .zip(&sers)
                .enumerate()
                .map(|(i, (m, s))| (m, s, ints[i % ints.len()]))
                .collect();
            let full: Vec<ClusteringKey> = keys
                .iter()
                .map(|(_, s, x)| l2.encode_key(&[s, &x.to_be_bytes()]).unwrap())
                .collect();
            for ((ma, sa, xa), ea) in keys.iter().zip(&full) {
                prop_assert_eq!(
                    l2.decode(ea.as_bytes()).unwrap(),
                    vec![
                        Bytes::from((*sa).clone()),
                        Bytes::copy_from_slice(&xa.to_be_bytes())
                    ]
                );
                let p = l2.encode_prefix(&[sa]).unwrap();
                prop_assert!(ea.as_bytes().starts_with(&p));
                prop_assert_eq!(l2.decode(&p).unwrap(), vec![Bytes::from((*sa).clone())]);
                prop_assert!(after_prefix(&p).as_ref() > ea.as_bytes());
                let range = ClusteringRange::prefix(&p);
                for ((mb, _, xb), eb) in keys.iter().zip(&full) {
                    let first = dir(ma.cmp(mb));
                    prop_assert_eq!(ea.cmp(eb), first.then(xa.cmp(xb)));
                    prop_assert_eq!(range.contains(eb.as_bytes()), first.is_eq());
                    if first.is_ne() {
                        prop_assert_eq!(p.as_slice().cmp(eb.as_bytes()), first);
                    }
                }
            }
        }
        Ok(())
    }

    fn strategy_for(i: usize) -> (CqlType, BoxedStrategy<M>) {
        cases().swap_remove(i)
    }

    /// A value of any of the tested types, with the index of its type.
    fn typed_value() -> impl Strategy<Value = (usize, M)> {
        (0..cases().len()).prop_flat_map(|i| (Just(i), strategy_for(i).1))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn prop_list_int(vals in pvec(strategy_for(0).1, 1..10), ints in pvec(-2i32..2, 1..4)) {
            check(&strategy_for(0).0, &vals, &ints)?;
        }

        #[test]
        fn prop_set_text(vals in pvec(strategy_for(1).1, 1..10), ints in pvec(-2i32..2, 1..4)) {
            check(&strategy_for(1).0, &vals, &ints)?;
        }

        #[test]
        fn prop_map_int_text(vals in pvec(strategy_for(2).1, 1..10), ints in pvec(-2i32..2, 1..4)) {
            check(&strategy_for(2).0, &vals, &ints)?;
        }

        #[test]
        fn prop_tuple_int_text_bigint(vals in pvec(strategy_for(3).1, 1..10), ints in pvec(-2i32..2, 1..4)) {
            check(&strategy_for(3).0, &vals, &ints)?;
        }

        #[test]
        fn prop_list_of_lists(vals in pvec(strategy_for(4).1, 1..10), ints in pvec(-2i32..2, 1..4)) {
            check(&strategy_for(4).0, &vals, &ints)?;
        }

        #[test]
        fn prop_map_of_sets_to_tuples(vals in pvec(strategy_for(5).1, 1..8), ints in pvec(-2i32..2, 1..4)) {
            check(&strategy_for(5).0, &vals, &ints)?;
        }

        /// Corrupted serializations: encoding fails exactly when validation does, never
        /// panics, and what encodes decodes to a value equal to the input.
        #[test]
        fn prop_malformed_values(
            (which, v) in typed_value(),
            mutation in 0..4u8,
            pos in any::<proptest::sample::Index>(),
            byte in any::<u8>(),
            junk in pvec(any::<u8>(), 0..24),
            desc: bool,
        ) {
            let ty = strategy_for(which).0;
            let mut bad = ser(&v);
            match mutation {
                0 if !bad.is_empty() => bad.truncate(pos.index(bad.len())),
                1 if !bad.is_empty() => { let i = pos.index(bad.len()); bad[i] ^= byte | 1; }
                2 => bad.extend_from_slice(&junk),
                _ => bad = junk.clone(),
            }
            let order = if desc { Order::Desc } else { Order::Asc };
            let l = layout(&ty, order);
            let enc = l.encode_key(&[&bad]);
            if !bad.is_empty() {
                prop_assert_eq!(enc.is_ok(), ty.validate(&bad).is_ok(), "{:02x?}", bad);
            }
            if let Ok(e) = enc {
                let back = l.decode(e.as_bytes()).unwrap();
                prop_assert_eq!(
                    types::compare(&ty, &back[0], &bad),
                    Ordering::Equal
                );
            }
            // compare_values never panics on garbage either.
            let _ = types::compare(&ty, &bad, &junk);
        }

        /// Corrupted encodings: decoding never panics, and whatever decodes re-encodes to
        /// the same bytes (these types have one encoding per value).
        #[test]
        fn prop_malformed_encodings(
            (which, v) in typed_value(),
            mutation in 0..4u8,
            pos in any::<proptest::sample::Index>(),
            byte in any::<u8>(),
            junk in pvec(any::<u8>(), 0..24),
            desc: bool,
        ) {
            let ty = strategy_for(which).0;
            let order = if desc { Order::Desc } else { Order::Asc };
            let l = layout(&ty, order);
            let mut bad = l.encode_key(&[&ser(&v)]).unwrap().0.to_vec();
            match mutation {
                0 => bad.truncate(pos.index(bad.len())),
                1 => { let i = pos.index(bad.len()); bad[i] ^= byte | 1; }
                2 => bad.extend_from_slice(&junk),
                _ => { bad = vec![COMPONENT_MARKER]; bad.extend_from_slice(&junk); }
            }
            if let Ok(back) = l.decode(&bad) {
                let refs: Vec<&[u8]> = back.iter().map(|b| b.as_ref()).collect();
                prop_assert_eq!(l.encode_prefix(&refs).unwrap(), bad);
            }
        }
    }

    fn ints(xs: &[i32]) -> Vec<u8> {
        ser(&M::Coll(xs.iter().map(|&x| M::Int(x)).collect()))
    }

    #[test]
    fn encoding_bytes() {
        let lt = frozen(list(CqlType::Int));
        let asc = layout(&lt, Order::Asc);
        let desc = layout(&lt, Order::Desc);
        let enc = |l: &ClusteringLayout, v: &[u8]| l.encode_key(&[v]).unwrap().0.to_vec();
        assert_eq!(enc(&asc, &[]), [COMPONENT_MARKER, TAG_EMPTY]);
        assert_eq!(enc(&asc, &ints(&[])), [COMPONENT_MARKER, ITEM_END]);
        assert_eq!(
            enc(&asc, &ints(&[1])),
            [
                COMPONENT_MARKER,
                ITEM_VALUE,
                TAG_VALUE,
                0x80,
                0,
                0,
                1,
                ITEM_END
            ]
        );
        assert_eq!(
            enc(&desc, &ints(&[1])),
            [
                COMPONENT_MARKER,
                !ITEM_VALUE,
                !TAG_VALUE,
                0x7F,
                0xFF,
                0xFF,
                0xFE,
                !ITEM_END
            ]
        );
        let tt = CqlType::Tuple(vec![CqlType::Int, CqlType::Text]);
        let t = ser(&M::Tuple(vec![Some(M::Int(1)), None]));
        assert_eq!(
            enc(&layout(&tt, Order::Asc), &t),
            [
                COMPONENT_MARKER,
                ITEM_VALUE,
                TAG_VALUE,
                0x80,
                0,
                0,
                1,
                ITEM_NULL,
                ITEM_END
            ]
        );
        assert_eq!(
            enc(&layout(&tt, Order::Asc), &[]),
            [COMPONENT_MARKER, ITEM_END]
        );
        let mt = frozen(map(CqlType::Text, CqlType::Int));
        let m = ser(&M::Map(vec![(M::Text("a".into()), M::Int(0))]));
        assert_eq!(
            enc(&layout(&mt, Order::Asc), &m),
            [
                COMPONENT_MARKER,
                ITEM_VALUE,
                b'a',
                0,
                0,
                TAG_VALUE,
                0x80,
                0,
                0,
                0,
                ITEM_END
            ]
        );
    }

    #[test]
    fn cassandra_examples() {
        let lt = frozen(list(CqlType::Int));
        let l = layout(&lt, Order::Asc);
        let sorted = [
            Vec::new(),
            ints(&[]),
            ints(&[-5]),
            ints(&[1, 2]),
            ints(&[1, 2, 0]),
            ints(&[1, 3]),
            ints(&[2]),
        ];
        for w in sorted.windows(2) {
            assert!(l.encode_key(&[&w[0]]).unwrap() < l.encode_key(&[&w[1]]).unwrap());
            assert_eq!(types::compare(&lt, &w[0], &w[1]), Ordering::Less);
        }
        // (1) < (1, null) < (1, '') < (1, 'a') < (2)
        let tt = CqlType::Tuple(vec![CqlType::Int, CqlType::Text]);
        let l = layout(&tt, Order::Asc);
        let one = Some(M::Int(1));
        let sorted = [
            M::Tuple(vec![]),
            M::Tuple(vec![None]),
            M::Tuple(vec![None, Some(M::Text("z".into()))]),
            M::Tuple(vec![one.clone()]),
            M::Tuple(vec![one.clone(), None]),
            M::Tuple(vec![one.clone(), Some(M::Text(String::new()))]),
            M::Tuple(vec![one, Some(M::Text("a".into()))]),
            M::Tuple(vec![Some(M::Int(2))]),
        ]
        .map(|m| ser(&m));
        for w in sorted.windows(2) {
            assert!(l.encode_key(&[&w[0]]).unwrap() < l.encode_key(&[&w[1]]).unwrap());
            assert_eq!(types::compare(&tt, &w[0], &w[1]), Ordering::Less);
        }
    }

    /// Elements Cassandra's comparators consider equal encode alike and decode to their
    /// canonical form, inside collections and tuples too.
    #[test]
    fn non_canonical_elements_normalise() {
        let coll = |es: &[&[u8]]| {
            let mut out = (es.len() as i32).to_be_bytes().to_vec();
            es.iter().for_each(|e| framed(Some(e), &mut out));
            out
        };
        let entry = |k: &[u8], v: &[u8]| {
            let mut out = 1i32.to_be_bytes().to_vec();
            framed(Some(k), &mut out);
            framed(Some(v), &mut out);
            out
        };
        let tup = |fs: &[Option<&[u8]>]| {
            let mut out = Vec::new();
            fs.iter().for_each(|f| framed(*f, &mut out));
            out
        };
        let cases: Vec<(CqlType, Vec<u8>, Vec<u8>)> = vec![
            (
                frozen(list(CqlType::Decimal)),
                coll(&[&[0, 0, 0, 1, 10], &[0, 0, 0, 7, 0]]),
                coll(&[&[0, 0, 0, 0, 1], &[0, 0, 0, 0, 0]]),
            ),
            (
                frozen(set(CqlType::Varint)),
                coll(&[&[0xFF, 0xFF], &[0, 0, 1]]),
                coll(&[&[0xFF], &[1]]),
            ),
            (
                frozen(map(CqlType::Boolean, CqlType::Double)),
                entry(&[2], &0xFFF0_0000_0000_0001u64.to_be_bytes()),
                entry(&[1], &f64::NAN.to_be_bytes()),
            ),
            (
                CqlType::Tuple(vec![CqlType::Int, frozen(list(CqlType::Varint))]),
                tup(&[None, Some(&coll(&[&[0, 0x7F]]))]),
                tup(&[None, Some(&coll(&[&[0x7F]]))]),
            ),
        ];
        for (ty, raw, canonical) in cases {
            assert!(ty.validate(&raw).is_ok(), "{ty}");
            assert_eq!(
                types::compare(&ty, &raw, &canonical),
                Ordering::Equal,
                "{ty}"
            );
            for order in [Order::Asc, Order::Desc] {
                let l = layout(&ty, order);
                let e = l.encode_key(&[&raw]).unwrap();
                assert_eq!(e, l.encode_key(&[&canonical]).unwrap(), "{ty}");
                assert_eq!(
                    l.decode(e.as_bytes()).unwrap(),
                    vec![Bytes::from(canonical.clone())]
                );
            }
        }
    }

    #[test]
    fn invalid_composites_are_rejected() {
        let lt = frozen(list(CqlType::Int));
        let l = layout(&lt, Order::Asc);
        let mut null_elem = 1i32.to_be_bytes().to_vec();
        null_elem.extend_from_slice(&(-1i32).to_be_bytes());
        for bad in [
            vec![0, 0, 0],
            vec![0, 0, 0, 1],
            vec![0xFF, 0xFF, 0xFF, 0xFF],
            null_elem,
            coll_with_len(3),
            [ints(&[1]), vec![0]].concat(),
            vec![0x7F, 0xFF, 0xFF, 0xFF, 0, 0, 0, 4],
        ] {
            assert!(l.encode_key(&[&bad]).is_err(), "{bad:02x?}");
        }
        // Too many tuple fields; a text field that is not UTF-8.
        let tt = CqlType::Tuple(vec![CqlType::Int]);
        let two = ser(&M::Tuple(vec![None, None]));
        assert!(layout(&tt, Order::Asc).encode_key(&[&two]).is_err());
        let tt = CqlType::Tuple(vec![CqlType::Text]);
        let mut bad_text = 1i32.to_be_bytes().to_vec();
        bad_text.push(0xFF);
        assert!(layout(&tt, Order::Asc).encode_key(&[&bad_text]).is_err());
        // Empty values nested where their type refuses them: an empty inner list, an
        // empty date.
        let nested = frozen(list(frozen(list(CqlType::Int))));
        let with_empty = ser(&M::Coll(vec![M::Empty]));
        assert!(layout(&nested, Order::Asc)
            .encode_key(&[&with_empty])
            .is_err());
        let dates = frozen(set(CqlType::Date));
        assert!(layout(&dates, Order::Asc)
            .encode_key(&[&with_empty])
            .is_err());
        // The same, forged as encodings: decoding refuses them.
        let forged = [COMPONENT_MARKER, ITEM_VALUE, TAG_EMPTY, ITEM_END];
        assert!(layout(&nested, Order::Asc).decode(&forged).is_err());
        assert!(layout(&dates, Order::Asc).decode(&forged).is_err());
        // A tuple encoding with more fields than the type; a null in a list.
        let forged = [COMPONENT_MARKER, ITEM_NULL, ITEM_NULL, ITEM_END];
        assert!(layout(&tt, Order::Asc).decode(&forged).is_err());
        assert!(l.decode(&[COMPONENT_MARKER, ITEM_NULL, ITEM_END]).is_err());
        // Missing end marker.
        assert!(l
            .decode(&[COMPONENT_MARKER, ITEM_VALUE, TAG_EMPTY])
            .is_err());
    }

    fn coll_with_len(n: i32) -> Vec<u8> {
        let mut v = 1i32.to_be_bytes().to_vec();
        v.extend_from_slice(&n.to_be_bytes());
        v.extend_from_slice(&[1, 2]);
        v
    }
}
