//! Cassandra 5.0's masking functions (CEP-20, its `functions/masking/`): native scalar
//! functions usable in any selection, and the functions a column mask
//! (`MASKED WITH mask_inner(1, 1)`) partially applies to the column's values.
//!
//! | function | parameters | result |
//! | --- | --- | --- |
//! | `mask_null(v)` | any type | always null |
//! | `mask_default(v)` | any type | the type's masked value, even for a null `v`: `****` for text and ascii, zero for numbers, `false`, `1970-01-01`, empty blobs and collections, tuples and user types of their components' masked values ([`masked_value`]) |
//! | `mask_replace(v, r)` | any type, then the same type | `r` |
//! | `mask_inner(v, begin, end[, pad])` | text or ascii, int, int, text | `v` with every character but the first `begin` and last `end` replaced by `pad` (`*`) |
//! | `mask_outer(v, begin, end[, pad])` | as `mask_inner` | `v` with only the first `begin` and last `end` characters replaced |
//! | `mask_hash(v[, algorithm])` | any type, text | a `blob`: the digest of `v`'s serialized bytes (`SHA-256` by default; Java's `MessageDigest` names, case-insensitive) |
//!
//! Each takes any type of its kind as first argument: the signature is made from that
//! argument's type, as Cassandra's function factories make one per argument type
//! ([`signature`], resolved by [`super::fit`]). Unlike other functions a null argument does
//! not make the result null: [`apply`] gets every argument as an `Option` (a null `begin` or
//! `end` counts as 0, a null padding or algorithm is the default one).
//!
//! Characters are Java's: `mask_inner` and `mask_outer` count UTF-16 code units (a character
//! outside the BMP is two), a lone surrogate left unmasked is written `?`, and an `ascii`
//! result writes `?` for any non-ASCII padding, as Java's encoders do.

use super::error::{ValueError, ValueResult};
use super::functions::Signature;
use super::temporal;
use bytes::Bytes;
use cairn_engine::model::types::framing::{build_collection, build_tuple};
use cairn_engine::model::types::{unfrozen, CqlType};
use cairn_engine::schema::ColumnMask;
use sha2::Digest;

/// The masking functions' names, in Cassandra's order.
pub const NAMES: [&str; 6] = [
    "mask_null",
    "mask_default",
    "mask_replace",
    "mask_inner",
    "mask_outer",
    "mask_hash",
];

/// Whether `name` (lowercased, unqualified) is a masking function.
pub fn is_masking_fn(name: &str) -> bool {
    NAMES.contains(&name)
}

/// The parameters as Cassandra lists them in its arity refusal
/// (`Invalid number of arguments for function system.mask_inner(…)`).
pub fn parameters(name: &str) -> &'static str {
    match name {
        "mask_replace" => "any, any",
        "mask_inner" | "mask_outer" => "[text|varchar|ascii], int, int, [text]",
        "mask_hash" => "any, [text]",
        _ => "any",
    }
}

/// Whether the function takes `n` arguments (optional trailing ones included).
pub fn takes(name: &str, n: usize) -> bool {
    match name {
        "mask_replace" => n == 2,
        "mask_inner" | "mask_outer" => n == 3 || n == 4,
        "mask_hash" => n == 1 || n == 2,
        _ => n == 1,
    }
}

/// The arity refusal.
pub fn arity_error(name: &str) -> ValueError {
    ValueError::invalid(format!(
        "Invalid number of arguments for function system.{name}({})",
        parameters(name)
    ))
}

/// How a parameter after the first is typed: `Fixed` ones are refused with Cassandra's
/// "requires an argument of type" text, `SameAsFirst` (`mask_replace`'s replacement) with
/// the ordinary "Type error" one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Param {
    Fixed(CqlType),
    SameAsFirst(CqlType),
}

impl Param {
    pub fn ty(&self) -> &CqlType {
        match self {
            Param::Fixed(t) | Param::SameAsFirst(t) => t,
        }
    }
}

