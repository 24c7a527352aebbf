//! The schema catalog: keyspaces (stored through the engine) and the engine's tables.
//!
//! Keyspace definitions live in an engine table, `system_schema.keyspaces`, so they get the
//! commitlog's durability and survive restarts like any data; the catalog keeps them in
//! memory too. Table definitions are the engine's own (each table directory holds its
//! schema). The schema version that `system.local` shows and drivers compare is a hash of
//! every definition, so it changes with every DDL and is stable across restarts.

use super::replication::Replication;
use crate::error::{Error, Result};
use bytes::Bytes;
use cairn_cluster::placement::ReplicationStrategy;
use cairn_cluster::proxy::StorageProxy;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{Cell, ColumnData, DecoratedKey, DeletionTime, Mutation, Partition, Row};
use cairn_engine::model::{LivenessInfo, PartitionPos, Token};
use cairn_engine::schema::{ColumnKind, TableSchema};
use cairn_engine::table::Table;
use cairn_engine::{Database, ReadCommand, Wait};
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::Arc;

pub use super::replication::SYSTEM_KEYSPACES;

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
        Replication::from_stored(&self.replication)
            .map_or(ReplicationStrategy::Local, |r| r.placement())
    }

    fn system(name: &str) -> Keyspace {
        Keyspace {
            name: name.to_string(),
            replication: super::replication::system_replication(name),
            durable_writes: true,
        }
    }
}

const STORE_KS: &str = "system_schema";
const STORE_TABLE: &str = "keyspaces";
const COL_DURABLE: u32 = 1;
const COL_REPLICATION: u32 = 2;

/// Keyspaces and tables.
pub struct Catalog {
    db: Arc<Database>,
    /// Told of every keyspace's replication, so that it places replicas.
    proxy: Arc<StorageProxy>,
    store: Arc<Table>,
    keyspaces: RwLock<BTreeMap<String, Keyspace>>,
    version: RwLock<Option<[u8; 16]>>,
}

impl Catalog {
    /// Opens the catalog on the proxy's database, creating its store on first start, and
    /// tells the proxy how each keyspace is replicated.
    pub fn open(proxy: Arc<StorageProxy>) -> Result<Catalog> {
        let db = Arc::clone(proxy.db());
        let store = match db.table(STORE_KS, STORE_TABLE) {
            Some(t) => t,
            None => db.create_table(
                TableSchema::new(STORE_KS, STORE_TABLE)
                    .with_column("keyspace_name", CqlType::Text, ColumnKind::PartitionKey)
                    .with_column("durable_writes", CqlType::Boolean, ColumnKind::Regular)
                    .with_column(
                        "replication",
                        CqlType::Frozen(Box::new(CqlType::Map(
                            Box::new(CqlType::Text),
                            Box::new(CqlType::Text),
                        ))),
                        ColumnKind::Regular,
                    ),
            )?,
        };
        let mut keyspaces = BTreeMap::new();
        for name in SYSTEM_KEYSPACES {
            keyspaces.insert(name.to_string(), Keyspace::system(name));
        }
        for (name, row) in stored_rows(&db, STORE_KS, STORE_TABLE)? {
            let durable = row
                .cell(COL_DURABLE)
                .is_none_or(|c| c.value.first() != Some(&0));
            let mut replication = row
                .cell(COL_REPLICATION)
                .map(|c| decode_text_map(&c.value))
                .unwrap_or_default();
            // Older versions stored `class` first.
            replication.sort();
            keyspaces.insert(
                name.clone(),
                Keyspace {
                    name,
                    replication,
                    durable_writes: durable,
                },
            );
        }
        for ks in keyspaces.values() {
            proxy.set_replication(&ks.name, ks.placement());
        }
        Ok(Catalog {
            db,
            proxy,
            store,
            keyspaces: RwLock::new(keyspaces),
            version: RwLock::new(None),
        })
    }

    /// The database.
    pub fn db(&self) -> &Arc<Database> {
        &self.db
    }

    /// A keyspace by name.
    pub fn keyspace(&self, name: &str) -> Option<Keyspace> {
        self.keyspaces.read().get(name).cloned()
    }

    /// Every keyspace, by name.
    pub fn keyspaces(&self) -> Vec<Keyspace> {
        self.keyspaces.read().values().cloned().collect()
    }

    /// Stores a new or changed keyspace.
    pub fn put_keyspace(&self, ks: Keyspace) -> Result<()> {
        let ts = now_micros();
        let mut row = Row {
            marker: Some(LivenessInfo::live(ts)),
            ..Row::default()
        };
        row.columns.push((
            COL_DURABLE,
            ColumnData::Simple(Cell::live(
                ts,
                Bytes::from(vec![u8::from(ks.durable_writes)]),
            )),
        ));
        row.columns.push((
            COL_REPLICATION,
            ColumnData::Simple(Cell::live(ts, encode_text_map(&ks.replication))),
        ));
        let mut update = Partition::default();
        update
            .rows
            .insert(cairn_engine::model::ClusteringKey::empty(), row);
        self.db.apply(
            vec![Mutation {
                table: self.store.schema().id,
                key: DecoratedKey::new(Bytes::copy_from_slice(ks.name.as_bytes())),
                update,
            }],
            // Keyspace changes are DDL, run only where waiting is allowed (`Executor::run`).
            Wait::Allowed,
        )?;
        self.proxy.set_replication(&ks.name, ks.placement());
        self.keyspaces.write().insert(ks.name.clone(), ks);
        self.schema_changed();
        Ok(())
    }

