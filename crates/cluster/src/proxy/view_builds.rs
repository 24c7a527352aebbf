//! Where each view build stands on this node, kept durably so that a build cut by a restart
//! (SIGKILL included) resumes where it stopped — what Cassandra keeps in
//! `system.view_builds_in_progress` and `system.built_views`.
//!
//! One small file per view in the engine's data directory, `view_build-<view id in hex>`,
//! beside the keyspace directories (the engine skips plain files there), replaced atomically
//! (`cairn_engine::io::write_file_atomically`: write, sync, rename, sync the directory). A
//! file rather than a table of the engine: the engine's tables all come from the schema log,
//! which a ring shares, while this state is one node's own; a file written whole cannot be
//! half-updated. Its text, one field a line:
//!
//! ```text
//! building            (or: built)
//! <last token>        (building only: the token of the last partition done, or `-` for none)
//! <keys built>        (building only: base partitions read so far)
//! ```
//!
//! Invariants: a checkpoint names a token only once the view updates of every partition up to
//! it are in the commitlog and the commitlog is synced ([`cairn_engine::Database::sync_commitlog`]),
//! so a file never claims more than a crash (even of the OS) keeps; a build resumes at the
//! checkpoint's token *inclusive* (partitions sharing a token are read again, which rewrites
//! the same view rows at the same timestamps: nothing duplicated); a view without a file has
//! never finished building here and is built from the start (a file unreadable or damaged
//! counts as none — building again is always safe, only slower).

use cairn_engine::model::Token;
use std::collections::HashSet;
use std::path::PathBuf;

/// File name prefix.
const PREFIX: &str = "view_build-";

/// A view's build on this node, as last saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildState {
    /// Started, not finished: resume at `last_token` (inclusive; `None`: the start).
    Building {
        last_token: Option<Token>,
        keys_built: u64,
    },
    /// Finished: every base partition this node held when it started was read.
    Built,
}

impl BuildState {
    fn encode(&self) -> String {
        match self {
            BuildState::Built => "built\n".to_string(),
            BuildState::Building {
                last_token,
                keys_built,
            } => {
                let t = last_token.map_or("-".to_string(), |t| t.0.to_string());
                format!("building\n{t}\n{keys_built}\n")
            }
        }
    }

    fn decode(text: &str) -> Option<BuildState> {
        let mut lines = text.lines();
        match lines.next()? {
            "built" => Some(BuildState::Built),
            "building" => {
                let last_token = match lines.next()? {
                    "-" => None,
                    t => Some(Token(t.parse().ok()?)),
                };
                let keys_built = lines.next()?.parse().ok()?;
                Some(BuildState::Building {
                    last_token,
                    keys_built,
                })
            }
            _ => None,
        }
    }
}

/// The build files of one node's data directory (see the module doc).
pub struct BuildFiles {
    dir: PathBuf,
}

impl BuildFiles {
    /// The files under `dir` (the engine's data directory).
    pub fn new(dir: PathBuf) -> BuildFiles {
        BuildFiles { dir }
    }

    fn path(&self, view: u128) -> PathBuf {
        self.dir.join(format!("{PREFIX}{view:032x}"))
    }

    /// View `view`'s saved state; `None` when it has none (or a damaged one, logged).
    pub fn load(&self, view: u128) -> Option<BuildState> {
        let path = self.path(view);
        let text = std::fs::read_to_string(&path).ok()?;
        let state = BuildState::decode(&text);
        if state.is_none() {
            tracing::warn!(
                "{}: damaged view build state, building again",
                path.display()
            );
        }
        state
    }

    /// Saves view `view`'s state.
    pub fn save(&self, view: u128, state: BuildState) -> cairn_engine::Result<()> {
        cairn_engine::io::write_file_atomically(&self.path(view), state.encode().as_bytes())
    }

    /// Removes the state of every view not in `keep` (dropped views).
    pub fn retain(&self, keep: &HashSet<u128>) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_prefix(PREFIX))
                .and_then(|h| u128::from_str_radix(h, 16).ok())
            else {
                continue;
            };
            if !keep.contains(&id) {
                if let Err(err) = std::fs::remove_file(e.path()) {
                    tracing::warn!("cannot remove {}: {err}", e.path().display());
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_damage_reads_as_none_and_retain_drops_others() {
        let dir = tempfile::tempdir().unwrap();
        let files = BuildFiles::new(dir.path().to_path_buf());
        assert_eq!(files.load(7), None);
        let s = BuildState::Building {
            last_token: Some(Token(-42)),
            keys_built: 10,
        };
        files.save(7, s).unwrap();
        assert_eq!(files.load(7), Some(s));
        let start = BuildState::Building {
            last_token: None,
            keys_built: 0,
        };
        files.save(8, start).unwrap();
        assert_eq!(files.load(8), Some(start));
        files.save(8, BuildState::Built).unwrap();
        assert_eq!(files.load(8), Some(BuildState::Built));
        std::fs::write(files.path(9), "building\nx\n").unwrap();
        assert_eq!(files.load(9), None);
        files.retain(&HashSet::from([8]));
        assert_eq!(files.load(7), None);
        assert_eq!(files.load(8), Some(BuildState::Built));
        assert!(!files.path(9).exists());
    }
}
