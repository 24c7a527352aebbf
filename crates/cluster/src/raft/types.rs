//! The Raft group's vocabulary: openraft's type configuration and the members' ids. A leaf:
//! the log store, the state machine, the network and the group all name these.

use super::command::{Command, CommandResult};
// `declare_raft_types!` names its default snapshot data type, `Cursor`, unqualified.
use std::io::Cursor;

openraft::declare_raft_types!(
    /// Cairn's Raft types: commands on the replicated dictionary.
    pub TypeConfig: D = Command, R = CommandResult
);

/// A member's id in the group.
pub type NodeId = u64;
