//! Secondary indexes' definitions. A global index (ScyllaDB's design) is a hidden
//! materialized view of its base table: the view's partition key is the indexed value, its
//! clustering columns the base partition key's token ([`IDX_TOKEN`], a bigint), then the base
//! partition key and clustering columns; it selects no other column. A local index is keyed
//! by the base partition key, clustering (indexed value, base clustering columns).
//!
//! The hidden view is a table of the schema log like any view, with its [`ViewDef`] and, in
//! the same options, this definition (the index's name, its target as Cassandra writes it in
//! `system_schema.indexes.options['target']`, and whether it is local). Keeping it there,
//! rather than in the base table's schema, means view maintenance, the background build,
//! the schema log, commitlog replay and TRUNCATE treat it as a view with no second path;
//! the CQL catalog keeps it out of every listing of tables and views.
//!
//! Invariant (checked by CREATE INDEX): the hidden table is named [`backing_table`] of the
//! index name, its ViewDef names the base table, and its key columns are as above.
//!
//! [`ViewDef`]: super::view::ViewDef

use super::{TableOptions, TableSchema};

const NAME: &str = "index.name";
const TARGET: &str = "index.target";
const LOCAL: &str = "index.local";

/// The computed clustering column of a global index: the token of the base partition key,
/// so an index partition lists base rows in token order.
pub const IDX_TOKEN: &str = "idx_token";

/// The hidden view's table name for index `name` (ScyllaDB's naming).
pub fn backing_table(name: &str) -> String {
    format!("{name}_index")
}

/// What makes a (hidden view) table a secondary index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDef {
    /// The index name.
    pub name: String,
    /// The target as `system_schema.indexes` shows it (`v`, `keys(m)`, …).
    pub target: String,
    /// A local index (keyed by the base partition key).
    pub local: bool,
}

impl IndexDef {
    /// Records the definition in the hidden view's options.
    pub fn store(&self, o: &mut TableOptions) {
        o.extra
            .retain(|(k, _)| ![NAME, TARGET, LOCAL].contains(&k.as_str()));
        o.extra.push((NAME.into(), self.name.clone()));
        o.extra.push((TARGET.into(), self.target.clone()));
        o.extra.push((LOCAL.into(), self.local.to_string()));
    }

    /// The definition a table's options hold, if it is an index.
    pub fn of(o: &TableOptions) -> Option<IndexDef> {
        let get = |key: &str| o.extra.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        Some(IndexDef {
            name: get(NAME)?.clone(),
            target: get(TARGET).cloned().unwrap_or_default(),
            local: get(LOCAL).is_some_and(|v| v == "true"),
        })
    }
}

impl TableSchema {
    /// The index definition, when this table is a secondary index's hidden view.
    pub fn index(&self) -> Option<IndexDef> {
        IndexDef::of(&self.options)
    }

    /// Whether this table is a secondary index's hidden view.
    pub fn is_index(&self) -> bool {
        self.options.extra.iter().any(|(k, _)| k == NAME)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definition_round_trips_through_options() {
        let mut s = TableSchema::new("ks", &backing_table("t_v_idx"));
        assert!(!s.is_index());
        let def = IndexDef {
            name: "t_v_idx".into(),
            target: "values(m)".into(),
            local: true,
        };
        def.store(&mut s.options);
        def.store(&mut s.options);
        assert_eq!(s.options.extra.len(), 3);
        assert!(s.is_index());
        assert_eq!(s.index(), Some(def));
        assert_eq!(s.name, "t_v_idx_index");
    }
}
