//! Materialized views' definitions: a view is a table (its own columns, key and options,
//! stored and replicated like any table) whose [`TableOptions::extra`] also names its base
//! table, whether it selects every base column, and its WHERE clause. Keeping the
//! definition inside the table's schema means a view travels through the schema log, the
//! `schema.cairn` file and commitlog replay exactly as a table does, with no second format.
//!
//! Invariants (checked by CREATE MATERIALIZED VIEW, relied on by view maintenance): the
//! base is a table of the same keyspace, never a view; every base primary-key column is a
//! view primary-key column; at most one other view key column, a base regular column; every
//! view column has the base column's name and type; the WHERE clause restricts every view
//! key column (`IS NOT NULL`, or a relation on a base key column kept as the view's
//! [`super::view_filter`]) and nothing else, so a base row has a view row exactly when it is
//! live, its view key columns are all set and its key satisfies the filter.
//!
//! A secondary index is a hidden view of the same form (keyed by the indexed value, see
//! [`super::index`]): the maintenance reads only this definition, plus the index's computed
//! `idx_token` key column.

use super::{ColumnKind, TableOptions, TableSchema};

const BASE: &str = "view.base_table";
const INCLUDE_ALL: &str = "view.include_all_columns";
const WHERE: &str = "view.where_clause";
const NOT_NULL: &str = "view.not_null";
const STRICT: &str = "view.strict_liveness";

/// What makes a table a view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewDef {
    /// The base table's name (same keyspace).
    pub base: String,
    /// `SELECT *`: base columns added later join the view.
    pub include_all_columns: bool,
    /// The WHERE clause as CQL text (`system_schema.views.where_clause`, DESCRIBE).
    pub where_clause: String,
    /// The columns the WHERE clause restricts with `IS NOT NULL` (every view key column,
    /// maybe others): a base row has a view row only when all of them are set.
    pub not_null: Vec<String>,
}

impl ViewDef {
    /// Records the definition in a view's options.
    pub fn store(&self, o: &mut TableOptions) {
        o.extra
            .retain(|(k, _)| ![BASE, INCLUDE_ALL, WHERE, NOT_NULL].contains(&k.as_str()));
        o.extra.push((BASE.into(), self.base.clone()));
        o.extra
            .push((INCLUDE_ALL.into(), self.include_all_columns.to_string()));
        o.extra.push((WHERE.into(), self.where_clause.clone()));
        // NUL cannot appear in a CQL identifier's text as stored here.
        o.extra.push((NOT_NULL.into(), self.not_null.join("\0")));
    }

    /// The definition a table's options hold, if it is a view.
    pub fn of(o: &TableOptions) -> Option<ViewDef> {
        let get = |key: &str| o.extra.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        Some(ViewDef {
            base: get(BASE)?.clone(),
            include_all_columns: get(INCLUDE_ALL).is_some_and(|v| v == "true"),
            where_clause: get(WHERE).cloned().unwrap_or_default(),
            not_null: get(NOT_NULL)
                .map(|v| {
                    v.split('\0')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        })
    }
}

/// Which rows of a base partition have entries in a view ([`TableSchema::entry_rows`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryRows {
    /// Its clustering rows (a materialized view, most indexes).
    Clustering,
    /// Its static row only (an index on a static column): one entry per partition.
    Static,
    /// Both (an index on a partition key column, as Cassandra's: a partition holding a
    /// static row and no clustering row is found through it too). The static row's entry
    /// is clustered by the token and the base partition key only, a prefix of the rows'.
    Both,
}

impl TableSchema {
    /// The view definition, when this table is a materialized view.
    pub fn view(&self) -> Option<ViewDef> {
        ViewDef::of(&self.options)
    }

    /// Whether this table is a materialized view.
    pub fn is_view(&self) -> bool {
        self.options.extra.iter().any(|(k, _)| k == BASE)
    }

    /// Whether `view` (a view's schema) is a view of this table.
    pub fn has_view(&self, view: &TableSchema) -> bool {
        view.keyspace == self.keyspace && view.view().is_some_and(|d| d.base == self.name)
    }

    /// Cassandra's strict liveness (`enforceStrictLiveness`): true for a view keyed by a base
    /// regular column, whose rows live only while their marker (the key column's liveness)
    /// does. Recorded in the view's options when it is made ([`TableSchema::set_view_base`]),
    /// since reads of the view do not know its base.
    pub fn strict_liveness(&self) -> bool {
        self.options
            .extra
            .iter()
            .any(|(k, v)| k == STRICT && v == "true")
    }

    /// Records what a view's reads need of its base `base` (its strict liveness); every
    /// view schema (a materialized view, a hidden index view) is made with it.
    pub fn set_view_base(&mut self, base: &TableSchema) {
        let strict = self.view_key_regular(base).is_some();
        self.options.extra.retain(|(k, _)| k != STRICT);
        if strict {
            self.options.extra.push((STRICT.into(), "true".into()));
        }
    }

    /// Which rows of a base partition (of `base`) have entries in this view.
    pub fn entry_rows(&self, base: &TableSchema) -> EntryRows {
        if !base.columns_of(ColumnKind::Clustering).any(|_| true) {
            // No static row without clustering columns.
            return EntryRows::Clustering;
        }
        if self
            .view_key_regular(base)
            .is_some_and(|c| c.kind == ColumnKind::Static)
        {
            return EntryRows::Static;
        }
        let on_partition_key = self.is_index()
            && self
                .columns_of(ColumnKind::PartitionKey)
                .next()
                .and_then(|c| base.column(&c.name))
                .is_some_and(|c| c.kind == ColumnKind::PartitionKey);
        if on_partition_key {
            EntryRows::Both
        } else {
            EntryRows::Clustering
        }
    }

    /// Whether maintaining this view needs its base partitions' static row.
    pub fn needs_static_row(&self, base: &TableSchema) -> bool {
        self.entry_rows(base) != EntryRows::Clustering
    }

    /// The base regular column in a view's primary key, if any (at most one); for an index
    /// on a static column, that column (a materialized view has no static column).
    pub fn view_key_regular<'a>(&self, base: &'a TableSchema) -> Option<&'a super::ColumnDef> {
        self.columns
            .iter()
            .filter(|c| matches!(c.kind, ColumnKind::PartitionKey | ColumnKind::Clustering))
            .filter_map(|c| base.column(&c.name))
            .find(|b| matches!(b.kind, ColumnKind::Regular | ColumnKind::Static))
    }
}
