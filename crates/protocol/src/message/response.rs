//! Responses (spec §4.2) and server-pushed events, and [`Reply`]: a response with its
//! frame-level extras, encoded into a frame.

use super::error::CqlError;
use super::request::EventType;
use super::result::{ResultBody, SchemaChange};
use crate::codec::*;
use crate::compression::Compression;
use crate::frame::{flags, FrameHeader, Opcode, HEADER_LEN};
use bytes::Bytes;
use std::net::SocketAddr;

/// TOPOLOGY_CHANGE kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TopologyChangeType {
    NewNode,
    RemovedNode,
}

/// STATUS_CHANGE kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatusChangeType {
    Up,
    Down,
}

/// A server-pushed event (sent on stream -1 to connections registered for its type).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Event {
    TopologyChange {
        change: TopologyChangeType,
        address: SocketAddr,
    },
    StatusChange {
        change: StatusChangeType,
        address: SocketAddr,
    },
    SchemaChange(SchemaChange),
}

impl Event {
    pub fn event_type(&self) -> EventType {
        match self {
            Event::TopologyChange { .. } => EventType::TopologyChange,
            Event::StatusChange { .. } => EventType::StatusChange,
            Event::SchemaChange(_) => EventType::SchemaChange,
        }
    }

    fn encode(&self, version: u8, out: &mut Vec<u8>) {
        write_string(out, self.event_type().name());
        match self {
            Event::TopologyChange { change, address } => {
                write_string(
                    out,
                    match change {
                        TopologyChangeType::NewNode => "NEW_NODE",
                        TopologyChangeType::RemovedNode => "REMOVED_NODE",
                    },
                );
                write_inet(out, *address);
            }
            Event::StatusChange { change, address } => {
                write_string(
                    out,
                    match change {
                        StatusChangeType::Up => "UP",
                        StatusChangeType::Down => "DOWN",
                    },
                );
                write_inet(out, *address);
            }
            Event::SchemaChange(sc) => sc.encode(version, out),
        }
    }

    fn decode(r: &mut Reader) -> DecodeResult<Self> {
        let t = r.read_string()?;
        Ok(match t.as_str() {
            "TOPOLOGY_CHANGE" => {
                let change = match r.read_string()?.as_str() {
                    "NEW_NODE" => TopologyChangeType::NewNode,
                    "REMOVED_NODE" => TopologyChangeType::RemovedNode,
                    other => return Err(DecodeError::invalid("topology change", other)),
                };
                Event::TopologyChange {
                    change,
                    address: r.read_inet()?,
                }
            }
            "STATUS_CHANGE" => {
                let change = match r.read_string()?.as_str() {
                    "UP" => StatusChangeType::Up,
                    "DOWN" => StatusChangeType::Down,
                    other => return Err(DecodeError::invalid("status change", other)),
                };
                Event::StatusChange {
                    change,
                    address: r.read_inet()?,
                }
            }
            "SCHEMA_CHANGE" => Event::SchemaChange(SchemaChange::decode(r)?),
            _ => return Err(DecodeError::invalid("event type", t)),
        })
    }
}

/// A response message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    Error(CqlError),
    Ready,
    /// The authenticator's Java class name, e.g.
    /// `org.apache.cassandra.auth.PasswordAuthenticator`.
    Authenticate(String),
    Supported(Vec<(String, Vec<String>)>),
    Result(ResultBody),
    Event(Event),
    AuthChallenge(Option<Bytes>),
    AuthSuccess(Option<Bytes>),
}

impl From<CqlError> for Response {
    fn from(e: CqlError) -> Self {
        Response::Error(e)
    }
}

impl Response {
    pub fn opcode(&self) -> Opcode {
        match self {
            Response::Error(_) => Opcode::Error,
            Response::Ready => Opcode::Ready,
            Response::Authenticate(_) => Opcode::Authenticate,
            Response::Supported(_) => Opcode::Supported,
            Response::Result(_) => Opcode::Result,
            Response::Event(_) => Opcode::Event,
            Response::AuthChallenge(_) => Opcode::AuthChallenge,
            Response::AuthSuccess(_) => Opcode::AuthSuccess,
        }
    }

    /// Appends the message body for protocol `version`.
    pub fn encode_body(&self, version: u8, out: &mut Vec<u8>) {
        match self {
            Response::Error(e) => e.encode(version, out),
            Response::Ready => {}
            Response::Authenticate(class) => write_string(out, class),
            Response::Supported(m) => write_string_multimap(out, m),
            Response::Result(r) => r.encode(version, out),
            Response::Event(e) => e.encode(version, out),
            Response::AuthChallenge(t) | Response::AuthSuccess(t) => write_bytes(out, t.as_deref()),
        }
    }

