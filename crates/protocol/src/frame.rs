//! Frame headers (spec §2) and incremental frame decoding with version negotiation.
//!
//! A frame is a 9-byte header `version | flags | stream (i16) | opcode | length (i32)`
//! followed by `length` body bytes. The high bit of `version` marks a response.
//!
//! Invariants:
//! * [`FrameDecoder::decode`] consumes bytes only when it returns a whole frame; with a
//!   partial frame it returns `Ok(None)` and leaves the buffer alone ("need more bytes").
//! * A declared body length above the configured maximum is refused from the header alone
//!   ([`FrameError::TooLarge`]) — nothing is allocated or awaited for it.
//! * Only protocol versions 3 and 4 are accepted. Any other version byte (v1, v2, v5, v6,
//!   garbage) is refused as soon as its stream id is known, with
//!   [`FrameError::UnsupportedVersion`], whose [`FrameError::error_frame`] is a
//!   PROTOCOL_ERROR framed in v4 (the highest version we speak) carrying the message
//!   `Invalid or unsupported protocol version (N); supported versions are (3/v3, 4/v4)`.
//!   Drivers look for the substring `unsupported protocol version` to retry one version
//!   lower (the Python driver starts at v5 and downgrades to v4 on it).
//! * After a `FrameError` the byte stream cannot be trusted: the connection answers with
//!   the error frame and closes.

use super::codec::{write_int, write_string};
use bytes::{Buf, Bytes, BytesMut};

/// Length of a v3/v4 frame header.
pub const HEADER_LEN: usize = 9;
/// Cassandra's `native_transport_max_frame_size` default: 256 MiB.
pub const DEFAULT_MAX_FRAME_SIZE: usize = 256 * 1024 * 1024;
/// Lowest protocol version accepted.
pub const MIN_VERSION: u8 = 3;
/// Highest protocol version accepted; errors that precede negotiation are framed in it.
pub const MAX_VERSION: u8 = 4;
/// Direction bit of the version byte.
pub const RESPONSE_BIT: u8 = 0x80;
/// Error code of PROTOCOL_ERROR.
pub const PROTOCOL_ERROR_CODE: i32 = 0x000A;

/// Frame flag bits (spec §2.2).
pub mod flags {
    /// The body is compressed with the algorithm agreed on in STARTUP.
    pub const COMPRESSION: u8 = 0x01;
    /// Tracing requested (request) / tracing id first in body (response).
    pub const TRACING: u8 = 0x02;
    /// A `[bytes map]` custom payload precedes the body (v4).
    pub const CUSTOM_PAYLOAD: u8 = 0x04;
    /// A `[string list]` of warnings precedes the body of a response (v4).
    pub const WARNING: u8 = 0x08;
    /// Beta protocol version requested (v5+ only; refused with the version).
    pub const USE_BETA: u8 = 0x10;
}

/// Message opcodes (spec §2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Opcode {
    Error = 0x00,
    Startup = 0x01,
    Ready = 0x02,
    Authenticate = 0x03,
    Options = 0x05,
    Supported = 0x06,
    Query = 0x07,
    Result = 0x08,
    Prepare = 0x09,
    Execute = 0x0A,
    Register = 0x0B,
    Event = 0x0C,
    Batch = 0x0D,
    AuthChallenge = 0x0E,
    AuthResponse = 0x0F,
    AuthSuccess = 0x10,
}

impl Opcode {
    /// Decodes an opcode byte; `None` for unknown values.
    pub fn from_u8(b: u8) -> Option<Self> {
        use Opcode::*;
        Some(match b {
            0x00 => Error,
            0x01 => Startup,
            0x02 => Ready,
            0x03 => Authenticate,
            0x05 => Options,
            0x06 => Supported,
            0x07 => Query,
            0x08 => Result,
            0x09 => Prepare,
            0x0A => Execute,
            0x0B => Register,
            0x0C => Event,
            0x0D => Batch,
            0x0E => AuthChallenge,
            0x0F => AuthResponse,
            0x10 => AuthSuccess,
            _ => return None,
        })
    }

