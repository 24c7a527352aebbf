//! The notations of the native protocol (spec §3): `[int]`, `[long]`, `[short]`, `[string]`,
//! `[long string]`, `[uuid]`, `[string list]`, `[bytes]`, `[value]`, `[short bytes]`,
//! `[option]`-style ids, `[inet]`, `[inetaddr]`, `[consistency]`, `[string map]`,
//! `[string multimap]` and `[bytes map]`.
//!
//! Invariants:
//! * [`Reader`] never panics and never allocates more than the bytes it has actually been
//!   given: every declared length or element count is checked against the remaining input
//!   before anything is reserved, so a frame declaring a 2 GiB string or a 65535-entry map
//!   in a 10-byte body costs nothing but an error.
//! * Byte payloads (`[bytes]`, `[value]`, `[short bytes]`) are returned as [`Bytes`] slices
//!   of the frame body (a reference-count bump, no copy).
//! * Writers are infallible appends to a `Vec<u8>`; a length that does not fit its notation
//!   (a `[string]` over 65535 bytes, a list over 65535 entries) is cut to the representable
//!   maximum rather than written with a wrong prefix, so the output always parses.

use bytes::Bytes;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Why a body could not be decoded. Always maps to a PROTOCOL_ERROR (0x000A) response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("not enough bytes to read {what}: need {need}, have {have}")]
    Truncated {
        what: &'static str,
        need: usize,
        have: usize,
    },
    #[error("invalid {what}: {detail}")]
    Invalid { what: &'static str, detail: String },
}

impl DecodeError {
    pub(crate) fn invalid(what: &'static str, detail: impl Into<String>) -> Self {
        DecodeError::Invalid {
            what,
            detail: detail.into(),
        }
    }
}

/// Result of decoding.
pub type DecodeResult<T> = Result<T, DecodeError>;

/// A `[value]`: bytes, null (length -1) or not set (length -2, v4+).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Null,
    Unset,
    Bytes(Bytes),
}

/// The `[consistency]` levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum Consistency {
    Any = 0x0000,
    One = 0x0001,
    Two = 0x0002,
    Three = 0x0003,
    Quorum = 0x0004,
    All = 0x0005,
    LocalQuorum = 0x0006,
    EachQuorum = 0x0007,
    Serial = 0x0008,
    LocalSerial = 0x0009,
    LocalOne = 0x000A,
}

impl Consistency {
    /// Decodes the `[short]` code.
    pub fn from_code(code: u16) -> DecodeResult<Self> {
        use Consistency::*;
        Ok(match code {
            0x0000 => Any,
            0x0001 => One,
            0x0002 => Two,
            0x0003 => Three,
            0x0004 => Quorum,
            0x0005 => All,
            0x0006 => LocalQuorum,
            0x0007 => EachQuorum,
            0x0008 => Serial,
            0x0009 => LocalSerial,
            0x000A => LocalOne,
            other => {
                return Err(DecodeError::invalid(
                    "consistency",
                    format!("unknown code 0x{other:04x}"),
                ))
            }
        })
    }

    /// The wire code.
    pub fn code(self) -> u16 {
        self as u16
    }

    /// The name Cassandra prints (`LOCAL_QUORUM`).
    pub fn name(self) -> &'static str {
        use Consistency::*;
        match self {
            Any => "ANY",
            One => "ONE",
            Two => "TWO",
            Three => "THREE",
            Quorum => "QUORUM",
            All => "ALL",
            LocalQuorum => "LOCAL_QUORUM",
            EachQuorum => "EACH_QUORUM",
            Serial => "SERIAL",
            LocalSerial => "LOCAL_SERIAL",
            LocalOne => "LOCAL_ONE",
        }
    }
}

/// A cursor over a frame body. Every read checks bounds and returns an error.
#[derive(Debug, Clone)]
pub struct Reader {
    buf: Bytes,
    pos: usize,
}

