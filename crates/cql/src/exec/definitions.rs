//! Schema definitions — keyspaces and tables — and their form as entries of the cluster's
//! schema log (`cairn_cluster::schema_log`), which every node applies.
//!
//! The entries (keys under `schema/`):
//! - `schema/format` → `1`: the log holds the schema (written once, by the node that put its
//!   own schema there first — see `Catalog::open`);
//! - `schema/keyspace/<name>` → JSON `{"replication": [[key, value], …], "durable_writes": …}`;
//! - `schema/table/<keyspace>/<name>` → the engine's table schema (`TableSchema::encode`, with
//!   its id, columns, dropped columns and options) in hex;
//! - `schema/type/<keyspace>/<name>` → a user type, as its `CqlType::full_name`
//!   (`udt<"ks"."name", "field" type, …>`, nested user types spelled out). A table's
//!   columns carry their user types' definitions too, so `ALTER TYPE` rewrites the entries
//!   of the types and tables that use the type in the same command.
//!
//! Keyspace and table names are word characters only (CQL refuses others), so `/` never
//! appears inside one; a type name may hold any character, and is what follows the
//! keyspace's `/`. Only user keyspaces are shared: the system keyspaces are each node's
//! own ([`is_shared`]).

use super::replication::{self, SYSTEM_KEYSPACES};
use crate::values::format::{hex_bytes, hex_literal};
use cairn_cluster::placement::ReplicationStrategy;
use cairn_cluster::raft::command::Op;
use cairn_engine::model::types::{CqlType, UserType};
use cairn_engine::schema::TableSchema;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A keyspace definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keyspace {
    /// Name.
    pub name: String,
    /// Replication map (`class` and the strategy's options), sorted by key as a CQL map is.
    pub replication: Vec<(String, String)>,
    /// `durable_writes`.
    pub durable_writes: bool,
}

impl Keyspace {
    /// Where the keyspace's replicas go. A map stored before validation existed that names
    /// no known strategy is local to the node.
    pub fn placement(&self) -> ReplicationStrategy {
        replication::Replication::from_stored(&self.replication)
            .map_or(ReplicationStrategy::Local, |r| r.placement())
    }

    /// A system keyspace's definition.
    pub fn system(name: &str) -> Keyspace {
        Keyspace {
            name: name.to_string(),
            replication: replication::system_replication(name),
            durable_writes: true,
        }
    }
}

/// Whether a keyspace's definition and tables are shared through the schema log (every
/// keyspace but the system ones).
pub fn is_shared(keyspace: &str) -> bool {
    !SYSTEM_KEYSPACES.contains(&keyspace)
}

/// The entry saying the log holds the schema.
pub const FORMAT_KEY: &str = "schema/format";
const FORMAT: &str = "1";
const KEYSPACE_PREFIX: &str = "schema/keyspace/";
const TABLE_PREFIX: &str = "schema/table/";
const TYPE_PREFIX: &str = "schema/type/";

/// The entry marking the log as holding the schema.
pub fn format() -> Op {
    Op::Put {
        key: FORMAT_KEY.to_string(),
        value: FORMAT.to_string(),
    }
}

/// Sets a keyspace's definition.
pub fn put_keyspace(ks: &Keyspace) -> Op {
    let value = serde_json::json!({
        "replication": ks.replication,
        "durable_writes": ks.durable_writes,
    });
    Op::Put {
        key: keyspace_key(&ks.name),
        value: value.to_string(),
    }
}

/// Removes a keyspace's definition (its tables' entries are removed separately).
pub fn delete_keyspace(name: &str) -> Op {
    Op::Delete {
        key: keyspace_key(name),
    }
}

/// Sets a table's definition.
pub fn put_table(schema: &TableSchema) -> Op {
    let hex = hex_literal(&schema.encode());
    Op::Put {
        key: table_key(&schema.keyspace, &schema.name),
        value: hex.trim_start_matches("0x").to_string(),
    }
}

