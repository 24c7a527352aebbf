//! Typed request and response messages (spec §4, §9) and their body encodings.
//!
//! Requests are decoded from (decompressed) frame bodies into [`Request`]; responses are
//! encoded from [`Response`]. The opposite directions (request encoding, response
//! decoding) exist too, for tests and client-side tools, and are exercised by round trips.
//!
//! Invariants:
//! * Decoding never panics and never trusts a declared count or length beyond the bytes
//!   present (see [`super::codec::Reader`]); trailing bytes after a request body are
//!   ignored, as the spec asks of readers.
//! * Encoding is version-aware where the spec differs between v3 and v4: v3 has no
//!   partition-key indexes in PREPARED metadata, no warnings or custom payloads, no
//!   READ_FAILURE / WRITE_FAILURE / FUNCTION_FAILURE (sent as READ_TIMEOUT / WRITE_TIMEOUT
//!   / INVALID like Cassandra does), and no FUNCTION / AGGREGATE schema-change targets
//!   (sent as `UPDATED KEYSPACE`).
//! * The code of an error is derived from its [`ErrorKind`], so code and code-specific
//!   fields cannot disagree.

use super::codec::*;
use super::compression::Compression;
use super::frame::{flags, FrameHeader, Opcode, HEADER_LEN};
use super::types::{ColumnSpec, ColumnType, TableSpec};
use bytes::Bytes;
use std::net::SocketAddr;
use std::sync::Arc;

// ------------------------------------------------------------------------------------------
// Requests
// ------------------------------------------------------------------------------------------

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

// ------------------------------------------------------------------------------------------
// Errors
// ------------------------------------------------------------------------------------------

/// Cassandra's error codes (spec §9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorCode {
    ServerError = 0x0000,
    ProtocolError = 0x000A,
    BadCredentials = 0x0100,
    Unavailable = 0x1000,
    Overloaded = 0x1001,
    IsBootstrapping = 0x1002,
    TruncateError = 0x1003,
    WriteTimeout = 0x1100,
    ReadTimeout = 0x1200,
    ReadFailure = 0x1300,
    FunctionFailure = 0x1400,
    WriteFailure = 0x1500,
    SyntaxError = 0x2000,
    Unauthorized = 0x2100,
    Invalid = 0x2200,
    ConfigError = 0x2300,
    AlreadyExists = 0x2400,
    Unprepared = 0x2500,
}

impl ErrorCode {
    /// The numeric code.
    pub fn code(self) -> i32 {
        self as i32
    }

    pub fn from_code(code: i32) -> Option<Self> {
        use ErrorCode::*;
        Some(match code {
            0x0000 => ServerError,
            0x000A => ProtocolError,
            0x0100 => BadCredentials,
            0x1000 => Unavailable,
            0x1001 => Overloaded,
            0x1002 => IsBootstrapping,
            0x1003 => TruncateError,
            0x1100 => WriteTimeout,
            0x1200 => ReadTimeout,
            0x1300 => ReadFailure,
            0x1400 => FunctionFailure,
            0x1500 => WriteFailure,
            0x2000 => SyntaxError,
            0x2100 => Unauthorized,
            0x2200 => Invalid,
            0x2300 => ConfigError,
            0x2400 => AlreadyExists,
            0x2500 => Unprepared,
            _ => return None,
        })
    }
}

/// The `writeType` of write timeouts and failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WriteType {
    Simple,
    Batch,
    UnloggedBatch,
    Counter,
    BatchLog,
    Cas,
    View,
    Cdc,
}

impl WriteType {
    pub fn name(self) -> &'static str {
        match self {
            WriteType::Simple => "SIMPLE",
            WriteType::Batch => "BATCH",
            WriteType::UnloggedBatch => "UNLOGGED_BATCH",
            WriteType::Counter => "COUNTER",
            WriteType::BatchLog => "BATCH_LOG",
            WriteType::Cas => "CAS",
            WriteType::View => "VIEW",
            WriteType::Cdc => "CDC",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "SIMPLE" => WriteType::Simple,
            "BATCH" => WriteType::Batch,
            "UNLOGGED_BATCH" => WriteType::UnloggedBatch,
            "COUNTER" => WriteType::Counter,
            "BATCH_LOG" => WriteType::BatchLog,
            "CAS" => WriteType::Cas,
            "VIEW" => WriteType::View,
            "CDC" => WriteType::Cdc,
            _ => return None,
        })
    }
}