impl Reader {
    /// Reads from `buf` (cheap: `Bytes` is reference counted).
    pub fn new(buf: Bytes) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Reads from a borrowed slice (copies it once).
    pub fn from_slice(buf: &[u8]) -> Self {
        Reader::new(Bytes::copy_from_slice(buf))
    }

    /// Bytes not yet consumed.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Whether everything was consumed.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    fn take(&mut self, n: usize, what: &'static str) -> DecodeResult<Bytes> {
        if n > self.remaining() {
            return Err(DecodeError::Truncated {
                what,
                need: n,
                have: self.remaining(),
            });
        }
        let out = self.buf.slice(self.pos..self.pos + n);
        self.pos += n;
        Ok(out)
    }

    fn take_array<const N: usize>(&mut self, what: &'static str) -> DecodeResult<[u8; N]> {
        if N > self.remaining() {
            return Err(DecodeError::Truncated {
                what,
                need: N,
                have: self.remaining(),
            });
        }
        let mut out = [0u8; N];
        out.copy_from_slice(&self.buf[self.pos..self.pos + N]);
        self.pos += N;
        Ok(out)
    }

    /// Checks that `count` elements of at least `min_size` bytes each can still follow, so a
    /// huge declared count is refused before anything is reserved.
    fn check_count(&self, count: usize, min_size: usize, what: &'static str) -> DecodeResult<()> {
        let need = count.saturating_mul(min_size);
        if need > self.remaining() {
            return Err(DecodeError::Truncated {
                what,
                need,
                have: self.remaining(),
            });
        }
        Ok(())
    }

    /// Everything not consumed yet.
    pub fn read_rest(&mut self) -> Bytes {
        let out = self.buf.slice(self.pos..);
        self.pos = self.buf.len();
        out
    }

    /// Skips `n` bytes.
    pub fn skip(&mut self, n: usize) -> DecodeResult<()> {
        self.take(n, "skipped bytes").map(|_| ())
    }

    /// `[byte]`.
    pub fn read_byte(&mut self) -> DecodeResult<u8> {
        Ok(self.take_array::<1>("byte")?[0])
    }

    /// `[short]` (unsigned).
    pub fn read_short(&mut self) -> DecodeResult<u16> {
        Ok(u16::from_be_bytes(self.take_array("short")?))
    }

    /// `[int]`.
    pub fn read_int(&mut self) -> DecodeResult<i32> {
        Ok(i32::from_be_bytes(self.take_array("int")?))
    }

    /// `[long]`.
    pub fn read_long(&mut self) -> DecodeResult<i64> {
        Ok(i64::from_be_bytes(self.take_array("long")?))
    }

    /// `[uuid]`.
    pub fn read_uuid(&mut self) -> DecodeResult<[u8; 16]> {
        self.take_array("uuid")
    }

    fn utf8(bytes: Bytes, what: &'static str) -> DecodeResult<String> {
        String::from_utf8(bytes.to_vec()).map_err(|e| DecodeError::invalid(what, e.to_string()))
    }

    /// `[string]`.
    pub fn read_string(&mut self) -> DecodeResult<String> {
        let n = self.read_short()? as usize;
        let b = self.take(n, "string")?;
        Self::utf8(b, "string")
    }

    /// `[long string]`.
    pub fn read_long_string(&mut self) -> DecodeResult<String> {
        let n = self.read_int()?;
        if n < 0 {
            return Err(DecodeError::invalid(
                "long string",
                format!("negative length {n}"),
            ));
        }
        let b = self.take(n as usize, "long string")?;
        Self::utf8(b, "long string")
    }

    /// `[string list]`.
    pub fn read_string_list(&mut self) -> DecodeResult<Vec<String>> {
        let n = self.read_short()? as usize;
        self.check_count(n, 2, "string list")?;
        (0..n).map(|_| self.read_string()).collect()
    }

    /// `[bytes]`: `None` is null (any negative length).
    pub fn read_bytes(&mut self) -> DecodeResult<Option<Bytes>> {
        let n = self.read_int()?;
        if n < 0 {
            return Ok(None);
        }
        self.take(n as usize, "bytes").map(Some)
    }

    /// `[value]`: -1 null, -2 not set, other negatives an error.
    pub fn read_value(&mut self) -> DecodeResult<Value> {
        let n = self.read_int()?;
        match n {
            -1 => Ok(Value::Null),
            -2 => Ok(Value::Unset),
            n if n < 0 => Err(DecodeError::invalid("value", format!("length {n}"))),
            n => self.take(n as usize, "value").map(Value::Bytes),
        }
    }

    /// `[short bytes]`.
    pub fn read_short_bytes(&mut self) -> DecodeResult<Bytes> {
        let n = self.read_short()? as usize;
        self.take(n, "short bytes")
    }

    /// `[inetaddr]`: one byte size (4 or 16) and the address.
    pub fn read_inetaddr(&mut self) -> DecodeResult<IpAddr> {
        match self.read_byte()? {
            4 => Ok(IpAddr::V4(Ipv4Addr::from(
                self.take_array::<4>("inetaddr")?,
            ))),
            16 => Ok(IpAddr::V6(Ipv6Addr::from(
                self.take_array::<16>("inetaddr")?,
            ))),
            n => Err(DecodeError::invalid(
                "inetaddr",
                format!("address size {n}"),
            )),
        }
    }

    /// `[inet]`: `[inetaddr]` then an `[int]` port.
    pub fn read_inet(&mut self) -> DecodeResult<SocketAddr> {
        let ip = self.read_inetaddr()?;
        let port = self.read_int()?;
        let port = u16::try_from(port)
            .map_err(|_| DecodeError::invalid("inet", format!("port {port}")))?;
        Ok(SocketAddr::new(ip, port))
    }

    /// `[consistency]`.
    pub fn read_consistency(&mut self) -> DecodeResult<Consistency> {
        Consistency::from_code(self.read_short()?)
    }

    /// `[string map]`, in wire order.
    pub fn read_string_map(&mut self) -> DecodeResult<Vec<(String, String)>> {
        let n = self.read_short()? as usize;
        self.check_count(n, 4, "string map")?;
        (0..n)
            .map(|_| Ok((self.read_string()?, self.read_string()?)))
            .collect()
    }

    /// `[string multimap]`, in wire order.
    pub fn read_string_multimap(&mut self) -> DecodeResult<Vec<(String, Vec<String>)>> {
        let n = self.read_short()? as usize;
        self.check_count(n, 4, "string multimap")?;
        (0..n)
            .map(|_| Ok((self.read_string()?, self.read_string_list()?)))
            .collect()
    }

    /// `[bytes map]`, in wire order.
    pub fn read_bytes_map(&mut self) -> DecodeResult<Vec<(String, Option<Bytes>)>> {
        let n = self.read_short()? as usize;
        self.check_count(n, 6, "bytes map")?;
        (0..n)
            .map(|_| Ok((self.read_string()?, self.read_bytes()?)))
            .collect()
    }

    /// Checks an element count against the remaining input (each element needing at least
    /// `min_size` bytes); for message decoders with their own element layouts.
    pub(crate) fn ensure_count(
        &self,
        count: usize,
        min_size: usize,
        what: &'static str,
    ) -> DecodeResult<()> {
        self.check_count(count, min_size, what)
    }
}