    /// Decodes a response body (client side / tests).
    pub fn decode(opcode: Opcode, version: u8, body: Bytes) -> DecodeResult<Self> {
        let mut r = Reader::new(body);
        Ok(match opcode {
            Opcode::Error => Response::Error(CqlError::decode(&mut r)?),
            Opcode::Ready => Response::Ready,
            Opcode::Authenticate => Response::Authenticate(r.read_string()?),
            Opcode::Supported => Response::Supported(r.read_string_multimap()?),
            Opcode::Result => Response::Result(ResultBody::decode(version, &mut r)?),
            Opcode::Event => Response::Event(Event::decode(&mut r)?),
            Opcode::AuthChallenge => Response::AuthChallenge(r.read_bytes()?),
            Opcode::AuthSuccess => Response::AuthSuccess(r.read_bytes()?),
            other => {
                return Err(DecodeError::invalid(
                    "response",
                    format!("{} is not a response message", other.name()),
                ))
            }
        })
    }
}

/// What a request handler answers: the response plus optional frame-level extras.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub response: Response,
    /// Warnings for the client (v4+; dropped for v3).
    pub warnings: Vec<String>,
    /// Tracing session id, when the request asked for tracing and was traced.
    pub tracing_id: Option<[u8; 16]>,
}

impl From<Response> for Reply {
    fn from(response: Response) -> Self {
        Reply {
            response,
            warnings: Vec::new(),
            tracing_id: None,
        }
    }
}

impl From<CqlError> for Reply {
    fn from(e: CqlError) -> Self {
        Response::Error(e).into()
    }
}

impl Reply {
    /// Encodes a whole response frame. The body is compressed when `compression` is set
    /// and the body is not empty.
    pub fn encode_frame(
        &self,
        version: u8,
        stream: i16,
        compression: Option<Compression>,
    ) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        self.encode_frame_into(version, stream, compression, &mut out);
        out
    }

    /// [`Reply::encode_frame`], appending the frame to `out` (a connection gathers the
    /// frames of one socket write this way).
    pub fn encode_frame_into(
        &self,
        version: u8,
        stream: i16,
        compression: Option<Compression>,
        out: &mut Vec<u8>,
    ) {
        let start = out.len();
        let body = start + HEADER_LEN;
        let mut fl = 0u8;
        out.extend_from_slice(&[0u8; HEADER_LEN]);
        if let Some(id) = &self.tracing_id {
            fl |= flags::TRACING;
            out.extend_from_slice(id);
        }
        if version >= 4 && !self.warnings.is_empty() {
            fl |= flags::WARNING;
            write_string_list(out, &self.warnings);
        }
        self.response.encode_body(version, out);
        if let Some(c) = compression {
            if out.len() > body {
                let z = c.compress(&out[body..]);
                out.truncate(body);
                out.extend_from_slice(&z);
                fl |= flags::COMPRESSION;
            }
        }
        let len = u32::try_from(out.len() - body).unwrap_or(u32::MAX);
        let header = FrameHeader::response(version, fl, stream, self.response.opcode(), len);
        out[start..body].copy_from_slice(&header.encode());
    }

    /// Decodes a response frame body (client side / tests), decompressing when flagged.
    pub fn decode_frame(
        header: &FrameHeader,
        body: Bytes,
        compression: Option<Compression>,
        max_len: usize,
    ) -> DecodeResult<Self> {
        let body = if header.flags & flags::COMPRESSION != 0 {
            let c = compression
                .ok_or_else(|| DecodeError::invalid("frame", "compressed without compression"))?;
            Bytes::from(
                c.decompress(&body, max_len)
                    .map_err(|e| DecodeError::invalid("frame", e.to_string()))?,
            )
        } else {
            body
        };
        let opcode = Opcode::from_u8(header.opcode)
            .ok_or_else(|| DecodeError::invalid("opcode", format!("{}", header.opcode)))?;
        let mut r = Reader::new(body);
        let tracing_id = if header.flags & flags::TRACING != 0 {
            Some(r.read_uuid()?)
        } else {
            None
        };
        let warnings = if header.flags & flags::WARNING != 0 {
            r.read_string_list()?
        } else {
            Vec::new()
        };
        if header.flags & flags::CUSTOM_PAYLOAD != 0 {
            r.read_bytes_map()?;
        }
        let response = Response::decode(opcode, header.version, r.read_rest())?;
        Ok(Reply {
            response,
            warnings,
            tracing_id,
        })
    }
}