/// The types of the parameters after the first for a first argument of type `first`
/// (written `first_text`), `n` arguments in all; refuses a first argument the function does
/// not take.
pub fn rest_params(
    name: &str,
    first: &CqlType,
    first_text: &str,
    n: usize,
) -> ValueResult<Vec<Param>> {
    let rest = n.saturating_sub(1);
    Ok(match name {
        "mask_replace" => vec![Param::SameAsFirst(first.clone()); rest],
        "mask_inner" | "mask_outer" => {
            if !matches!(unfrozen(first), CqlType::Text | CqlType::Ascii) {
                return Err(ValueError::invalid(format!(
                    "Function system.{name} requires an argument of type [text|varchar|ascii], but found argument {first_text} of type {}",
                    first.name()
                )));
            }
            [CqlType::Int, CqlType::Int, CqlType::Text]
                .into_iter()
                .take(rest)
                .map(Param::Fixed)
                .collect()
        }
        "mask_hash" => vec![Param::Fixed(CqlType::Text); rest.min(1)],
        _ => Vec::new(),
    })
}

/// The refusal of argument `text` (of type `own`, its type of its own) for fixed parameter
/// type `want`.
pub fn fixed_param_error(name: &str, want: &CqlType, text: &str, own: &CqlType) -> ValueError {
    ValueError::invalid(format!(
        "Function system.{name} requires an argument of type {}, but found argument {text} of type {}",
        want.name(),
        own.name()
    ))
}

/// The signature for a first argument of type `first` and the given later parameters.
pub fn signature(name: &str, first: &CqlType, rest: &[Param]) -> Signature {
    let mut args = Vec::with_capacity(rest.len() + 1);
    args.push(first.clone());
    args.extend(rest.iter().map(|p| p.ty().clone()));
    let ret = if name == "mask_hash" {
        CqlType::Blob
    } else {
        first.clone()
    };
    Signature { args, ret }
}

/// Checks a constant argument at position `index` before any row, as Cassandra does when it
/// prepares the call: a padding of one character, a known hash algorithm.
pub fn check_constant(name: &str, index: usize, value: Option<&[u8]>) -> ValueResult<()> {
    let Some(v) = value else {
        return Ok(());
    };
    match (name, index) {
        ("mask_inner" | "mask_outer", 3) => padding(name, v).map(|_| ()),
        ("mask_hash", 1) => algorithm(v).map(|_| ()),
        _ => Ok(()),
    }
}

/// Runs masking function `name` (resolved to `sig`) on its arguments (`None` = null).
pub fn apply(name: &str, sig: &Signature, args: &[Option<Bytes>]) -> ValueResult<Option<Bytes>> {
    let arg = |i: usize| args.get(i).cloned().flatten();
    let first_ty = sig.args.first().unwrap_or(&sig.ret);
    match name {
        "mask_null" => Ok(None),
        "mask_default" => Ok(Some(masked_value(first_ty))),
        "mask_replace" => Ok(arg(1)),
        "mask_inner" | "mask_outer" => {
            let Some(v) = arg(0) else {
                return Ok(None);
            };
            let int = |i: usize| -> ValueResult<i32> {
                match arg(i) {
                    None => Ok(0),
                    Some(b) => b
                        .as_ref()
                        .try_into()
                        .map(i32::from_be_bytes)
                        .map_err(|_| ValueError::marshal("Expected 4 bytes for an int value")),
                }
            };
            let (begin, end) = (int(1)?, int(2)?);
            let pad = match arg(3) {
                Some(p) => padding(name, &p)?,
                None => '*' as u16,
            };
            let text = std::str::from_utf8(&v)
                .map_err(|_| ValueError::marshal("String didn't validate."))?;
            let masked = partial_mask(text, begin, end, pad, name == "mask_inner");
            let ascii = matches!(unfrozen(first_ty), CqlType::Ascii);
            Ok(Some(Bytes::from(java_encode(&masked, ascii))))
        }
        "mask_hash" => {
            let algo = match arg(1) {
                Some(a) => algorithm(&a)?,
                None => Algorithm::Sha256,
            };
            Ok(arg(0).map(|v| Bytes::from(algo.digest(&v))))
        }
        _ => Err(ValueError::invalid(format!(
            "Unknown function {name} called"
        ))),
    }
}

/// A value of a column of type `ty` as the column's mask (a masking function partially
/// applied, as the schema keeps it) shows it.
pub fn apply_column_mask(
    mask: &ColumnMask,
    ty: &CqlType,
    value: Option<Bytes>,
) -> ValueResult<Option<Bytes>> {
    let rest: Vec<Param> = mask
        .args
        .iter()
        .map(|(t, _)| Param::Fixed(t.clone()))
        .collect();
    let mut args = Vec::with_capacity(mask.args.len() + 1);
    args.push(value);
    args.extend(mask.args.iter().map(|(_, v)| v.clone().map(Bytes::from)));
    apply(&mask.function, &signature(&mask.function, ty, &rest), &args)
}

