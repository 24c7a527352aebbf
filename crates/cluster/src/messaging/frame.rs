//! The internode wire format: length-prefixed frames.
//!
//! Every frame is a 20-byte header and a body:
//!
//! ```text
//! 0       4      5      6        8              16         20
//! | magic | verb | flags | unused | message id  | body len | body …
//!   "CRN1"   u8     u8      u16       u64 BE      u32 BE
//! ```
//!
//! `flags` bit 0 marks a response (to the request with the same id), bit 1 a response that
//! is an error (its body is the error's text), bit 2 a request of a traced client request:
//! its body starts with the tracing session's id (16 bytes, Cassandra's `TRACE_SESSION`
//! message parameter), the request's own body following — an untraced request carries no
//! byte more. A frame with another magic, an unknown flag or a body longer than the limit
//! cannot be trusted: the connection is closed.

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// The first four bytes of every frame.
pub const MAGIC: [u8; 4] = *b"CRN1";
/// Header length.
pub const HEADER_LEN: usize = 20;
/// Flag: a response.
pub const RESPONSE: u8 = 1;
/// Flag: an error response.
pub const ERROR: u8 = 2;
/// Flag: a request of a traced client request, its body led by the session id.
pub const TRACED: u8 = 4;
/// The length of a tracing session id (a UUID) leading a [`TRACED`] request's body.
pub const SESSION_LEN: usize = 16;

/// One frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The verb's code (`Verb::code`).
    pub verb: u8,
    /// `RESPONSE`, `ERROR`.
    pub flags: u8,
    /// The request's id (a response carries its request's).
    pub id: u64,
    /// The body.
    pub body: Bytes,
}

impl Frame {
    /// Appends the frame to `out`. The body must fit the length field (callers keep bodies
    /// under their `max_body`, far below 4 GiB).
    pub fn encode(&self, out: &mut BytesMut) {
        out.reserve(HEADER_LEN + self.body.len());
        out.put_slice(&MAGIC);
        out.put_u8(self.verb);
        out.put_u8(self.flags);
        out.put_u16(0);
        out.put_u64(self.id);
        out.put_u32(self.body.len() as u32);
        out.put_slice(&self.body);
    }

    /// Splits the first whole frame off `buf`: `Ok(None)` until one has arrived; `Err` when
    /// the stream cannot be trusted (the text says why).
    pub fn decode(buf: &mut BytesMut, max_body: usize) -> Result<Option<Frame>, String> {
        if buf.len() < HEADER_LEN {
            return Ok(None);
        }
        if buf[..4] != MAGIC {
            return Err(format!("bad magic {:02x?}", &buf[..4]));
        }
        let flags = buf[5];
        if flags & !(RESPONSE | ERROR | TRACED) != 0 {
            return Err(format!("unknown flags {flags:#04x}"));
        }
        let len = u32::from_be_bytes([buf[16], buf[17], buf[18], buf[19]]) as usize;
        if len > max_body {
            return Err(format!(
                "a frame of {len} bytes, over the {max_body}-byte limit"
            ));
        }
        if flags & TRACED != 0 && (len < SESSION_LEN || flags & RESPONSE != 0) {
            return Err("a traced frame without its session id".into());
        }
        if buf.len() < HEADER_LEN + len {
            return Ok(None);
        }
        let mut header = buf.split_to(HEADER_LEN);
        header.advance(4);
        let verb = header.get_u8();
        let flags = header.get_u8();
        header.advance(2);
        let id = header.get_u64();
        let body = buf.split_to(len).freeze();
        Ok(Some(Frame {
            verb,
            flags,
            id,
            body,
        }))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_in_pieces() {
        let f = Frame {
            verb: 3,
            flags: RESPONSE,
            id: 77,
            body: Bytes::from_static(b"hello"),
        };
        let mut wire = BytesMut::new();
        f.encode(&mut wire);
        f.encode(&mut wire);
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        for b in wire.iter() {
            buf.put_u8(*b);
            while let Some(f) = Frame::decode(&mut buf, 1024).unwrap() {
                got.push(f);
            }
        }
        assert_eq!(got, [f.clone(), f]);
        assert!(buf.is_empty());
    }

    #[test]
    fn a_traced_request_needs_its_session_id() {
        let traced = |flags, len| {
            let mut wire = BytesMut::new();
            Frame {
                verb: 3,
                flags,
                id: 1,
                body: Bytes::from(vec![7; len]),
            }
            .encode(&mut wire);
            Frame::decode(&mut wire, 1024)
        };
        let f = traced(TRACED, SESSION_LEN + 2).unwrap().unwrap();
        assert_eq!((f.flags, f.body.len()), (TRACED, SESSION_LEN + 2));
        assert!(traced(TRACED, SESSION_LEN - 1).is_err());
        assert!(traced(TRACED | RESPONSE, SESSION_LEN).is_err());
    }

    #[test]
    fn untrustworthy_streams_are_refused() {
        let mut bad = BytesMut::from(&b"HTTP/1.1 200 OK\r\n\r\n...."[..]);
        assert!(Frame::decode(&mut bad, 1024).unwrap_err().contains("magic"));
        let mut big = BytesMut::new();
        Frame {
            verb: 1,
            flags: 0,
            id: 1,
            body: Bytes::from(vec![0; 2048]),
        }
        .encode(&mut big);
        assert!(Frame::decode(&mut big, 1024).unwrap_err().contains("limit"));
        let mut flags = BytesMut::new();
        Frame {
            verb: 1,
            flags: 0x80,
            id: 1,
            body: Bytes::new(),
        }
        .encode(&mut flags);
        assert!(Frame::decode(&mut flags, 1024).is_err());
    }
}