    /// The name Cassandra uses in messages (`QUERY`).
    pub fn name(self) -> &'static str {
        use Opcode::*;
        match self {
            Error => "ERROR",
            Startup => "STARTUP",
            Ready => "READY",
            Authenticate => "AUTHENTICATE",
            Options => "OPTIONS",
            Supported => "SUPPORTED",
            Query => "QUERY",
            Result => "RESULT",
            Prepare => "PREPARE",
            Execute => "EXECUTE",
            Register => "REGISTER",
            Event => "EVENT",
            Batch => "BATCH",
            AuthChallenge => "AUTH_CHALLENGE",
            AuthResponse => "AUTH_RESPONSE",
            AuthSuccess => "AUTH_SUCCESS",
        }
    }
}

/// A decoded frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// Protocol version, without the direction bit.
    pub version: u8,
    /// Direction bit: set on responses.
    pub is_response: bool,
    /// Flag bits, see [`flags`].
    pub flags: u8,
    /// Stream id; -1 for events.
    pub stream: i16,
    /// Raw opcode byte (validated later, so an unknown opcode can be answered on its stream).
    pub opcode: u8,
    /// Body length in bytes.
    pub length: u32,
}

impl FrameHeader {
    /// A response header (length filled in by [`FrameHeader::encode`] callers).
    pub fn response(version: u8, flags: u8, stream: i16, opcode: Opcode, length: u32) -> Self {
        FrameHeader {
            version,
            is_response: true,
            flags,
            stream,
            opcode: opcode as u8,
            length,
        }
    }

    /// The 9 header bytes.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[0] = self.version | if self.is_response { RESPONSE_BIT } else { 0 };
        out[1] = self.flags;
        out[2..4].copy_from_slice(&self.stream.to_be_bytes());
        out[4] = self.opcode;
        out[5..9].copy_from_slice(&self.length.to_be_bytes());
        out
    }

    /// Parses 9 header bytes (no validation of version or length).
    pub fn parse(b: &[u8; HEADER_LEN]) -> Self {
        FrameHeader {
            version: b[0] & !RESPONSE_BIT,
            is_response: b[0] & RESPONSE_BIT != 0,
            flags: b[1],
            stream: i16::from_be_bytes([b[2], b[3]]),
            opcode: b[4],
            length: u32::from_be_bytes([b[5], b[6], b[7], b[8]]),
        }
    }
}

/// A whole frame: header and (still possibly compressed) body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub header: FrameHeader,
    pub body: Bytes,
}

/// A framing failure: the stream cannot be trusted after it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error(
        "Invalid or unsupported protocol version ({version}); supported versions are (3/v3, 4/v4)"
    )]
    UnsupportedVersion { version: u8, stream: i16 },
    #[error("Request is too big: length {length} exceeds maximum allowed length {max}")]
    TooLarge {
        length: u64,
        max: usize,
        stream: i16,
    },
    #[error("Invalid frame: the response bit is set on a request")]
    NotARequest { stream: i16 },
}

impl FrameError {
    /// Stream id the error is answered on.
    pub fn stream(&self) -> i16 {
        match *self {
            FrameError::UnsupportedVersion { stream, .. }
            | FrameError::TooLarge { stream, .. }
            | FrameError::NotARequest { stream } => stream,
        }
    }

    /// The PROTOCOL_ERROR response frame, framed in `version` (use [`MAX_VERSION`] before
    /// negotiation, which is what [`FrameError::UnsupportedVersion`] always uses).
    pub fn error_frame(&self, negotiated: Option<u8>) -> Vec<u8> {
        let version = match self {
            FrameError::UnsupportedVersion { .. } => MAX_VERSION,
            _ => negotiated.unwrap_or(MAX_VERSION),
        };
        protocol_error_frame(version, self.stream(), &self.to_string())
    }
}

/// An uncompressed ERROR frame with code PROTOCOL_ERROR and `message`.
pub fn protocol_error_frame(version: u8, stream: i16, message: &str) -> Vec<u8> {
    let mut body = Vec::with_capacity(6 + message.len());
    write_int(&mut body, PROTOCOL_ERROR_CODE);
    write_string(&mut body, message);
    let header = FrameHeader::response(version, 0, stream, Opcode::Error, body.len() as u32);
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(&header.encode());
    out.extend_from_slice(&body);
    out
}

/// Splits request frames off a byte buffer.
#[derive(Debug, Clone, Copy)]
pub struct FrameDecoder {
    max_frame_size: usize,
}

impl Default for FrameDecoder {
    fn default() -> Self {
        FrameDecoder::new(DEFAULT_MAX_FRAME_SIZE)
    }
}

