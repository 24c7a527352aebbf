//! Requests (spec §4.1): STARTUP, OPTIONS, QUERY, PREPARE, EXECUTE, BATCH, REGISTER,
//! AUTH_RESPONSE, their parameters, and the decoded [`RequestFrame`].

use crate::codec::*;
use crate::compression::Compression;
use crate::frame::{flags, FrameHeader, Opcode};
use bytes::Bytes;

/// Query flag bits (spec §4.1.4).
pub mod query_flags {
    pub const VALUES: u8 = 0x01;
    pub const SKIP_METADATA: u8 = 0x02;
    pub const PAGE_SIZE: u8 = 0x04;
    pub const PAGING_STATE: u8 = 0x08;
    pub const SERIAL_CONSISTENCY: u8 = 0x10;
    pub const DEFAULT_TIMESTAMP: u8 = 0x20;
    pub const NAMES_FOR_VALUES: u8 = 0x40;
}

/// A request message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Startup(Startup),
    AuthResponse(Option<Bytes>),
    Options,
    Query(Query),
    Prepare(Prepare),
    Execute(Execute),
    Batch(Batch),
    Register(Vec<EventType>),
}

/// STARTUP options (`CQL_VERSION`, `COMPRESSION`, `DRIVER_NAME`, …) in wire order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Startup {
    pub options: Vec<(String, String)>,
}

impl Startup {
    /// The value of option `key` (exact, case-sensitive match as in Cassandra).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// QUERY: a CQL string and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub query: String,
    pub params: QueryParams,
}

/// PREPARE: the CQL string to prepare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepare {
    pub query: String,
}

/// EXECUTE: a prepared id and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execute {
    pub id: Bytes,
    pub params: QueryParams,
}

/// `<query_parameters>` of QUERY and EXECUTE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryParams {
    pub consistency: Consistency,
    /// Bound values (flag 0x01), in order.
    pub values: Vec<Value>,
    /// Names of the values (flag 0x40), parallel to `values` when present.
    pub names: Option<Vec<String>>,
    /// Flag 0x02: the response may omit result metadata.
    pub skip_metadata: bool,
    /// Flag 0x04: page size in rows (as sent; ≤ 0 means no paging).
    pub page_size: Option<i32>,
    /// Flag 0x08: paging state from a previous page.
    pub paging_state: Option<Bytes>,
    /// Flag 0x10.
    pub serial_consistency: Option<Consistency>,
    /// Flag 0x20: default timestamp in microseconds.
    pub default_timestamp: Option<i64>,
}

impl QueryParams {
    /// Parameters with only a consistency level.
    pub fn new(consistency: Consistency) -> Self {
        QueryParams {
            consistency,
            values: Vec::new(),
            names: None,
            skip_metadata: false,
            page_size: None,
            paging_state: None,
            serial_consistency: None,
            default_timestamp: None,
        }
    }