/// Removes a table's definition.
pub fn delete_table(keyspace: &str, name: &str) -> Op {
    Op::Delete {
        key: table_key(keyspace, name),
    }
}

/// Sets a user type's definition.
pub fn put_type(ut: &UserType) -> Op {
    Op::Put {
        key: type_key(&ut.keyspace, &ut.name),
        value: CqlType::Udt(Box::new(ut.clone())).full_name(),
    }
}

/// Removes a user type's definition.
pub fn delete_type(keyspace: &str, name: &str) -> Op {
    Op::Delete {
        key: type_key(keyspace, name),
    }
}

/// Removes every table and user type of `keyspace` found in `entries`.
pub fn delete_tables_and_types_of(entries: &BTreeMap<String, String>, keyspace: &str) -> Vec<Op> {
    let mut ops = Vec::new();
    for prefix in [TABLE_PREFIX, TYPE_PREFIX] {
        let prefix = format!("{prefix}{keyspace}/");
        ops.extend(
            entries
                .range(prefix.clone()..)
                .take_while(|(k, _)| k.starts_with(&prefix))
                .map(|(k, _)| Op::Delete { key: k.clone() }),
        );
    }
    ops
}

fn type_key(keyspace: &str, name: &str) -> String {
    format!("{TYPE_PREFIX}{keyspace}/{name}")
}

fn keyspace_key(name: &str) -> String {
    format!("{KEYSPACE_PREFIX}{name}")
}

fn table_key(keyspace: &str, name: &str) -> String {
    format!("{TABLE_PREFIX}{keyspace}/{name}")
}

/// The schema the entries describe.
#[derive(Debug, Default)]
pub struct Wanted {
    /// Whether the log holds the schema at all (`schema/format`).
    pub present: bool,
    /// Keyspaces, by name.
    pub keyspaces: BTreeMap<String, Keyspace>,
    /// Tables, by keyspace and name.
    pub tables: BTreeMap<(String, String), TableSchema>,
    /// User types, by keyspace and name.
    pub types: BTreeMap<(String, String), UserType>,
    /// Every keyspace and table named by an entry, decoded or not: what is named is never
    /// dropped because its entry could not be read.
    named: BTreeSet<(String, Option<String>)>,
}

impl Wanted {
    /// Whether an entry names the keyspace.
    pub fn has_keyspace(&self, name: &str) -> bool {
        self.named.contains(&(name.to_string(), None))
    }

    /// Whether an entry names the table.
    pub fn has_table(&self, keyspace: &str, name: &str) -> bool {
        self.named
            .contains(&(keyspace.to_string(), Some(name.to_string())))
    }
}

/// Reads the schema entries; one that cannot be read is logged and left out (its keyspace
/// or table is still [named](Wanted::has_table)).
pub fn decode(entries: &BTreeMap<String, String>) -> Wanted {
    let mut w = Wanted {
        present: entries.contains_key(FORMAT_KEY),
        ..Wanted::default()
    };
    for (key, value) in entries {
        if let Some(name) = key.strip_prefix(KEYSPACE_PREFIX) {
            w.named.insert((name.to_string(), None));
            match keyspace_of(name, value) {
                Some(ks) => {
                    w.keyspaces.insert(name.to_string(), ks);
                }
                None => tracing::error!("schema entry {key} cannot be read: {value}"),
            }
        } else if let Some(rest) = key.strip_prefix(TABLE_PREFIX) {
            let Some((ks, name)) = rest.split_once('/') else {
                tracing::error!("schema entry {key} names no table");
                continue;
            };
            w.named.insert((ks.to_string(), Some(name.to_string())));
            let schema = hex_bytes(value)
                .ok_or_else(|| "not hex".to_string())
                .and_then(|b| TableSchema::decode(&b, Path::new(key)).map_err(|e| e.to_string()));
            match schema {
                Ok(s) if s.keyspace == ks && s.name == name => {
                    w.tables.insert((ks.to_string(), name.to_string()), s);
                }
                Ok(s) => tracing::error!(
                    "schema entry {key} holds table {}.{}, not its own",
                    s.keyspace,
                    s.name
                ),
                Err(e) => tracing::error!("schema entry {key} cannot be read: {e}"),
            }
        } else if let Some(rest) = key.strip_prefix(TYPE_PREFIX) {
            let Some((ks, name)) = rest.split_once('/') else {
                tracing::error!("schema entry {key} names no type");
                continue;
            };
            match CqlType::parse(value) {
                Some(CqlType::Udt(u)) if u.keyspace == ks && u.name == name => {
                    w.types.insert((ks.to_string(), name.to_string()), *u);
                }
                _ => tracing::error!("schema entry {key} cannot be read: {value}"),
            }
        }
    }
    w
}