/// An error and its code-specific fields. The code follows from the variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    Server,
    Protocol,
    BadCredentials,
    Unavailable {
        consistency: Consistency,
        required: i32,
        alive: i32,
    },
    Overloaded,
    IsBootstrapping,
    TruncateError,
    WriteTimeout {
        consistency: Consistency,
        received: i32,
        block_for: i32,
        write_type: WriteType,
    },
    ReadTimeout {
        consistency: Consistency,
        received: i32,
        block_for: i32,
        data_present: bool,
    },
    ReadFailure {
        consistency: Consistency,
        received: i32,
        block_for: i32,
        num_failures: i32,
        data_present: bool,
    },
    FunctionFailure {
        keyspace: String,
        function: String,
        arg_types: Vec<String>,
    },
    WriteFailure {
        consistency: Consistency,
        received: i32,
        block_for: i32,
        num_failures: i32,
        write_type: WriteType,
    },
    SyntaxError,
    Unauthorized,
    Invalid,
    ConfigError,
    /// `table` is empty when a keyspace already exists.
    AlreadyExists {
        keyspace: String,
        table: String,
    },
    Unprepared {
        id: Bytes,
    },
}

impl ErrorKind {
    pub fn code(&self) -> ErrorCode {
        use ErrorKind as K;
        match self {
            K::Server => ErrorCode::ServerError,
            K::Protocol => ErrorCode::ProtocolError,
            K::BadCredentials => ErrorCode::BadCredentials,
            K::Unavailable { .. } => ErrorCode::Unavailable,
            K::Overloaded => ErrorCode::Overloaded,
            K::IsBootstrapping => ErrorCode::IsBootstrapping,
            K::TruncateError => ErrorCode::TruncateError,
            K::WriteTimeout { .. } => ErrorCode::WriteTimeout,
            K::ReadTimeout { .. } => ErrorCode::ReadTimeout,
            K::ReadFailure { .. } => ErrorCode::ReadFailure,
            K::FunctionFailure { .. } => ErrorCode::FunctionFailure,
            K::WriteFailure { .. } => ErrorCode::WriteFailure,
            K::SyntaxError => ErrorCode::SyntaxError,
            K::Unauthorized => ErrorCode::Unauthorized,
            K::Invalid => ErrorCode::Invalid,
            K::ConfigError => ErrorCode::ConfigError,
            K::AlreadyExists { .. } => ErrorCode::AlreadyExists,
            K::Unprepared { .. } => ErrorCode::Unprepared,
        }
    }
}

/// An ERROR response: kind (hence code) and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CqlError {
    pub kind: ErrorKind,
    pub message: String,
}

impl std::fmt::Display for CqlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?} (0x{:04x}): {}",
            self.code(),
            self.code().code(),
            self.message
        )
    }
}

impl std::error::Error for CqlError {}