/// The padding character (one UTF-16 unit, as Java's `char`), or Cassandra's refusal.
fn padding(name: &str, v: &[u8]) -> ValueResult<u16> {
    let text =
        std::str::from_utf8(v).map_err(|_| ValueError::marshal("String didn't validate."))?;
    let units: Vec<u16> = text.encode_utf16().collect();
    match units.as_slice() {
        [one] => Ok(*one),
        _ => Err(ValueError::invalid(format!(
            "The padding argument for function system.{name} should be single-character, but '{text}' has {} characters.",
            units.len()
        ))),
    }
}

/// Cassandra's `PartialMaskingFunction.Kind.mask` on UTF-16 units (Java's int arithmetic
/// kept: `size - 1 - end` wraps as Java's does).
fn partial_mask(value: &str, begin: i32, end: i32, pad: u16, inner: bool) -> Vec<u16> {
    let units: Vec<u16> = value.encode_utf16().collect();
    let size = i32::try_from(units.len()).unwrap_or(i32::MAX);
    let end_index = size.wrapping_sub(1).wrapping_sub(end);
    units
        .iter()
        .enumerate()
        .map(|(i, u)| {
            let pos = i32::try_from(i).unwrap_or(i32::MAX);
            let mask = if inner {
                pos >= begin && pos <= end_index
            } else {
                pos < begin || pos > end_index
            };
            if mask {
                pad
            } else {
                *u
            }
        })
        .collect()
}

/// UTF-16 units to bytes as Java's encoders write them: a lone surrogate is `?`; for
/// `ascii`, any non-ASCII character is `?`.
fn java_encode(units: &[u16], ascii: bool) -> Vec<u8> {
    let text: String = char::decode_utf16(units.iter().copied())
        .map(|c| match c {
            Ok(c) if !ascii || c.is_ascii() => c,
            _ => '?',
        })
        .collect();
    text.into_bytes()
}

/// The digest algorithms Java's default providers offer, by Java's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Algorithm {
    Md2,
    Md5,
    Sha1,
    Sha224,
    Sha256,
    Sha384,
    Sha512,
    Sha512_224,
    Sha512_256,
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
}

/// The algorithm named `v` (Java's names and aliases, case-insensitive), or Cassandra's
/// refusal.
fn algorithm(v: &[u8]) -> ValueResult<Algorithm> {
    let text = String::from_utf8_lossy(v);
    Ok(match text.to_ascii_uppercase().as_str() {
        "MD2" => Algorithm::Md2,
        "MD5" => Algorithm::Md5,
        "SHA-1" | "SHA1" | "SHA" => Algorithm::Sha1,
        "SHA-224" | "SHA224" => Algorithm::Sha224,
        "SHA-256" | "SHA256" => Algorithm::Sha256,
        "SHA-384" | "SHA384" => Algorithm::Sha384,
        "SHA-512" | "SHA512" => Algorithm::Sha512,
        "SHA-512/224" | "SHA512/224" => Algorithm::Sha512_224,
        "SHA-512/256" | "SHA512/256" => Algorithm::Sha512_256,
        "SHA3-224" => Algorithm::Sha3_224,
        "SHA3-256" => Algorithm::Sha3_256,
        "SHA3-384" => Algorithm::Sha3_384,
        "SHA3-512" => Algorithm::Sha3_512,
        _ => {
            return Err(ValueError::invalid(format!(
                "Hash algorithm not found: {text}"
            )))
        }
    })
}

