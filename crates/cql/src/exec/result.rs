//! What a statement answers: rows with their column specs, a schema change, a keyspace
//! set, or nothing — the vocabulary every statement kind returns in.

use bytes::Bytes;
use cairn_engine::model::types::CqlType;
use std::sync::Arc;

/// A result column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSpec {
    /// Keyspace of the table.
    pub keyspace: String,
    /// Table.
    pub table: String,
    /// Column name (or alias, or `[ttl]`-style name for bind variables).
    pub name: String,
    /// Type.
    pub ty: CqlType,
}

/// Rows of a result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResultSet {
    /// Columns (shared: a prepared SELECT's plan hands the same specs to every result).
    pub columns: Arc<[ColumnSpec]>,
    /// Rows of serialized values (`None` = null).
    pub rows: Vec<Vec<Option<Bytes>>>,
    /// Where the next page starts, when there is one.
    pub paging_state: Option<Bytes>,
}

/// What a schema change changed (for RESULT SchemaChange and EVENTs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Created,
    Updated,
    Dropped,
}

/// A schema change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaChange {
    /// Created / updated / dropped.
    pub change: ChangeKind,
    /// Keyspace.
    pub keyspace: String,
    /// Table, when the change is a table's.
    pub table: Option<String>,
    /// Whether the change is the user type named `table` (drivers get a TYPE target).
    pub is_type: bool,
}

impl SchemaChange {
    /// A change of `keyspace`, or of its `table`.
    pub fn new(change: ChangeKind, keyspace: &str, table: Option<&str>) -> SchemaChange {
        SchemaChange {
            change,
            keyspace: keyspace.to_string(),
            table: table.map(str::to_string),
            is_type: false,
        }
    }

    /// A change of the user type `keyspace.name`.
    pub fn of_type(change: ChangeKind, keyspace: &str, name: &str) -> SchemaChange {
        SchemaChange {
            is_type: true,
            ..SchemaChange::new(change, keyspace, Some(name))
        }
    }
}

/// The result of a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing to return.
    Void,
    /// Rows.
    Rows(ResultSet),
    /// `USE ks` succeeded.
    SetKeyspace(String),
    /// A DDL statement succeeded.
    SchemaChange(SchemaChange),
    /// Another outcome with warnings for the client, sent in the native protocol's warnings
    /// (as Cassandra's `ClientWarn`): a replication factor above the number of nodes, a batch
    /// over `batch_size_warn_threshold`, …. Never nested and never with empty warnings (see
    /// [`Outcome::with_warnings`]).
    Warned(Box<Outcome>, Vec<String>),
}

impl Outcome {
    /// This outcome with `warnings` for the client (itself when there are none).
    pub fn with_warnings(self, mut warnings: Vec<String>) -> Outcome {
        if warnings.is_empty() {
            return self;
        }
        match self {
            Outcome::Warned(inner, mut before) => {
                before.append(&mut warnings);
                Outcome::Warned(inner, before)
            }
            other => Outcome::Warned(Box::new(other), warnings),
        }
    }

    /// The outcome without its warnings, and the warnings.
    pub fn into_parts(self) -> (Outcome, Vec<String>) {
        match self {
            Outcome::Warned(inner, warnings) => (*inner, warnings),
            other => (other, Vec::new()),
        }
    }

    /// Whether a schema change happened (warnings or not).
    pub fn is_schema_change(&self) -> bool {
        match self {
            Outcome::SchemaChange(_) => true,
            Outcome::Warned(inner, _) => inner.is_schema_change(),
            _ => false,
        }
    }
}