impl FrameDecoder {
    /// A decoder refusing bodies longer than `max_frame_size` bytes.
    pub fn new(max_frame_size: usize) -> Self {
        FrameDecoder { max_frame_size }
    }

    /// The configured maximum body size.
    pub fn max_frame_size(&self) -> usize {
        self.max_frame_size
    }

    /// Takes one whole request frame off the front of `buf`, `Ok(None)` if more bytes are
    /// needed (the buffer is then untouched), or the framing error.
    pub fn decode(&self, buf: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        let Some(&first) = buf.first() else {
            return Ok(None);
        };
        let version = first & !RESPONSE_BIT;
        if !(MIN_VERSION..=MAX_VERSION).contains(&version) {
            // v1/v2 headers carry a one-byte stream id at offset 2; later ones an i16.
            let stream = if version < 3 {
                match buf.get(2) {
                    Some(&b) => i16::from(b as i8),
                    None => return Ok(None),
                }
            } else {
                match (buf.get(2), buf.get(3)) {
                    (Some(&a), Some(&b)) => i16::from_be_bytes([a, b]),
                    _ => return Ok(None),
                }
            };
            return Err(FrameError::UnsupportedVersion { version, stream });
        }
        if buf.len() < HEADER_LEN {
            return Ok(None);
        }
        let mut hb = [0u8; HEADER_LEN];
        hb.copy_from_slice(&buf[..HEADER_LEN]);
        let header = FrameHeader::parse(&hb);
        if header.is_response {
            return Err(FrameError::NotARequest {
                stream: header.stream,
            });
        }
        // The wire field is a signed [int]; anything with the top bit set is > 2 GiB.
        let length = header.length as usize;
        if header.length > i32::MAX as u32 || length > self.max_frame_size {
            return Err(FrameError::TooLarge {
                length: u64::from(header.length),
                max: self.max_frame_size,
                stream: header.stream,
            });
        }
        if buf.len() < HEADER_LEN + length {
            // Nothing is reserved on the header's word: the buffer grows with the bytes
            // that actually arrive, so a bare header cannot make us allocate the frame.
            return Ok(None);
        }
        // The body is copied out of the read buffer rather than split off it: a request's
        // values end up in memtables (keys, cells) and would otherwise keep the whole 16 KiB+
        // read buffer they arrived in alive until the flush, unaccounted, while the
        // connection allocated a new one. Copied, each frame holds only its own bytes and the
        // read buffer is reused in place.
        let body = Bytes::copy_from_slice(&buf[HEADER_LEN..HEADER_LEN + length]);
        buf.advance(HEADER_LEN + length);
        Ok(Some(Frame { header, body }))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn request(version: u8, stream: i16, opcode: Opcode, body: &[u8]) -> Vec<u8> {
        let h = FrameHeader {
            version,
            is_response: false,
            flags: 0,
            stream,
            opcode: opcode as u8,
            length: body.len() as u32,
        };
        let mut v = h.encode().to_vec();
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn header_round_trip_and_golden() {
        let h = FrameHeader::response(4, flags::COMPRESSION, 0x0102, Opcode::Ready, 0);
        assert_eq!(h.encode(), [0x84, 0x01, 0x01, 0x02, 0x02, 0, 0, 0, 0]);
        assert_eq!(FrameHeader::parse(&h.encode()), h);
        let ev = FrameHeader::response(4, 0, -1, Opcode::Event, 7);
        assert_eq!(ev.encode(), [0x84, 0, 0xff, 0xff, 0x0C, 0, 0, 0, 7]);
    }

    /// A decoded body owns its bytes: values kept from it (memtable keys and cells) must not
    /// keep the connection's read buffer alive, and the buffer is reused in place.
    #[test]
    fn a_body_does_not_share_the_read_buffer() {
        let dec = FrameDecoder::default();
        let mut buf = BytesMut::with_capacity(16 * 1024);
        buf.extend_from_slice(&request(4, 1, Opcode::Query, b"some request body"));
        buf.extend_from_slice(&request(4, 2, Opcode::Query, b"another"));
        let start = buf.as_ptr() as usize;
        let capacity = buf.capacity();
        let region = start..start + capacity;
        let first = dec.decode(&mut buf).unwrap().unwrap();
        let second = dec.decode(&mut buf).unwrap().unwrap();
        assert_eq!(&first.body[..], b"some request body");
        assert_eq!(&second.body[..], b"another");
        for body in [&first.body, &second.body] {
            assert!(!region.contains(&(body.as_ptr() as usize)));
        }
        // Nothing else holds the buffer, so making room moves back to its start instead of
        // allocating a new one.
        buf.reserve(capacity - 1);
        assert_eq!(buf.as_ptr() as usize, start);
    }

    #[test]
    fn incremental_decoding_needs_more_bytes() {
        let bytes = request(4, 7, Opcode::Options, b"");
        let mut two = bytes.clone();
        two.extend(request(3, 8, Opcode::Query, b"abc"));
        let dec = FrameDecoder::default();
        let mut buf = BytesMut::new();
        let mut frames = Vec::new();
        for b in two {
            buf.extend_from_slice(&[b]);
            while let Some(f) = dec.decode(&mut buf).unwrap() {
                frames.push(f);
            }
        }
        assert!(buf.is_empty());
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0].header.stream, 7);
        assert_eq!(frames[0].header.opcode, Opcode::Options as u8);
        assert_eq!(frames[1].header.version, 3);
        assert_eq!(&frames[1].body[..], b"abc");
    }