    fn decode(r: &mut Reader) -> DecodeResult<Self> {
        let consistency = r.read_consistency()?;
        let fl = r.read_byte()?;
        let mut p = QueryParams::new(consistency);
        if fl & query_flags::VALUES != 0 {
            let n = r.read_short()? as usize;
            r.ensure_count(n, 4, "values")?;
            let named = fl & query_flags::NAMES_FOR_VALUES != 0;
            let mut names = Vec::with_capacity(if named { n } else { 0 });
            p.values.reserve(n);
            for _ in 0..n {
                if named {
                    names.push(r.read_string()?);
                }
                p.values.push(r.read_value()?);
            }
            if named {
                p.names = Some(names);
            }
        }
        p.skip_metadata = fl & query_flags::SKIP_METADATA != 0;
        if fl & query_flags::PAGE_SIZE != 0 {
            p.page_size = Some(r.read_int()?);
        }
        if fl & query_flags::PAGING_STATE != 0 {
            p.paging_state = r.read_bytes()?;
        }
        if fl & query_flags::SERIAL_CONSISTENCY != 0 {
            p.serial_consistency = Some(r.read_consistency()?);
        }
        if fl & query_flags::DEFAULT_TIMESTAMP != 0 {
            p.default_timestamp = Some(r.read_long()?);
        }
        Ok(p)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        write_consistency(out, self.consistency);
        let mut fl = 0u8;
        if !self.values.is_empty() || self.names.is_some() {
            fl |= query_flags::VALUES;
        }
        if self.names.is_some() {
            fl |= query_flags::NAMES_FOR_VALUES;
        }
        if self.skip_metadata {
            fl |= query_flags::SKIP_METADATA;
        }
        if self.page_size.is_some() {
            fl |= query_flags::PAGE_SIZE;
        }
        if self.paging_state.is_some() {
            fl |= query_flags::PAGING_STATE;
        }
        if self.serial_consistency.is_some() {
            fl |= query_flags::SERIAL_CONSISTENCY;
        }
        if self.default_timestamp.is_some() {
            fl |= query_flags::DEFAULT_TIMESTAMP;
        }
        out.push(fl);
        if fl & query_flags::VALUES != 0 {
            encode_values(out, &self.values, self.names.as_deref());
        }
        if let Some(n) = self.page_size {
            write_int(out, n);
        }
        if let Some(s) = &self.paging_state {
            write_bytes(out, Some(s));
        }
        if let Some(c) = self.serial_consistency {
            write_consistency(out, c);
        }
        if let Some(t) = self.default_timestamp {
            write_long(out, t);
        }
    }
}

fn encode_values(out: &mut Vec<u8>, values: &[Value], names: Option<&[String]>) {
    let n = values.len().min(u16::MAX as usize);
    write_short(out, n as u16);
    for (i, v) in values[..n].iter().enumerate() {
        if let Some(names) = names {
            write_string(out, names.get(i).map(String::as_str).unwrap_or(""));
        }
        write_value(out, v);
    }
}

/// BATCH types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum BatchType {
    Logged = 0,
    Unlogged = 1,
    Counter = 2,
}

/// A statement of a batch: a CQL string or a prepared id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchQuery {
    Query(String),
    Prepared(Bytes),
}

/// One statement of a BATCH with its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchStatement {
    pub query: BatchQuery,
    pub values: Vec<Value>,
    /// Present when the batch has flag 0x40.
    pub names: Option<Vec<String>>,
}

/// BATCH.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub batch_type: BatchType,
    pub statements: Vec<BatchStatement>,
    pub consistency: Consistency,
    pub serial_consistency: Option<Consistency>,
    pub default_timestamp: Option<i64>,
}

