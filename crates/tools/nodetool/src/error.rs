//! A failed nodetool command: the text for stderr and nodetool's exit code (1 for bad use,
//! 2 for errors the node reported).

use crate::client::ClientError;
use cairn_server::rest::json::Json;

/// A failed command: what to print on stderr and the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodetoolError {
    /// The text for stderr (without trailing newline).
    pub message: String,
    /// The process exit code.
    pub exit_code: i32,
}

const SEE_HELP: &str = "See 'nodetool help' or 'nodetool help <command>'.";

/// Bad use (exit 1), with nodetool's help hint.
pub fn bad_use(message: impl std::fmt::Display) -> NodetoolError {
    NodetoolError {
        message: format!("nodetool: {message}\n{SEE_HELP}"),
        exit_code: 1,
    }
}

impl From<ClientError> for NodetoolError {
    fn from(e: ClientError) -> Self {
        match e {
            ClientError::Connect { .. }
            | ClientError::Tls { .. }
            | ClientError::Unauthorized { .. } => NodetoolError {
                message: format!("nodetool: {e}"),
                exit_code: 1,
            },
            other => NodetoolError {
                message: format!("error: {other}"),
                exit_code: 2,
            },
        }
    }
}

pub fn unexpected(what: &str, v: &Json) -> NodetoolError {
    NodetoolError {
        message: format!("error: unexpected {what} response: {}", v.to_text()),
        exit_code: 2,
    }
}