impl Algorithm {
    fn digest(self, v: &[u8]) -> Vec<u8> {
        match self {
            Algorithm::Md2 => md2::Md2::digest(v).to_vec(),
            Algorithm::Md5 => md5::Md5::digest(v).to_vec(),
            Algorithm::Sha1 => sha1::Sha1::digest(v).to_vec(),
            Algorithm::Sha224 => sha2::Sha224::digest(v).to_vec(),
            Algorithm::Sha256 => sha2::Sha256::digest(v).to_vec(),
            Algorithm::Sha384 => sha2::Sha384::digest(v).to_vec(),
            Algorithm::Sha512 => sha2::Sha512::digest(v).to_vec(),
            Algorithm::Sha512_224 => sha2::Sha512_224::digest(v).to_vec(),
            Algorithm::Sha512_256 => sha2::Sha512_256::digest(v).to_vec(),
            Algorithm::Sha3_224 => sha3::Sha3_224::digest(v).to_vec(),
            Algorithm::Sha3_256 => sha3::Sha3_256::digest(v).to_vec(),
            Algorithm::Sha3_384 => sha3::Sha3_384::digest(v).to_vec(),
            Algorithm::Sha3_512 => sha3::Sha3_512::digest(v).to_vec(),
        }
    }
}

/// A type's masked value (Cassandra's `AbstractType.getMaskedValue`), serialized.
pub fn masked_value(ty: &CqlType) -> Bytes {
    use CqlType as T;
    let zeros = |n: usize| Bytes::from(vec![0u8; n]);
    match ty {
        T::Ascii | T::Text => Bytes::from_static(b"****"),
        T::Boolean | T::Tinyint => zeros(1),
        T::Smallint => zeros(2),
        T::Int | T::Float | T::Inet => zeros(4),
        T::Bigint | T::Counter | T::Double | T::Timestamp | T::Time => zeros(8),
        T::Varint => zeros(1),
        // Scale 0, unscaled value 0.
        T::Decimal => zeros(5),
        // Months, days, nanoseconds: three zero vints.
        T::Duration => zeros(3),
        // 1970-01-01: day 0, stored offset by 2³¹.
        T::Date => Bytes::copy_from_slice(&(1u32 << 31).to_be_bytes()),
        T::Blob => Bytes::new(),
        T::Uuid => zeros(16),
        T::Timeuuid => Bytes::copy_from_slice(&temporal::min_timeuuid(0)),
        T::List(_) | T::Set(_) | T::Map(..) => Bytes::from(build_collection::<&[u8]>(&[])),
        T::Tuple(components) => tuple_of(components),
        T::Udt(u) => tuple_of(&u.field_types),
        T::Frozen(inner) => masked_value(inner),
    }
}