impl Batch {
    fn decode(r: &mut Reader) -> DecodeResult<Self> {
        let batch_type = match r.read_byte()? {
            0 => BatchType::Logged,
            1 => BatchType::Unlogged,
            2 => BatchType::Counter,
            t => return Err(DecodeError::invalid("batch type", format!("{t}"))),
        };
        let n = r.read_short()? as usize;
        // kind byte + short bytes/long string length + value count: at least 5 bytes each.
        r.ensure_count(n, 5, "batch statements")?;
        // Values and names come before the flags that say whether names are present, so
        // remember each statement's raw position and decode in two passes.
        let start = r.clone();
        let mut statements = Vec::with_capacity(n);
        let skip_pass = |r: &mut Reader, named: bool| -> DecodeResult<()> {
            for _ in 0..n {
                match r.read_byte()? {
                    0 => {
                        let len = r.read_int()?;
                        r.skip(usize::try_from(len).unwrap_or(usize::MAX))?;
                    }
                    1 => {
                        r.read_short_bytes()?;
                    }
                    k => return Err(DecodeError::invalid("batch query kind", format!("{k}"))),
                }
                let nv = r.read_short()? as usize;
                r.ensure_count(nv, 4, "batch values")?;
                for _ in 0..nv {
                    if named {
                        r.read_short_bytes()?;
                    }
                    r.read_value()?;
                }
            }
            Ok(())
        };
        // First pass without names to find the flags; if flag 0x40 is set, the layout had
        // names, so re-scan with names to find the real position of the flags.
        let mut probe = start.clone();
        let unnamed_flags = skip_pass(&mut probe, false).and_then(|_| {
            probe.read_consistency()?;
            probe.read_byte()
        });
        let named = !matches!(unnamed_flags, Ok(fl) if fl & query_flags::NAMES_FOR_VALUES == 0);
        let mut r2 = start;
        for _ in 0..n {
            let query = match r2.read_byte()? {
                0 => BatchQuery::Query(r2.read_long_string()?),
                1 => BatchQuery::Prepared(r2.read_short_bytes()?),
                k => return Err(DecodeError::invalid("batch query kind", format!("{k}"))),
            };
            let nv = r2.read_short()? as usize;
            r2.ensure_count(nv, 4, "batch values")?;
            let mut values = Vec::with_capacity(nv);
            let mut names = named.then(|| Vec::with_capacity(nv));
            for _ in 0..nv {
                if let Some(names) = names.as_mut() {
                    names.push(r2.read_string()?);
                }
                values.push(r2.read_value()?);
            }
            statements.push(BatchStatement {
                query,
                values,
                names,
            });
        }
        let consistency = r2.read_consistency()?;
        let fl = r2.read_byte()?;
        if named && fl & query_flags::NAMES_FOR_VALUES == 0 {
            return Err(DecodeError::invalid(
                "batch",
                "statement layout does not match its flags",
            ));
        }
        let serial_consistency = if fl & query_flags::SERIAL_CONSISTENCY != 0 {
            Some(r2.read_consistency()?)
        } else {
            None
        };
        let default_timestamp = if fl & query_flags::DEFAULT_TIMESTAMP != 0 {
            Some(r2.read_long()?)
        } else {
            None
        };
        *r = r2;
        Ok(Batch {
            batch_type,
            statements,
            consistency,
            serial_consistency,
            default_timestamp,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.batch_type as u8);
        let n = self.statements.len().min(u16::MAX as usize);
        write_short(out, n as u16);
        let named = self.statements.iter().any(|s| s.names.is_some());
        for s in &self.statements[..n] {
            match &s.query {
                BatchQuery::Query(q) => {
                    out.push(0);
                    write_long_string(out, q);
                }
                BatchQuery::Prepared(id) => {
                    out.push(1);
                    write_short_bytes(out, id);
                }
            }
            let empty = Vec::new();
            let names = if named {
                Some(s.names.as_ref().unwrap_or(&empty).as_slice())
            } else {
                None
            };
            encode_values(out, &s.values, names);
        }
        write_consistency(out, self.consistency);
        let mut fl = 0u8;
        if self.serial_consistency.is_some() {
            fl |= query_flags::SERIAL_CONSISTENCY;
        }
        if self.default_timestamp.is_some() {
            fl |= query_flags::DEFAULT_TIMESTAMP;
        }
        if named {
            fl |= query_flags::NAMES_FOR_VALUES;
        }
        out.push(fl);
        if let Some(c) = self.serial_consistency {
            write_consistency(out, c);
        }
        if let Some(t) = self.default_timestamp {
            write_long(out, t);
        }
    }
}

/// Event types a connection can REGISTER for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    TopologyChange,
    StatusChange,
    SchemaChange,
}

impl EventType {
    pub fn name(self) -> &'static str {
        match self {
            EventType::TopologyChange => "TOPOLOGY_CHANGE",
            EventType::StatusChange => "STATUS_CHANGE",
            EventType::SchemaChange => "SCHEMA_CHANGE",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "TOPOLOGY_CHANGE" => Some(EventType::TopologyChange),
            "STATUS_CHANGE" => Some(EventType::StatusChange),
            "SCHEMA_CHANGE" => Some(EventType::SchemaChange),
            _ => None,
        }
    }
}

impl Request {
    /// The request's opcode.
    pub fn opcode(&self) -> Opcode {
        match self {
            Request::Startup(_) => Opcode::Startup,
            Request::AuthResponse(_) => Opcode::AuthResponse,
            Request::Options => Opcode::Options,
            Request::Query(_) => Opcode::Query,
            Request::Prepare(_) => Opcode::Prepare,
            Request::Execute(_) => Opcode::Execute,
            Request::Batch(_) => Opcode::Batch,
            Request::Register(_) => Opcode::Register,
        }
    }