/// Appends `[short]`.
pub fn write_short(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends `[int]`.
pub fn write_int(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends `[long]`.
pub fn write_long(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends a `[short]` length, clamping (callers ensure `len <= u16::MAX`).
fn short_len(len: usize) -> u16 {
    u16::try_from(len).unwrap_or(u16::MAX)
}

/// Appends `[string]`. Strings longer than 65535 bytes are cut at the last character
/// boundary that fits (protocol strings are names and messages; an executor that could
/// produce longer ones must use `[long string]`).
pub fn write_string(out: &mut Vec<u8>, s: &str) {
    let mut end = s.len().min(u16::MAX as usize);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    write_short(out, short_len(end));
    out.extend_from_slice(&s.as_bytes()[..end]);
}

/// Appends `[long string]`.
pub fn write_long_string(out: &mut Vec<u8>, s: &str) {
    write_int(out, i32::try_from(s.len()).unwrap_or(i32::MAX));
    out.extend_from_slice(s.as_bytes());
}

/// Appends `[string list]`.
pub fn write_string_list<S: AsRef<str>>(out: &mut Vec<u8>, list: &[S]) {
    let n = list.len().min(u16::MAX as usize);
    write_short(out, short_len(n));
    for s in &list[..n] {
        write_string(out, s.as_ref());
    }
}

/// Appends `[bytes]` (`None` = null, length -1).
pub fn write_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        None => write_int(out, -1),
        Some(b) => {
            write_int(out, i32::try_from(b.len()).unwrap_or(i32::MAX));
            out.extend_from_slice(b);
        }
    }
}

/// Appends `[value]`.
pub fn write_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => write_int(out, -1),
        Value::Unset => write_int(out, -2),
        Value::Bytes(b) => write_bytes(out, Some(b)),
    }
}

