//! ERROR responses (spec §9): codes, their code-specific fields ([`ErrorKind`]) and
//! [`CqlError`], whose code follows from its kind.

use crate::codec::*;
use bytes::Bytes;

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

    pub(crate) fn encode(&self, version: u8, out: &mut Vec<u8>) {
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

    pub(crate) fn decode(r: &mut Reader) -> DecodeResult<Self> {
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