fn keyspace_of(name: &str, value: &str) -> Option<Keyspace> {
    let v: serde_json::Value = serde_json::from_str(value).ok()?;
    let mut replication: Vec<(String, String)> =
        serde_json::from_value(v.get("replication")?.clone()).ok()?;
    replication.sort();
    Some(Keyspace {
        name: name.to_string(),
        replication,
        durable_writes: v.get("durable_writes")?.as_bool()?,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use cairn_engine::schema::ColumnKind;

    fn apply(entries: &mut BTreeMap<String, String>, ops: &[Op]) {
        for op in ops {
            match op {
                Op::Put { key, value } => {
                    entries.insert(key.clone(), value.clone());
                }
                Op::Delete { key } => {
                    entries.remove(key);
                }
            }
        }
    }

    #[test]
    fn definitions_come_back_from_their_entries() {
        let ks = Keyspace {
            name: "ks".into(),
            replication: vec![
                ("class".into(), "NetworkTopologyStrategy".into()),
                ("dc1".into(), "3".into()),
            ],
            durable_writes: false,
        };
        let mut t = TableSchema::new("ks", "t")
            .with_column("k", CqlType::Int, ColumnKind::PartitionKey)
            .with_column("v", CqlType::Text, ColumnKind::Regular);
        t.drop_column("v", 42);
        let ut = UserType {
            keyspace: "ks".into(),
            name: "Addr/x".into(),
            field_names: vec!["street".into()],
            field_types: vec![CqlType::Text],
        };
        let mut entries = BTreeMap::new();
        apply(
            &mut entries,
            &[format(), put_keyspace(&ks), put_table(&t), put_type(&ut)],
        );
        let w = decode(&entries);
        assert!(w.present);
        assert_eq!(w.keyspaces.get("ks"), Some(&ks));
        let back = &w.tables[&("ks".to_string(), "t".to_string())];
        assert_eq!(back, &t);
        assert_eq!(back.dropped_columns().len(), 1);
        assert!(w.has_keyspace("ks") && w.has_table("ks", "t"));
        assert!(!w.has_table("ks", "u"));
        assert_eq!(w.types[&("ks".to_string(), "Addr/x".to_string())], ut);

        // Dropping the keyspace removes its tables' and types' entries too.
        let mut drop = delete_tables_and_types_of(&entries, "ks");
        drop.push(delete_keyspace("ks"));
        apply(&mut entries, &drop);
        assert_eq!(entries.keys().collect::<Vec<_>>(), [FORMAT_KEY]);
    }

    #[test]
    fn an_unreadable_entry_is_left_out_but_still_named() {
        let mut entries = BTreeMap::new();
        entries.insert("schema/table/ks/t".to_string(), "zz".to_string());
        entries.insert("schema/keyspace/ks".to_string(), "{".to_string());
        let w = decode(&entries);
        assert!(!w.present);
        assert!(w.tables.is_empty() && w.keyspaces.is_empty());
        assert!(w.has_table("ks", "t") && w.has_keyspace("ks"));
    }

    #[test]
    fn only_user_keyspaces_are_shared() {
        assert!(is_shared("ks"));
        for s in SYSTEM_KEYSPACES {
            assert!(!is_shared(s));
        }
    }
}