    #[test]
    fn v5_is_refused_with_cassandra_message_in_v4_frame() {
        let dec = FrameDecoder::default();
        let mut buf = BytesMut::from(&request(5, 0x0003, Opcode::Options, b"")[..]);
        let err = dec.decode(&mut buf).unwrap_err();
        assert_eq!(
            err,
            FrameError::UnsupportedVersion {
                version: 5,
                stream: 3
            }
        );
        let msg =
            b"Invalid or unsupported protocol version (5); supported versions are (3/v3, 4/v4)";
        let mut expected = vec![0x84, 0x00, 0x00, 0x03, 0x00];
        expected.extend_from_slice(&(6 + msg.len() as u32).to_be_bytes());
        expected.extend_from_slice(&[0, 0, 0, 0x0A]);
        expected.extend_from_slice(&(msg.len() as u16).to_be_bytes());
        expected.extend_from_slice(msg);
        assert_eq!(err.error_frame(Some(3)), expected);
        assert!(err.to_string().contains("unsupported protocol version"));
    }

    #[test]
    fn other_versions_are_refused() {
        let dec = FrameDecoder::default();
        // v2: 8-byte header, one-byte stream.
        let mut buf = BytesMut::from(&[0x02u8, 0, 0x05, 0x05, 0, 0, 0, 0][..]);
        assert_eq!(
            dec.decode(&mut buf).unwrap_err(),
            FrameError::UnsupportedVersion {
                version: 2,
                stream: 5
            }
        );
        for v in [0u8, 1, 6, 0x41, 0x7f] {
            let mut buf = BytesMut::from(&[v, 0, 0, 1][..]);
            assert!(matches!(
                dec.decode(&mut buf),
                Err(FrameError::UnsupportedVersion { .. })
            ));
        }
        // Only one byte: wait for the stream id.
        let mut buf = BytesMut::from(&[0x05u8][..]);
        assert_eq!(dec.decode(&mut buf).unwrap(), None);
    }

    #[test]
    fn too_large_is_refused_from_the_header() {
        let dec = FrameDecoder::new(1024);
        let mut h = request(4, 1, Opcode::Query, b"").to_vec();
        h[5..9].copy_from_slice(&1025u32.to_be_bytes());
        let mut buf = BytesMut::from(&h[..]);
        let err = dec.decode(&mut buf).unwrap_err();
        assert!(matches!(err, FrameError::TooLarge { length: 1025, .. }));
        h[5..9].copy_from_slice(&u32::MAX.to_be_bytes());
        let mut buf = BytesMut::from(&h[..]);
        assert!(FrameDecoder::default().decode(&mut buf).is_err());
        h[5..9].copy_from_slice(&1024u32.to_be_bytes());
        let mut buf = BytesMut::from(&h[..]);
        assert_eq!(dec.decode(&mut buf).unwrap(), None);
        assert!(
            buf.capacity() < 1024,
            "nothing reserved for the announced body"
        );
    }

    #[test]
    fn response_bit_on_request_is_refused() {
        let mut b = request(4, 1, Opcode::Options, b"");
        b[0] = 0x84;
        let mut buf = BytesMut::from(&b[..]);
        assert!(matches!(
            FrameDecoder::default().decode(&mut buf),
            Err(FrameError::NotARequest { stream: 1 })
        ));
    }
}