impl CqlError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        CqlError {
            kind,
            message: message.into(),
        }
    }
    pub fn code(&self) -> ErrorCode {
        self.kind.code()
    }
    pub fn server(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Server, message)
    }
    pub fn protocol(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Protocol, message)
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Invalid, message)
    }
    pub fn syntax(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::SyntaxError, message)
    }
    pub fn overloaded(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Overloaded, message)
    }
    pub fn unprepared(id: Bytes) -> Self {
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        Self::new(
            ErrorKind::Unprepared { id },
            format!("Prepared query with ID {hex} not found (either the query was not prepared on this host (maybe the host has been restarted?) or you have prepared too many queries and it has been evicted from the internal cache)"),
        )
    }

    fn encode(&self, version: u8, out: &mut Vec<u8>) {
        use ErrorKind as K;
        // v3 has no *_FAILURE codes: send what Cassandra sends to v3 clients.
        let downgraded;
        let kind = match (&self.kind, version < 4) {
            (
                K::ReadFailure {
                    consistency,
                    received,
                    block_for,
                    data_present,
                    ..
                },
                true,
            ) => {
                downgraded = K::ReadTimeout {
                    consistency: *consistency,
                    received: *received,
                    block_for: *block_for,
                    data_present: *data_present,
                };
                &downgraded
            }
            (
                K::WriteFailure {
                    consistency,
                    received,
                    block_for,
                    write_type,
                    ..
                },
                true,
            ) => {
                downgraded = K::WriteTimeout {
                    consistency: *consistency,
                    received: *received,
                    block_for: *block_for,
                    write_type: *write_type,
                };
                &downgraded
            }
            (K::FunctionFailure { .. }, true) => &K::Invalid,
            (k, _) => k,
        };
        write_int(out, kind.code().code());
        write_string(out, &self.message);
        match kind {
            K::Unavailable {
                consistency,
                required,
                alive,
            } => {
                write_consistency(out, *consistency);
                write_int(out, *required);
                write_int(out, *alive);
            }
            K::WriteTimeout {
                consistency,
                received,
                block_for,
                write_type,
            } => {
                write_consistency(out, *consistency);
                write_int(out, *received);
                write_int(out, *block_for);
                write_string(out, write_type.name());
            }
            K::ReadTimeout {
                consistency,
                received,
                block_for,
                data_present,
            } => {
                write_consistency(out, *consistency);
                write_int(out, *received);
                write_int(out, *block_for);
                out.push(u8::from(*data_present));
            }
            K::ReadFailure {
                consistency,
                received,
                block_for,
                num_failures,
                data_present,
            } => {
                write_consistency(out, *consistency);
                write_int(out, *received);
                write_int(out, *block_for);
                write_int(out, *num_failures);
                out.push(u8::from(*data_present));
            }
            K::FunctionFailure {
                keyspace,
                function,
                arg_types,
            } => {
                write_string(out, keyspace);
                write_string(out, function);
                write_string_list(out, arg_types);
            }
            K::WriteFailure {
                consistency,
                received,
                block_for,
                num_failures,
                write_type,
            } => {
                write_consistency(out, *consistency);
                write_int(out, *received);
                write_int(out, *block_for);
                write_int(out, *num_failures);
                write_string(out, write_type.name());
            }
            K::AlreadyExists { keyspace, table } => {
                write_string(out, keyspace);
                write_string(out, table);
            }
            K::Unprepared { id } => write_short_bytes(out, id),
            _ => {}
        }
    }

    fn decode(r: &mut Reader) -> DecodeResult<Self> {
        use ErrorKind as K;
        let code = r.read_int()?;
        let message = r.read_string()?;
        let code = ErrorCode::from_code(code)
            .ok_or_else(|| DecodeError::invalid("error code", format!("0x{code:04x}")))?;
        let write_type = |r: &mut Reader| -> DecodeResult<WriteType> {
            let s = r.read_string()?;
            WriteType::from_name(&s).ok_or_else(|| DecodeError::invalid("write type", s))
        };
        let kind = match code {
            ErrorCode::ServerError => K::Server,
            ErrorCode::ProtocolError => K::Protocol,
            ErrorCode::BadCredentials => K::BadCredentials,
            ErrorCode::Unavailable => K::Unavailable {
                consistency: r.read_consistency()?,
                required: r.read_int()?,
                alive: r.read_int()?,
            },
            ErrorCode::Overloaded => K::Overloaded,
            ErrorCode::IsBootstrapping => K::IsBootstrapping,
            ErrorCode::TruncateError => K::TruncateError,
            ErrorCode::WriteTimeout => K::WriteTimeout {
                consistency: r.read_consistency()?,
                received: r.read_int()?,
                block_for: r.read_int()?,
                write_type: write_type(r)?,
            },
            ErrorCode::ReadTimeout => K::ReadTimeout {
                consistency: r.read_consistency()?,
                received: r.read_int()?,
                block_for: r.read_int()?,
                data_present: r.read_byte()? != 0,
            },
            ErrorCode::ReadFailure => K::ReadFailure {
                consistency: r.read_consistency()?,
                received: r.read_int()?,
                block_for: r.read_int()?,
                num_failures: r.read_int()?,
                data_present: r.read_byte()? != 0,
            },
            ErrorCode::FunctionFailure => K::FunctionFailure {
                keyspace: r.read_string()?,
                function: r.read_string()?,
                arg_types: r.read_string_list()?,
            },
            ErrorCode::WriteFailure => K::WriteFailure {
                consistency: r.read_consistency()?,
                received: r.read_int()?,
                block_for: r.read_int()?,
                num_failures: r.read_int()?,
                write_type: write_type(r)?,
            },
            ErrorCode::SyntaxError => K::SyntaxError,
            ErrorCode::Unauthorized => K::Unauthorized,
            ErrorCode::Invalid => K::Invalid,
            ErrorCode::ConfigError => K::ConfigError,
            ErrorCode::AlreadyExists => K::AlreadyExists {
                keyspace: r.read_string()?,
                table: r.read_string()?,
            },
            ErrorCode::Unprepared => K::Unprepared {
                id: r.read_short_bytes()?,
            },
        };
        Ok(CqlError { kind, message })
    }
}