/// Appends `[short bytes]` (at most 65535 bytes are written).
pub fn write_short_bytes(out: &mut Vec<u8>, b: &[u8]) {
    let n = b.len().min(u16::MAX as usize);
    write_short(out, short_len(n));
    out.extend_from_slice(&b[..n]);
}

/// Appends `[inetaddr]`.
pub fn write_inetaddr(out: &mut Vec<u8>, ip: IpAddr) {
    match ip {
        IpAddr::V4(a) => {
            out.push(4);
            out.extend_from_slice(&a.octets());
        }
        IpAddr::V6(a) => {
            out.push(16);
            out.extend_from_slice(&a.octets());
        }
    }
}

/// Appends `[inet]`.
pub fn write_inet(out: &mut Vec<u8>, addr: SocketAddr) {
    write_inetaddr(out, addr.ip());
    write_int(out, i32::from(addr.port()));
}

/// Appends `[consistency]`.
pub fn write_consistency(out: &mut Vec<u8>, c: Consistency) {
    write_short(out, c.code());
}

/// Appends `[string map]`.
pub fn write_string_map<K: AsRef<str>, V: AsRef<str>>(out: &mut Vec<u8>, map: &[(K, V)]) {
    let n = map.len().min(u16::MAX as usize);
    write_short(out, short_len(n));
    for (k, v) in &map[..n] {
        write_string(out, k.as_ref());
        write_string(out, v.as_ref());
    }
}

/// Appends `[string multimap]`.
pub fn write_string_multimap<K: AsRef<str>, V: AsRef<str>>(out: &mut Vec<u8>, map: &[(K, Vec<V>)]) {
    let n = map.len().min(u16::MAX as usize);
    write_short(out, short_len(n));
    for (k, v) in &map[..n] {
        write_string(out, k.as_ref());
        write_string_list(out, v);
    }
}

