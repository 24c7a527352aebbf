//! Secondary indexes' definitions. A global index (ScyllaDB's design) is a hidden
//! materialized view of its base table: the view's partition key is the indexed value, its
//! clustering columns the base partition key's token ([`IDX_TOKEN`], a bigint), then the base
//! partition key and clustering columns; it selects no other column. An index on a static
//! column is clustered by the token and the base partition key only (one entry per base
//! partition, from its static row). An index on a partition key column has an entry for each
//! row and one for the static row, keyed by a prefix of that clustering (the token and the
//! base partition key; [`super::view::EntryRows::Both`]). An index on a non-frozen collection ([`IndexKind`]
//! `Keys`, `Values`, `Entries`) is keyed by one element — its partition key column, named
//! after the collection, holds a set element or map key as its cell path, or a list or map
//! value; an `entries` index adds [`IDX_VALUE`] — so one base row has one entry per element
//! (`crate::view_update::element_keys`). A local index is keyed by the base partition key,
//! clustering (indexed value, base clustering columns).
//!
//! The hidden view is a table of the schema log like any view, with its [`ViewDef`] and, in
//! the same options, this definition (the index's name, its target as Cassandra writes it in
//! `system_schema.indexes.options['target']`, and whether it is local). Keeping it there,
//! rather than in the base table's schema, means view maintenance, the background build,
//! the schema log, commitlog replay and TRUNCATE treat it as a view with no second path;
//! the CQL catalog keeps it out of every listing of tables and views.
//!
//! A storage-attached index (Cassandra 5.0's SAI, `USING 'sai'`) is the same hidden view
//! with its class and options recorded ([`IndexDef::class`]): Cairn serves SAI with the
//! global index's storage, and only the query rules differ (`cairn-cql`'s `exec/select`).
//!
//! Invariant (checked by CREATE INDEX): the hidden table is named [`backing_table`] of the
//! index name, its ViewDef names the base table, and its key columns are as above.
//!
//! [`ViewDef`]: super::view::ViewDef

use super::{TableOptions, TableSchema};

const NAME: &str = "index.name";
const TARGET: &str = "index.target";
const LOCAL: &str = "index.local";
const CLASS: &str = "index.class";
const OPTIONS: &str = "index.options";

/// The computed clustering column of a global index: the token of the base partition key,
/// so an index partition lists base rows in token order.
pub const IDX_TOKEN: &str = "idx_token";

/// The second partition key column of an `entries(m)` index (the first, named after the
/// map, holds the map key): the entry's value.
pub const IDX_VALUE: &str = "idx_value";

/// The hidden view's table name for index `name` (ScyllaDB's naming).
pub fn backing_table(name: &str) -> String {
    format!("{name}_index")
}

/// What of its column an index is keyed by (the target's function).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    /// The column's value (a regular, static or key column).
    Simple,
    /// A frozen collection's whole value (`full(c)`).
    Full,
    /// A map's keys (`keys(m)`): one entry per key.
    Keys,
    /// A collection's values (`values(c)`): one entry per distinct element value.
    Values,
    /// A map's key-value pairs (`entries(m)`): one entry per pair.
    Entries,
}

impl IndexKind {
    /// The kind of a target as `system_schema.indexes` writes it.
    pub fn of_target(target: &str) -> IndexKind {
        let t = target.trim_start();
        if t.starts_with("keys(") {
            IndexKind::Keys
        } else if t.starts_with("values(") {
            IndexKind::Values
        } else if t.starts_with("entries(") {
            IndexKind::Entries
        } else if t.starts_with("full(") {
            IndexKind::Full
        } else {
            IndexKind::Simple
        }
    }

    /// Whether one base row has one entry per element (a non-frozen collection's index).
    pub fn per_element(self) -> bool {
        matches!(
            self,
            IndexKind::Keys | IndexKind::Values | IndexKind::Entries
        )
    }
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
    /// A custom index's class as written in `USING` (kept verbatim: `system_schema.indexes`
    /// shows it so) — only Cassandra 5.0's storage-attached index is built
    /// ([`IndexDef::is_sai`]); `None` for a plain (`COMPOSITES`) index.
    pub class: Option<String>,
    /// A custom index's options besides `class_name` and `target`, in name order (SAI's
    /// analysis options; the caller checks names and values, none holds `,` or `=`).
    pub options: Vec<(String, String)>,
}

/// Whether `class` names Cassandra 5.0's storage-attached index (`IndexMetadata`'s
/// aliases, looked up lowercased, or the class itself).
pub fn is_sai_class(class: &str) -> bool {
    matches!(
        class.to_lowercase().as_str(),
        "sai" | "storageattachedindex"
    ) || class == "org.apache.cassandra.index.sai.StorageAttachedIndex"
}

impl IndexDef {
    /// Records the definition in the hidden view's options.
    pub fn store(&self, o: &mut TableOptions) {
        o.extra
            .retain(|(k, _)| ![NAME, TARGET, LOCAL, CLASS, OPTIONS].contains(&k.as_str()));
        o.extra.push((NAME.into(), self.name.clone()));
        o.extra.push((TARGET.into(), self.target.clone()));
        o.extra.push((LOCAL.into(), self.local.to_string()));
        if let Some(class) = &self.class {
            o.extra.push((CLASS.into(), class.clone()));
            let options: Vec<String> = self
                .options
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            o.extra.push((OPTIONS.into(), options.join(",")));
        }
    }