// ------------------------------------------------------------------------------------------
// Results
// ------------------------------------------------------------------------------------------

/// Rows metadata flag bits (spec §4.2.5.2).
pub mod rows_flags {
    pub const GLOBAL_TABLES_SPEC: i32 = 0x0001;
    pub const HAS_MORE_PAGES: i32 = 0x0002;
    pub const NO_METADATA: i32 = 0x0004;
}

/// The column description of a result set, shareable between responses (a prepared
/// statement's result metadata is built once).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResultMetadata {
    /// When set, written once instead of per column (Cassandra sets it whenever all columns
    /// come from one table); each column's own `table` is then not written.
    pub global_table_spec: Option<TableSpec>,
    pub columns: Vec<ColumnSpec>,
}

impl ResultMetadata {
    /// Metadata for columns of one table, with a global table spec.
    pub fn for_table(table: TableSpec, columns: Vec<(String, ColumnType)>) -> Self {
        ResultMetadata {
            columns: columns
                .into_iter()
                .map(|(name, typ)| ColumnSpec::new(table.clone(), name, typ))
                .collect(),
            global_table_spec: Some(table),
        }
    }

    fn encode_specs(&self, version: u8, out: &mut Vec<u8>) {
        if let Some(g) = &self.global_table_spec {
            write_string(out, &g.keyspace);
            write_string(out, &g.table);
        }
        for c in &self.columns {
            if self.global_table_spec.is_none() {
                write_string(out, &c.table.keyspace);
                write_string(out, &c.table.table);
            }
            write_string(out, &c.name);
            c.typ.encode(version, out);
        }
    }

    fn decode_specs(r: &mut Reader, global: bool, count: usize) -> DecodeResult<Self> {
        let global_table_spec = if global {
            Some(TableSpec::new(r.read_string()?, r.read_string()?))
        } else {
            None
        };
        r.ensure_count(count, 4, "column specs")?;
        let mut columns = Vec::with_capacity(count);
        for _ in 0..count {
            let table = match &global_table_spec {
                Some(g) => g.clone(),
                None => TableSpec::new(r.read_string()?, r.read_string()?),
            };
            let name = r.read_string()?;
            let typ = ColumnType::decode(r)?;
            columns.push(ColumnSpec { table, name, typ });
        }
        Ok(ResultMetadata {
            global_table_spec,
            columns,
        })
    }
}

/// A page of rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rows {
    pub metadata: Arc<ResultMetadata>,
    /// Number of columns per row (equals `metadata.columns.len()` unless decoded from a
    /// response without metadata).
    pub column_count: usize,
    /// Write only the column count, not the specs (the request had Skip_metadata).
    pub no_metadata: bool,
    /// Present when more pages follow (Has_more_pages).
    pub paging_state: Option<Bytes>,
    pub rows_count: usize,
    /// `rows_count * column_count` concatenated `[bytes]` cells (see [`RowsBuilder`]).
    pub rows_content: Bytes,
}

/// Builds the `<rows_content>` of a Rows result cell by cell.
#[derive(Debug, Clone)]
pub struct RowsBuilder {
    column_count: usize,
    cells: usize,
    buf: Vec<u8>,
}

impl RowsBuilder {
    pub fn new(column_count: usize) -> Self {
        RowsBuilder {
            column_count,
            cells: 0,
            buf: Vec::new(),
        }
    }

    /// Appends the next cell (row-major); `None` is null.
    pub fn push(&mut self, cell: Option<&[u8]>) {
        write_bytes(&mut self.buf, cell);
        self.cells += 1;
    }