/// Appends `[bytes map]`.
pub fn write_bytes_map<K: AsRef<str>>(out: &mut Vec<u8>, map: &[(K, Option<Bytes>)]) {
    let n = map.len().min(u16::MAX as usize);
    write_short(out, short_len(n));
    for (k, v) in &map[..n] {
        write_string(out, k.as_ref());
        write_bytes(out, v.as_deref());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn primitives_round_trip() {
        let mut out = Vec::new();
        write_short(&mut out, 0xBEEF);
        write_int(&mut out, -5);
        write_long(&mut out, i64::MIN);
        write_string(&mut out, "héllo");
        write_long_string(&mut out, "SELECT 1");
        write_string_list(&mut out, &["a", "bc"]);
        write_bytes(&mut out, None);
        write_bytes(&mut out, Some(b"xy"));
        write_value(&mut out, &Value::Unset);
        write_value(&mut out, &Value::Null);
        write_short_bytes(&mut out, b"id");
        write_inet(&mut out, "127.0.0.1:9042".parse().unwrap());
        write_inet(&mut out, "[::1]:7000".parse().unwrap());
        write_consistency(&mut out, Consistency::LocalQuorum);
        write_string_map(&mut out, &[("k", "v")]);
        write_string_multimap(&mut out, &[("k", vec!["v1", "v2"])]);
        write_bytes_map(&mut out, &[("p", Some(Bytes::from_static(b"\x01")))]);

        let mut r = Reader::from_slice(&out);
        assert_eq!(r.read_short().unwrap(), 0xBEEF);
        assert_eq!(r.read_int().unwrap(), -5);
        assert_eq!(r.read_long().unwrap(), i64::MIN);
        assert_eq!(r.read_string().unwrap(), "héllo");
        assert_eq!(r.read_long_string().unwrap(), "SELECT 1");
        assert_eq!(r.read_string_list().unwrap(), vec!["a", "bc"]);
        assert_eq!(r.read_bytes().unwrap(), None);
        assert_eq!(r.read_bytes().unwrap().unwrap(), &b"xy"[..]);
        assert_eq!(r.read_value().unwrap(), Value::Unset);
        assert_eq!(r.read_value().unwrap(), Value::Null);
        assert_eq!(r.read_short_bytes().unwrap(), &b"id"[..]);
        assert_eq!(
            r.read_inet().unwrap(),
            "127.0.0.1:9042".parse::<SocketAddr>().unwrap()
        );
        assert_eq!(
            r.read_inet().unwrap(),
            "[::1]:7000".parse::<SocketAddr>().unwrap()
        );
        assert_eq!(r.read_consistency().unwrap(), Consistency::LocalQuorum);
        assert_eq!(
            r.read_string_map().unwrap(),
            vec![("k".to_string(), "v".to_string())]
        );
        assert_eq!(
            r.read_string_multimap().unwrap(),
            vec![("k".to_string(), vec!["v1".to_string(), "v2".to_string()])]
        );
        let bm = r.read_bytes_map().unwrap();
        assert_eq!(bm[0].0, "p");
        assert!(r.is_empty());
    }

    #[test]
    fn golden_string_and_inet() {
        let mut out = Vec::new();
        write_string(&mut out, "ab");
        write_inet(&mut out, "10.0.0.1:9042".parse().unwrap());
        assert_eq!(
            out,
            [0, 2, b'a', b'b', 4, 10, 0, 0, 1, 0, 0, 0x23, 0x52].to_vec()
        );
    }

    #[test]
    fn huge_declared_lengths_are_errors_not_allocations() {
        // [long string] of i32::MAX bytes in a 4-byte body.
        let mut r = Reader::from_slice(&[0x7f, 0xff, 0xff, 0xff]);
        assert!(matches!(
            r.read_long_string(),
            Err(DecodeError::Truncated { .. })
        ));
        // string map declaring 65535 entries.
        let mut r = Reader::from_slice(&[0xff, 0xff, 0, 0]);
        assert!(r.read_string_map().is_err());
        let mut r = Reader::from_slice(&[0xff, 0xff]);
        assert!(r.read_string_list().is_err());
        let mut r = Reader::from_slice(&[0xff, 0xff, 0xff, 0xfd]);
        assert!(matches!(r.read_value(), Err(DecodeError::Invalid { .. })));
        let mut r = Reader::from_slice(&[0x80, 0, 0, 0]);
        assert!(r.read_long_string().is_err());
        let mut r = Reader::from_slice(&[5, 1, 2, 3, 4, 5]);
        assert!(r.read_inetaddr().is_err());
        let mut r = Reader::from_slice(&[0, 2, 0xff, 0xfe]);
        assert!(r.read_string().is_err(), "invalid utf-8");
        let mut r = Reader::from_slice(&[0, 0x0b]);
        assert!(r.read_consistency().is_err());
    }

    #[test]
    fn every_truncation_of_valid_input_is_an_error() {
        let mut out = Vec::new();
        write_string_multimap(&mut out, &[("COMPRESSION", vec!["lz4", "snappy"])]);
        for cut in 0..out.len() {
            let mut r = Reader::from_slice(&out[..cut]);
            assert!(r.read_string_multimap().is_err(), "cut at {cut}");
        }
    }
}