fn tuple_of(types: &[CqlType]) -> Bytes {
    let values: Vec<Option<Bytes>> = types.iter().map(|t| Some(masked_value(t))).collect();
    Bytes::from(build_tuple(&values))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn text(s: &str) -> Option<Bytes> {
        Some(Bytes::copy_from_slice(s.as_bytes()))
    }

    fn int(i: i32) -> Option<Bytes> {
        Some(Bytes::copy_from_slice(&i.to_be_bytes()))
    }

    fn run(name: &str, first: CqlType, args: &[Option<Bytes>]) -> ValueResult<Option<Bytes>> {
        let rest = rest_params(name, &first, "v", args.len()).unwrap();
        apply(name, &signature(name, &first, &rest), args)
    }

    fn masked(name: &str, args: &[Option<Bytes>]) -> String {
        let out = run(name, CqlType::Text, args).unwrap().unwrap();
        String::from_utf8(out.to_vec()).unwrap()
    }

    #[test]
    fn inner_and_outer_count_java_characters() {
        assert_eq!(
            masked("mask_inner", &[text("hello"), int(1), int(1)]),
            "h***o"
        );
        assert_eq!(
            masked("mask_outer", &[text("hello"), int(1), int(2)]),
            "*el**"
        );
        assert_eq!(masked("mask_inner", &[text("hello"), None, None]), "*****");
        assert_eq!(
            masked("mask_inner", &[text("hello"), int(-1), int(1)]),
            "****o"
        );
        assert_eq!(
            masked("mask_outer", &[text("hello"), int(10), int(10)]),
            "*****"
        );
        assert_eq!(
            masked("mask_inner", &[text("hello"), int(i32::MAX), int(i32::MAX)]),
            "hello"
        );
        assert_eq!(
            masked("mask_inner", &[text("hello"), int(1), int(1), text("#")]),
            "h###o"
        );
        assert_eq!(masked("mask_inner", &[text(""), int(1), int(1)]), "");
        // '😀' is two UTF-16 units; the one left unmasked is written '?'.
        assert_eq!(
            masked("mask_inner", &[text("héllo😀x"), int(1), int(1)]),
            "h******x"
        );
        assert_eq!(
            masked("mask_outer", &[text("héllo😀x"), int(2), int(2)]),
            "**llo?**"
        );
        assert_eq!(
            run("mask_inner", CqlType::Text, &[None, int(1), int(1)]).unwrap(),
            None
        );
    }

    #[test]
    fn ascii_results_write_non_ascii_padding_as_question_marks() {
        let out = run(
            "mask_inner",
            CqlType::Ascii,
            &[text("abc"), int(1), int(1), text("é")],
        );
        assert_eq!(out.unwrap(), text("a?c"));
    }

    #[test]
    fn padding_must_be_one_character() {
        let err = run(
            "mask_inner",
            CqlType::Text,
            &[text("abc"), int(1), int(1), text("ab")],
        );
        assert_eq!(
            err.unwrap_err().to_string(),
            "The padding argument for function system.mask_inner should be single-character, but 'ab' has 2 characters."
        );
        assert!(check_constant("mask_outer", 3, Some(b"")).is_err());
        assert!(check_constant("mask_outer", 3, Some("é".as_bytes())).is_ok());
    }

    #[test]
    fn hash_defaults_to_sha256_and_knows_javas_names() {
        let sha256 = run("mask_hash", CqlType::Text, &[text("hello")])
            .unwrap()
            .unwrap();
        assert_eq!(
            sha256
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>(),
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        let md5 = run("mask_hash", CqlType::Text, &[text("hello"), text("md5")])
            .unwrap()
            .unwrap();
        assert_eq!(
            md5.iter().map(|b| format!("{b:02x}")).collect::<String>(),
            "5d41402abc4b2a76b9719d911017c592"
        );
        let null_algo = run("mask_hash", CqlType::Text, &[text("hello"), None]).unwrap();
        assert_eq!(null_algo, Some(sha256));
        assert_eq!(run("mask_hash", CqlType::Text, &[None]).unwrap(), None);
        let err = run("mask_hash", CqlType::Text, &[text("x"), text("NOPE")]).unwrap_err();
        assert_eq!(err.to_string(), "Hash algorithm not found: NOPE");
        for name in ["SHA", "SHA-224", "SHA384", "sha-512/256", "SHA3-512", "MD2"] {
            assert!(algorithm(name.as_bytes()).is_ok(), "{name}");
        }
    }

    #[test]
    fn default_null_and_replace() {
        assert_eq!(
            run("mask_default", CqlType::Text, &[None]).unwrap(),
            text("****")
        );
        assert_eq!(
            run("mask_default", CqlType::Int, &[int(7)]).unwrap(),
            int(0)
        );
        assert_eq!(run("mask_null", CqlType::Int, &[int(7)]).unwrap(), None);
        assert_eq!(
            run("mask_replace", CqlType::Int, &[int(7), int(3)]).unwrap(),
            int(3)
        );
        assert_eq!(
            run("mask_replace", CqlType::Int, &[int(7), None]).unwrap(),
            None
        );
    }

    #[test]
    fn masked_values_follow_cassandra() {
        use CqlType as T;
        assert_eq!(masked_value(&T::Date), Bytes::from_static(&[0x80, 0, 0, 0]));
        assert_eq!(
            masked_value(&T::Decimal),
            Bytes::from_static(&[0, 0, 0, 0, 0])
        );
        assert_eq!(
            masked_value(&T::List(Box::new(T::Int))),
            Bytes::from_static(&[0, 0, 0, 0])
        );
        let tuple = masked_value(&T::Tuple(vec![T::Int, T::Text]));
        assert_eq!(
            &tuple[..],
            &[0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 4, b'*', b'*', b'*', b'*']
        );
        assert_eq!(
            &masked_value(&T::Timeuuid)[..],
            &[
                0x13, 0x81, 0x40, 0, 0x1d, 0xd2, 0x11, 0xb2, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                0x80, 0x80
            ]
        );
    }

    #[test]
    fn first_argument_and_arity_refusals() {
        let err = rest_params("mask_inner", &CqlType::Int, "i", 3).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Function system.mask_inner requires an argument of type [text|varchar|ascii], but found argument i of type int"
        );
        assert!(takes("mask_inner", 4) && !takes("mask_inner", 2));
        assert_eq!(
            arity_error("mask_hash").to_string(),
            "Invalid number of arguments for function system.mask_hash(any, [text])"
        );
    }
}