    /// Appends a whole row.
    pub fn push_row<'a>(&mut self, row: impl IntoIterator<Item = Option<&'a [u8]>>) {
        for c in row {
            self.push(c);
        }
    }

    /// Rows completed so far.
    pub fn rows(&self) -> usize {
        self.cells.checked_div(self.column_count).unwrap_or(0)
    }

    /// Bytes buffered so far (for page-size-in-bytes limits).
    pub fn byte_len(&self) -> usize {
        self.buf.len()
    }

    /// The result; `Err` if the cells do not fill whole rows.
    pub fn finish(self, metadata: Arc<ResultMetadata>) -> Result<Rows, CqlError> {
        if self.column_count != metadata.columns.len() {
            return Err(CqlError::server(format!(
                "rows builder: {} columns, but the metadata has {}",
                self.column_count,
                metadata.columns.len()
            )));
        }
        self.build(metadata, false)
    }

    /// The result without column specs, for a request that set Skip_metadata (the driver
    /// already has them from PREPARE): only the column count is written, and no specs are
    /// built for a response that would not carry them.
    pub fn finish_without_metadata(self) -> Result<Rows, CqlError> {
        static NONE: std::sync::OnceLock<Arc<ResultMetadata>> = std::sync::OnceLock::new();
        let none = Arc::clone(NONE.get_or_init(|| Arc::new(ResultMetadata::default())));
        self.build(none, true)
    }

    fn build(self, metadata: Arc<ResultMetadata>, no_metadata: bool) -> Result<Rows, CqlError> {
        if (self.column_count > 0 && !self.cells.is_multiple_of(self.column_count))
            || (self.column_count == 0 && self.cells != 0)
        {
            return Err(CqlError::server(format!(
                "rows builder: {} cells for {} columns",
                self.cells, self.column_count
            )));
        }
        Ok(Rows {
            column_count: self.column_count,
            rows_count: self.rows(),
            metadata,
            no_metadata,
            paging_state: None,
            rows_content: Bytes::from(self.buf),
        })
    }
}

impl Rows {
    /// Splits `rows_content` into rows of cells (client side / tests).
    pub fn decode_rows(&self) -> DecodeResult<Vec<Vec<Option<Bytes>>>> {
        let mut r = Reader::new(self.rows_content.clone());
        r.ensure_count(self.rows_count.saturating_mul(self.column_count), 4, "rows")?;
        (0..self.rows_count)
            .map(|_| (0..self.column_count).map(|_| r.read_bytes()).collect())
            .collect()
    }
}

/// Bind-marker metadata of a Prepared result.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PreparedMetadata {
    pub global_table_spec: Option<TableSpec>,
    /// Indexes of the bind markers forming the partition key, in key order (v4); empty if
    /// some partition key column is not bound by a plain marker.
    pub pk_indexes: Vec<u16>,
    pub columns: Vec<ColumnSpec>,
}

/// A Prepared result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub id: Bytes,
    pub metadata: PreparedMetadata,
    /// Result set columns; empty (sent as No_metadata with 0 columns) for non-SELECTs.
    pub result_metadata: Arc<ResultMetadata>,
}

/// CREATED / UPDATED / DROPPED.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaChangeType {
    Created,
    Updated,
    Dropped,
}

impl SchemaChangeType {
    pub fn name(self) -> &'static str {
        match self {
            SchemaChangeType::Created => "CREATED",
            SchemaChangeType::Updated => "UPDATED",
            SchemaChangeType::Dropped => "DROPPED",
        }
    }
}

/// What a schema change touched.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SchemaChangeTarget {
    Keyspace {
        keyspace: String,
    },
    Table {
        keyspace: String,
        table: String,
    },
    Type {
        keyspace: String,
        name: String,
    },
    Function {
        keyspace: String,
        name: String,
        arg_types: Vec<String>,
    },
    Aggregate {
        keyspace: String,
        name: String,
        arg_types: Vec<String>,
    },
}

/// A schema change (result or event body).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SchemaChange {
    pub change: SchemaChangeType,
    pub target: SchemaChangeTarget,
}