    /// Decodes a request body (decompressed, custom payload already removed).
    pub fn decode(opcode: Opcode, body: Bytes) -> DecodeResult<Self> {
        let mut r = Reader::new(body);
        Ok(match opcode {
            Opcode::Startup => Request::Startup(Startup {
                options: r.read_string_map()?,
            }),
            Opcode::AuthResponse => Request::AuthResponse(r.read_bytes()?),
            Opcode::Options => Request::Options,
            Opcode::Query => Request::Query(Query {
                query: r.read_long_string()?,
                params: QueryParams::decode(&mut r)?,
            }),
            Opcode::Prepare => Request::Prepare(Prepare {
                query: r.read_long_string()?,
            }),
            Opcode::Execute => Request::Execute(Execute {
                id: r.read_short_bytes()?,
                params: QueryParams::decode(&mut r)?,
            }),
            Opcode::Batch => Request::Batch(Batch::decode(&mut r)?),
            Opcode::Register => {
                let names = r.read_string_list()?;
                let mut types = Vec::with_capacity(names.len());
                for n in names {
                    match EventType::from_name(&n) {
                        Some(t) => types.push(t),
                        None => {
                            return Err(DecodeError::invalid(
                                "event type",
                                format!("Invalid value '{n}' for Type"),
                            ))
                        }
                    }
                }
                Request::Register(types)
            }
            other => {
                return Err(DecodeError::invalid(
                    "request",
                    format!("{} is not a request message", other.name()),
                ))
            }
        })
    }

    /// Encodes the request body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        match self {
            Request::Startup(s) => write_string_map(out, &s.options),
            Request::AuthResponse(t) => write_bytes(out, t.as_deref()),
            Request::Options => {}
            Request::Query(q) => {
                write_long_string(out, &q.query);
                q.params.encode(out);
            }
            Request::Prepare(p) => write_long_string(out, &p.query),
            Request::Execute(e) => {
                write_short_bytes(out, &e.id);
                e.params.encode(out);
            }
            Request::Batch(b) => b.encode(out),
            Request::Register(types) => {
                let names: Vec<&str> = types.iter().map(|t| t.name()).collect();
                write_string_list(out, &names);
            }
        }
    }

    /// A whole request frame (client side; used by tests and tools).
    pub fn encode_frame(
        &self,
        version: u8,
        stream: i16,
        compression: Option<Compression>,
    ) -> Vec<u8> {
        let mut body = Vec::new();
        self.encode_body(&mut body);
        let mut fl = 0;
        if let Some(c) = compression {
            if !body.is_empty() {
                body = c.compress(&body);
                fl |= flags::COMPRESSION;
            }
        }
        let header = FrameHeader {
            version,
            is_response: false,
            flags: fl,
            stream,
            opcode: self.opcode() as u8,
            length: body.len() as u32,
        };
        let mut out = header.encode().to_vec();
        out.extend_from_slice(&body);
        out
    }
}

/// A decoded request frame: the request plus what its frame header and prefix carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFrame {
    pub stream: i16,
    /// The client asked for tracing (flag 0x02).
    pub tracing: bool,
    /// Custom payload (flag 0x04, v4).
    pub custom_payload: Option<Vec<(String, Option<Bytes>)>>,
    pub request: Request,
}

impl RequestFrame {
    /// Decodes a request from its header and its *decompressed* body.
    pub fn decode(header: &FrameHeader, body: Bytes) -> DecodeResult<Self> {
        let opcode = Opcode::from_u8(header.opcode).ok_or_else(|| {
            DecodeError::invalid("opcode", format!("Unknown opcode {}", header.opcode))
        })?;
        let mut r = Reader::new(body);
        let custom_payload = if header.flags & flags::CUSTOM_PAYLOAD != 0 && header.version >= 4 {
            Some(r.read_bytes_map()?)
        } else {
            None
        };
        let rest = r.read_rest();
        Ok(RequestFrame {
            stream: header.stream,
            tracing: header.flags & flags::TRACING != 0,
            custom_payload,
            request: Request::decode(opcode, rest)?,
        })
    }
}