    /// Whether this is a storage-attached index (SAI).
    pub fn is_sai(&self) -> bool {
        self.class.as_deref().is_some_and(is_sai_class)
    }

    /// What the index is keyed by.
    pub fn kind(&self) -> IndexKind {
        if self.local {
            // A local index's target is ScyllaDB's JSON; local indexes are simple.
            return IndexKind::Simple;
        }
        IndexKind::of_target(&self.target)
    }

    /// The definition a table's options hold, if it is an index.
    pub fn of(o: &TableOptions) -> Option<IndexDef> {
        let get = |key: &str| o.extra.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        Some(IndexDef {
            name: get(NAME)?.clone(),
            target: get(TARGET).cloned().unwrap_or_default(),
            local: get(LOCAL).is_some_and(|v| v == "true"),
            class: get(CLASS).cloned(),
            options: get(OPTIONS)
                .map(|o| {
                    o.split(',')
                        .filter_map(|kv| kv.split_once('='))
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect()
                })
                .unwrap_or_default(),
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

/// For tests: the hidden view `ix` (its columns given) made the global index of `base` on
/// `column`, its target `target` (the index is named after `ix`, without `_index`).
#[cfg(test)]
pub(crate) fn test_index(
    base: &TableSchema,
    mut ix: TableSchema,
    column: &str,
    target: &str,
) -> TableSchema {
    use super::view::ViewDef;
    ViewDef {
        base: base.name.clone(),
        include_all_columns: false,
        where_clause: format!("{column} IS NOT NULL"),
        not_null: vec![column.into()],
    }
    .store(&mut ix.options);
    IndexDef {
        name: ix.name.trim_end_matches("_index").to_string(),
        target: target.into(),
        local: false,
        class: None,
        options: Vec::new(),
    }
    .store(&mut ix.options);
    ix.set_view_base(base);
    ix
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
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
            class: None,
            options: Vec::new(),
        };
        def.store(&mut s.options);
        def.store(&mut s.options);
        assert_eq!(s.options.extra.len(), 3);
        assert!(s.is_index());
        assert_eq!(s.index(), Some(def.clone()));
        let sai = IndexDef {
            class: Some("SAI".into()),
            options: vec![("case_sensitive".into(), "true".into())],
            ..def
        };
        sai.store(&mut s.options);
        assert_eq!(s.options.extra.len(), 5);
        assert!(sai.is_sai());
        assert_eq!(s.index(), Some(sai));
        assert_eq!(s.name, "t_v_idx_index");
    }

    /// A base insert makes an index entry keyed by the value, clustered by the base token.
    #[test]
    fn maintenance_computes_the_token_column() {
        use crate::model::cell::{Cell, LivenessInfo};
        use crate::model::key::DecoratedKey;
        use crate::model::partition::Partition;
        use crate::model::row::{ColumnData, Row};
        use crate::model::types::CqlType;
        use crate::schema::ColumnKind;
        use crate::view_update::{view_mutations, BaseWrite, LiveRows};
        use bytes::Bytes;
        let int = |v: i32| Bytes::copy_from_slice(&v.to_be_bytes());
        let base = TableSchema::new("ks", "t")
            .with_column("pk", CqlType::Int, ColumnKind::PartitionKey)
            .with_column("ck", CqlType::Int, ColumnKind::Clustering)
            .with_column("v", CqlType::Int, ColumnKind::Regular);
        let mut ix = TableSchema::new("ks", &backing_table("t_v_idx"))
            .with_column("v", CqlType::Int, ColumnKind::PartitionKey)
            .with_column(IDX_TOKEN, CqlType::Bigint, ColumnKind::Clustering)
            .with_column("pk", CqlType::Int, ColumnKind::Clustering)
            .with_column("ck", CqlType::Int, ColumnKind::Clustering);
        ix = test_index(&base, ix, "v", "v");
        let key = DecoratedKey::new(int(7));
        let ck = base.clustering_layout().encode_key(&[&int(3)]).unwrap();
        let row = Row {
            marker: Some(LivenessInfo::live(10)),
            deletion: None,
            columns: vec![(2, ColumnData::Simple(Cell::live(10, int(42))))],
        };
        let mut update = Partition::default();
        update.rows.insert(ck.clone(), row.clone());
        let after: LiveRows = [(ck, row)].into_iter().collect();
        let write = BaseWrite {
            key: &key,
            update: &update,
            before: &LiveRows::new(),
            after: &after,
            timestamp: 10,
            now: 1,
        };
        let out = view_mutations(&base, &ix, &write).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].key.key, int(42));
        let (ick, _) = out[0].update.rows.iter().next().unwrap();
        let values = ix.clustering_layout().decode(ick.as_bytes()).unwrap();
        let token = crate::model::token::token_of(&int(7)).0;
        assert_eq!(
            values,
            vec![Bytes::copy_from_slice(&token.to_be_bytes()), int(7), int(3)]
        );
    }
}