impl SchemaChange {
    fn encode(&self, version: u8, out: &mut Vec<u8>) {
        use SchemaChangeTarget as T;
        match (&self.target, version < 4) {
            // v3 has no function/aggregate targets: Cassandra reports the keyspace updated.
            (T::Function { keyspace, .. } | T::Aggregate { keyspace, .. }, true) => {
                write_string(out, SchemaChangeType::Updated.name());
                write_string(out, "KEYSPACE");
                write_string(out, keyspace);
            }
            (target, _) => {
                write_string(out, self.change.name());
                match target {
                    T::Keyspace { keyspace } => {
                        write_string(out, "KEYSPACE");
                        write_string(out, keyspace);
                    }
                    T::Table { keyspace, table } => {
                        write_string(out, "TABLE");
                        write_string(out, keyspace);
                        write_string(out, table);
                    }
                    T::Type { keyspace, name } => {
                        write_string(out, "TYPE");
                        write_string(out, keyspace);
                        write_string(out, name);
                    }
                    T::Function {
                        keyspace,
                        name,
                        arg_types,
                    }
                    | T::Aggregate {
                        keyspace,
                        name,
                        arg_types,
                    } => {
                        write_string(
                            out,
                            if matches!(target, T::Function { .. }) {
                                "FUNCTION"
                            } else {
                                "AGGREGATE"
                            },
                        );
                        write_string(out, keyspace);
                        write_string(out, name);
                        write_string_list(out, arg_types);
                    }
                }
            }
        }
    }

    fn decode(r: &mut Reader) -> DecodeResult<Self> {
        use SchemaChangeTarget as T;
        let change = match r.read_string()?.as_str() {
            "CREATED" => SchemaChangeType::Created,
            "UPDATED" => SchemaChangeType::Updated,
            "DROPPED" => SchemaChangeType::Dropped,
            other => return Err(DecodeError::invalid("schema change type", other)),
        };
        let target = match r.read_string()?.as_str() {
            "KEYSPACE" => T::Keyspace {
                keyspace: r.read_string()?,
            },
            "TABLE" => T::Table {
                keyspace: r.read_string()?,
                table: r.read_string()?,
            },
            "TYPE" => T::Type {
                keyspace: r.read_string()?,
                name: r.read_string()?,
            },
            "FUNCTION" => T::Function {
                keyspace: r.read_string()?,
                name: r.read_string()?,
                arg_types: r.read_string_list()?,
            },
            "AGGREGATE" => T::Aggregate {
                keyspace: r.read_string()?,
                name: r.read_string()?,
                arg_types: r.read_string_list()?,
            },
            other => return Err(DecodeError::invalid("schema change target", other)),
        };
        Ok(SchemaChange { change, target })
    }
}

/// The body of a RESULT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultBody {
    Void,
    Rows(Rows),
    SetKeyspace(String),
    Prepared(Prepared),
    SchemaChange(SchemaChange),
}

fn encode_rows_metadata(
    out: &mut Vec<u8>,
    version: u8,
    metadata: &ResultMetadata,
    column_count: usize,
    no_metadata: bool,
    paging_state: Option<&Bytes>,
) {
    let no_metadata = no_metadata || metadata.columns.is_empty();
    let mut fl = 0;
    if no_metadata {
        fl |= rows_flags::NO_METADATA;
    } else if metadata.global_table_spec.is_some() {
        fl |= rows_flags::GLOBAL_TABLES_SPEC;
    }
    if paging_state.is_some() {
        fl |= rows_flags::HAS_MORE_PAGES;
    }
    write_int(out, fl);
    write_int(out, i32::try_from(column_count).unwrap_or(i32::MAX));
    if let Some(p) = paging_state {
        write_bytes(out, Some(p));
    }
    if !no_metadata {
        metadata.encode_specs(version, out);
    }
}

fn decode_rows_metadata(
    r: &mut Reader,
) -> DecodeResult<(ResultMetadata, usize, bool, Option<Bytes>)> {
    let fl = r.read_int()?;
    let count = r.read_int()?;
    let count = usize::try_from(count)
        .map_err(|_| DecodeError::invalid("column count", format!("{count}")))?;
    let paging_state = if fl & rows_flags::HAS_MORE_PAGES != 0 {
        r.read_bytes()?
    } else {
        None
    };
    let no_metadata = fl & rows_flags::NO_METADATA != 0;
    let metadata = if no_metadata {
        ResultMetadata::default()
    } else {
        ResultMetadata::decode_specs(r, fl & rows_flags::GLOBAL_TABLES_SPEC != 0, count)?
    };
    Ok((metadata, count, no_metadata, paging_state))
}