    /// Removes a keyspace and its tables.
    pub fn drop_keyspace(&self, name: &str) -> Result<()> {
        for t in self.tables(name) {
            self.db.drop_table(name, &t.schema().name)?;
        }
        let update = Partition {
            deletion: Some(DeletionTime {
                marked_at: now_micros(),
                local_deletion_time: now_secs(),
            }),
            ..Partition::default()
        };
        self.db.apply(
            vec![Mutation {
                table: self.store.schema().id,
                key: DecoratedKey::new(Bytes::copy_from_slice(name.as_bytes())),
                update,
            }],
            // Keyspace changes are DDL, run only where waiting is allowed (`Executor::run`).
            Wait::Allowed,
        )?;
        self.keyspaces.write().remove(name);
        self.proxy.drop_keyspace(name);
        self.schema_changed();
        Ok(())
    }

    /// A user table (internal tables are not visible).
    pub fn table(&self, keyspace: &str, name: &str) -> Option<Arc<Table>> {
        if keyspace == STORE_KS {
            return None;
        }
        self.db.table(keyspace, name)
    }

    /// A keyspace's user tables, by name.
    pub fn tables(&self, keyspace: &str) -> Vec<Arc<Table>> {
        if keyspace == STORE_KS {
            return Vec::new();
        }
        let mut t: Vec<Arc<Table>> = self
            .db
            .tables()
            .into_iter()
            .filter(|t| t.schema().keyspace == keyspace)
            .collect();
        t.sort_by_key(|t| t.schema().name.clone());
        t
    }

    /// Must be called after every DDL: the schema version changes.
    pub fn schema_changed(&self) {
        *self.version.write() = None;
    }

    /// The schema version (a hash of every definition), as a UUID's bytes.
    pub fn schema_version(&self) -> [u8; 16] {
        if let Some(v) = *self.version.read() {
            return v;
        }
        let mut all = Vec::new();
        for ks in self.keyspaces() {
            all.extend_from_slice(ks.name.as_bytes());
            for (k, v) in &ks.replication {
                all.extend_from_slice(k.as_bytes());
                all.extend_from_slice(v.as_bytes());
            }
            all.push(u8::from(ks.durable_writes));
            for t in self.tables(&ks.name) {
                all.extend_from_slice(&t.schema().encode());
            }
        }
        let (a, b) = cairn_engine::model::token::murmur3_x64_128(&all, 0);
        let mut v = [0u8; 16];
        v[..8].copy_from_slice(&a.to_be_bytes());
        v[8..].copy_from_slice(&b.to_be_bytes());
        // Mark it as a version-4 (random) UUID, as Cassandra's schema versions are UUIDs.
        v[6] = (v[6] & 0x0F) | 0x40;
        v[8] = (v[8] & 0x3F) | 0x80;
        *self.version.write() = Some(v);
        v
    }

    /// Errors with Cassandra's text unless the keyspace exists.
    pub fn require_keyspace(&self, name: &str) -> Result<Keyspace> {
        self.keyspace(name)
            .ok_or_else(|| Error::Invalid(format!("Keyspace '{name}' does not exist")))
    }

    /// Errors with Cassandra's text unless the table exists.
    pub fn require_table(&self, keyspace: &str, name: &str) -> Result<Arc<Table>> {
        // A table's keyspace exists (dropping a keyspace drops its tables first), so the
        // keyspace is looked at only to word the error.
        if let Some(t) = self.table(keyspace, name) {
            return Ok(t);
        }
        self.require_keyspace(keyspace)?;
        Err(Error::Invalid(format!("unconfigured table {name}")))
    }
}

/// The live rows of an internal one-row-per-partition engine table (keyspaces, roles):
/// each partition key as text with its row.
pub fn stored_rows(db: &Database, keyspace: &str, table: &str) -> Result<Vec<(String, Row)>> {
    let scan = db.scan(
        keyspace,
        table,
        PartitionPos::TokenStart(Token::MIN),
        None,
        // At startup, where waiting is allowed.
        ReadCommand::all(now_secs(), Wait::Allowed),
    )?;
    let mut out = Vec::new();
    for p in scan {
        let p = p?;
        let name = String::from_utf8_lossy(&p.key.key).into_owned();
        if let Some((_, row)) = p.rows.into_iter().next() {
            out.push((name, row));
        }
    }
    Ok(out)
}

/// Serialises a `map<text, text>` (native protocol v4).
pub fn encode_text_map(entries: &[(String, String)]) -> Bytes {
    let mut out = Vec::new();
    out.extend_from_slice(&(entries.len() as i32).to_be_bytes());
    for (k, v) in entries {
        for s in [k, v] {
            out.extend_from_slice(&(s.len() as i32).to_be_bytes());
            out.extend_from_slice(s.as_bytes());
        }
    }
    Bytes::from(out)
}

/// Parses a `map<text, text>`; malformed input yields what could be read.
pub fn decode_text_map(b: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    let int = |pos: &mut usize| -> Option<usize> {
        let v = b.get(*pos..*pos + 4)?;
        *pos += 4;
        usize::try_from(i32::from_be_bytes([v[0], v[1], v[2], v[3]])).ok()
    };
    let Some(n) = int(&mut pos) else {
        return out;
    };
    for _ in 0..n {
        let mut next = || -> Option<String> {
            let len = int(&mut pos)?;
            let s = b.get(pos..pos + len)?;
            pos += len;
            Some(String::from_utf8_lossy(s).into_owned())
        };
        match (next(), next()) {
            (Some(k), Some(v)) => out.push((k, v)),
            _ => break,
        }
    }
    out
}

/// Seconds since the epoch.
pub fn now_secs() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs().min(u64::from(u32::MAX - 1)) as u32)
}

/// Microseconds since the epoch.
pub fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}
