//! The node's persistent identity: its host id and tokens.
//!
//! Both are made on the node's first start and kept in the data directory (`host_id`: the
//! 16 bytes of a version-4 UUID, as before; `tokens`: one token per line), written
//! atomically. From then on they never change: drivers key their token maps by host id, and
//! data placed by the tokens stays where it is. As in Cassandra, a later `initial_token`
//! is ignored for a node that already has tokens (with a warning), and changing `num_tokens`
//! after the first start is refused.

use crate::error::{Error, Result};
use crate::node::HostId;
use crate::ring::TokenRing;
use crate::tokens;
use cairn_engine::model::Token;
use std::path::Path;

const HOST_ID_FILE: &str = "host_id";
const TOKENS_FILE: &str = "tokens";

/// A node's host id and tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeIdentity {
    /// Host id.
    pub host_id: HostId,
    /// Tokens, sorted.
    pub tokens: Vec<Token>,
}

/// How tokens are chosen on first start (the configuration's `num_tokens` and
/// `initial_token`).
#[derive(Debug, Clone, Default)]
pub struct TokenConfig {
    /// `num_tokens`.
    pub num_tokens: usize,
    /// `initial_token`, when set.
    pub initial_token: Option<String>,
}

impl NodeIdentity {
    /// The identity kept in `dir`, made (and kept) on first start: tokens chosen for joining
    /// `ring` (empty for the first node of a cluster). Returns warnings for the log.
    pub fn load_or_create(
        dir: &Path,
        config: &TokenConfig,
        ring: &TokenRing,
    ) -> Result<(NodeIdentity, Vec<String>)> {
        let mut warnings = Vec::new();
        let host_id = load_or_create_host_id(dir)?;
        let path = dir.join(TOKENS_FILE);
        let tokens = match std::fs::read_to_string(&path) {
            Ok(text) => {
                let tokens = parse_tokens_file(&text).map_err(|message| Error::File {
                    path: path.clone(),
                    message,
                })?;
                if config.initial_token.is_none() && tokens.len() != config.num_tokens {
                    return Err(Error::Config(format!(
                        "Cannot change the number of tokens from {} to {} (num_tokens); the \
                         node's tokens are in {}",
                        tokens.len(),
                        config.num_tokens,
                        path.display()
                    )));
                }
                if let Some(initial) = &config.initial_token {
                    if tokens::parse_initial_tokens(initial)? != tokens {
                        warnings.push(format!(
                            "initial_token is ignored: this node already has its tokens (in {})",
                            path.display()
                        ));
                    }
                }
                tokens
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let tokens = match &config.initial_token {
                    Some(text) => {
                        let t = tokens::parse_initial_tokens(text)?;
                        if t.is_empty() {
                            return Err(Error::InvalidToken(text.clone()));
                        }
                        t
                    }
                    None => tokens::allocate(ring, host_id, config.num_tokens),
                };
                let text: String = tokens.iter().map(|t| format!("{t}\n")).collect();
                cairn_engine::io::write_file_atomically(&path, text.as_bytes())?;
                tokens
            }
            Err(source) => return Err(Error::Io { path, source }),
        };
        Ok((NodeIdentity { host_id, tokens }, warnings))
    }
}

/// The tokens kept in `dir`, if the node has chosen them already.
pub fn saved_tokens(dir: &Path) -> Result<Option<Vec<Token>>> {
    let path = dir.join(TOKENS_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => parse_tokens_file(&text)
            .map(Some)
            .map_err(|message| Error::File { path, message }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Io { path, source }),
    }
}

/// The host id kept in `dir`, made (and kept) on first start. A joining node needs it
/// before its tokens: it names the node in the Raft group whose ring the tokens are chosen
/// against.
pub fn load_or_create_host_id(dir: &Path) -> Result<HostId> {
    let path = dir.join(HOST_ID_FILE);
    match std::fs::read(&path) {
        Ok(b) => match <[u8; 16]>::try_from(b.as_slice()) {
            Ok(id) => Ok(HostId(id)),
            Err(_) => Err(Error::File {
                path,
                message: format!("a host id is 16 bytes, this file has {}", b.len()),
            }),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let id = *uuid::Uuid::new_v4().as_bytes();
            cairn_engine::io::write_file_atomically(&path, &id)?;
            Ok(HostId(id))
        }
        Err(source) => Err(Error::Io { path, source }),
    }
}

fn parse_tokens_file(text: &str) -> std::result::Result<Vec<Token>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        match line.parse::<i64>() {
            Ok(t) if t != i64::MIN => out.push(Token(t)),
            _ => return Err(format!("line {}: `{line}` is not a token", n + 1)),
        }
    }
    out.sort_unstable();
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn config(n: usize) -> TokenConfig {
        TokenConfig {
            num_tokens: n,
            initial_token: None,
        }
    }

    #[test]
    fn made_once_then_kept() {
        let dir = tempfile::tempdir().unwrap();
        let ring = TokenRing::default();
        let (a, w) = NodeIdentity::load_or_create(dir.path(), &config(16), &ring).unwrap();
        assert!(w.is_empty());
        assert_eq!(a.tokens.len(), 16);
        let (b, _) = NodeIdentity::load_or_create(dir.path(), &config(16), &ring).unwrap();
        assert_eq!(a, b);
        // The host id file keeps its old format: the UUID's 16 bytes.
        assert_eq!(
            std::fs::read(dir.path().join("host_id")).unwrap(),
            a.host_id.0
        );
    }

    #[test]
    fn initial_token_first_then_ignored_and_num_tokens_fixed() {
        let dir = tempfile::tempdir().unwrap();
        let ring = TokenRing::default();
        let first = TokenConfig {
            num_tokens: 1,
            initial_token: Some("-5,7".into()),
        };
        let (id, _) = NodeIdentity::load_or_create(dir.path(), &first, &ring).unwrap();
        assert_eq!(id.tokens, [Token(-5), Token(7)]);
        let later = TokenConfig {
            num_tokens: 1,
            initial_token: Some("100".into()),
        };
        let (again, w) = NodeIdentity::load_or_create(dir.path(), &later, &ring).unwrap();
        assert_eq!(again.tokens, id.tokens);
        assert!(w[0].contains("initial_token is ignored"), "{w:?}");
        let e = NodeIdentity::load_or_create(dir.path(), &config(16), &ring).unwrap_err();
        assert!(
            e.to_string()
                .contains("Cannot change the number of tokens from 2 to 16"),
            "{e}"
        );
    }

    #[test]
    fn damaged_files_name_themselves() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("host_id"), b"short").unwrap();
        let e = NodeIdentity::load_or_create(dir.path(), &config(1), &TokenRing::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("host_id") && e.contains("16 bytes"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tokens"), "12\nabc\n").unwrap();
        let e = NodeIdentity::load_or_create(dir.path(), &config(2), &TokenRing::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("tokens") && e.contains("line 2"), "{e}");
    }
}