impl ResultBody {
    fn encode(&self, version: u8, out: &mut Vec<u8>) {
        match self {
            ResultBody::Void => write_int(out, 0x0001),
            ResultBody::Rows(rows) => {
                write_int(out, 0x0002);
                encode_rows_metadata(
                    out,
                    version,
                    &rows.metadata,
                    rows.column_count,
                    rows.no_metadata,
                    rows.paging_state.as_ref(),
                );
                write_int(out, i32::try_from(rows.rows_count).unwrap_or(i32::MAX));
                out.extend_from_slice(&rows.rows_content);
            }
            ResultBody::SetKeyspace(ks) => {
                write_int(out, 0x0003);
                write_string(out, ks);
            }
            ResultBody::Prepared(p) => {
                write_int(out, 0x0004);
                write_short_bytes(out, &p.id);
                let m = &p.metadata;
                write_int(
                    out,
                    if m.global_table_spec.is_some() {
                        rows_flags::GLOBAL_TABLES_SPEC
                    } else {
                        0
                    },
                );
                write_int(out, i32::try_from(m.columns.len()).unwrap_or(i32::MAX));
                if version >= 4 {
                    write_int(out, i32::try_from(m.pk_indexes.len()).unwrap_or(i32::MAX));
                    for &i in &m.pk_indexes {
                        write_short(out, i);
                    }
                }
                ResultMetadata {
                    global_table_spec: m.global_table_spec.clone(),
                    columns: m.columns.clone(),
                }
                .encode_specs(version, out);
                let rm = &p.result_metadata;
                encode_rows_metadata(out, version, rm, rm.columns.len(), false, None);
            }
            ResultBody::SchemaChange(sc) => {
                write_int(out, 0x0005);
                sc.encode(version, out);
            }
        }
    }

    fn decode(version: u8, r: &mut Reader) -> DecodeResult<Self> {
        Ok(match r.read_int()? {
            0x0001 => ResultBody::Void,
            0x0002 => {
                let (metadata, column_count, no_metadata, paging_state) = decode_rows_metadata(r)?;
                let rows_count = r.read_int()?;
                let rows_count = usize::try_from(rows_count)
                    .map_err(|_| DecodeError::invalid("rows count", format!("{rows_count}")))?;
                ResultBody::Rows(Rows {
                    metadata: Arc::new(metadata),
                    column_count,
                    no_metadata,
                    paging_state,
                    rows_count,
                    rows_content: r.read_rest(),
                })
            }
            0x0003 => ResultBody::SetKeyspace(r.read_string()?),
            0x0004 => {
                let id = r.read_short_bytes()?;
                let fl = r.read_int()?;
                let count = r.read_int()?;
                let count = usize::try_from(count)
                    .map_err(|_| DecodeError::invalid("column count", format!("{count}")))?;
                let mut pk_indexes = Vec::new();
                if version >= 4 {
                    let n = r.read_int()?;
                    let n = usize::try_from(n)
                        .map_err(|_| DecodeError::invalid("pk count", format!("{n}")))?;
                    r.ensure_count(n, 2, "pk indexes")?;
                    for _ in 0..n {
                        pk_indexes.push(r.read_short()?);
                    }
                }
                let specs = ResultMetadata::decode_specs(
                    r,
                    fl & rows_flags::GLOBAL_TABLES_SPEC != 0,
                    count,
                )?;
                let (result_metadata, _, _, _) = decode_rows_metadata(r)?;
                ResultBody::Prepared(Prepared {
                    id,
                    metadata: PreparedMetadata {
                        global_table_spec: specs.global_table_spec,
                        pk_indexes,
                        columns: specs.columns,
                    },
                    result_metadata: Arc::new(result_metadata),
                })
            }
            0x0005 => ResultBody::SchemaChange(SchemaChange::decode(r)?),
            k => return Err(DecodeError::invalid("result kind", format!("{k}"))),
        })
    }
}

// ------------------------------------------------------------------------------------------
// Events and responses
// ------------------------------------------------------------------------------------------

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

#[cfg(test)]
#[path = "message_tests.rs"]
mod tests;
