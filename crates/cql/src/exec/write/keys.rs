//! The target of a write: its table (never a system one), partition keys and clustering
//! keys, from the WHERE clause's restrictions or an INSERT's values.

use crate::error::{Error, Result};
use crate::exec::restrict::{self, Restrictions};
use crate::exec::session::Session;
use crate::exec::Executor;
use crate::values::{term_to_bytes, TermContext, TermValue};
use bytes::Bytes;
use cairn_engine::model::{ClusteringKey, DecoratedKey};
use cairn_engine::schema::{ColumnDef, TableSchema};
use smallvec::SmallVec;

pub(super) fn table_schema(
    ex: &Executor,
    session: &Session,
    name: &crate::ast::QualifiedName,
) -> Result<std::sync::Arc<TableSchema>> {
    let ks = session.resolve(&name.keyspace)?;
    let internal = session.is_internal() && ks == crate::trace::tables::KEYSPACE;
    if crate::exec::catalog::SYSTEM_KEYSPACES.contains(&ks.as_str()) && !internal {
        return Err(Error::Unauthorized(format!(
            "{ks} keyspace is not user-modifiable."
        )));
    }
    let schema = ex.catalog().require_table(&ks, &name.name)?.schema();
    crate::exec::views::refuse_direct_write(&schema)?;
    Ok(schema)
}

pub(super) fn key_value(
    col: &ColumnDef,
    term: &crate::ast::Term,
    ctx: &dyn TermContext,
) -> Result<Bytes> {
    match term_to_bytes(term, &col.ty, &col.name, ctx)? {
        TermValue::Value(b) => Ok(b),
        TermValue::Null => Err(Error::Invalid(format!(
            "Invalid null value in condition for column {}",
            col.name
        ))),
        TermValue::Unset => Err(Error::Invalid(format!(
            "Invalid unset value for column {}",
            col.name
        ))),
    }
}

/// The partition key from its parts' values (composite when there are several).
pub(super) fn partition_key<P>(
    parts: &[P],
    mut value: impl FnMut(&P) -> Result<Bytes>,
) -> Result<DecoratedKey> {
    let key = if let [only] = parts {
        value(only)?
    } else {
        let vals: SmallVec<[Bytes; 4]> = parts.iter().map(value).collect::<Result<_>>()?;
        let refs: SmallVec<[&[u8]; 4]> = vals.iter().map(|b| b.as_ref()).collect();
        cairn_engine::model::token::composite_partition_key(&refs)
    };
    // An empty component of a composite key is allowed; an empty key is not.
    restrict::check_key(&key)?;
    Ok(DecoratedKey::new(key))
}

/// The partitions an UPDATE or DELETE writes ([`restrict::resolve`] has made sure the whole
/// partition key is given by `=` / `IN`; an empty `IN` gives none), validated as
/// Cassandra's `buildPartitionKeyNames` does: after the statement's own rules (a missing
/// clustering column is reported before an empty key).
pub(super) fn keys_of(r: &Restrictions) -> Result<Vec<DecoratedKey>> {
    r.check_keys()?;
    Ok(r.keys.clone().unwrap_or_default())
}

pub(super) fn clustering_keys(
    r: &Restrictions,
    schema: &TableSchema,
) -> Result<Vec<ClusteringKey>> {
    if r.prefixes.is_empty() {
        // A table without clustering columns: its one row per partition.
        return Ok(vec![ClusteringKey::empty()]);
    }
    let layout = schema.clustering_layout();
    r.prefixes
        .iter()
        .map(|p| {
            let refs: Vec<&[u8]> = p.iter().map(|b| b.as_ref()).collect();
            layout
                .encode_key(&refs)
                .map_err(|e| Error::Invalid(e.to_string()))
        })
        .collect()
}

/// The clustering keys an UPDATE writes ([`restrict::resolve`] has checked that every
/// clustering column is given by `=` / `IN`, or none when the statement writes static
/// columns only).
pub(super) fn clustering_of(r: &Restrictions, schema: &TableSchema) -> Result<Vec<ClusteringKey>> {
    if r.empty {
        return Ok(Vec::new());
    }
    if r.full_clustering(schema) {
        return clustering_keys(r, schema);
    }
    Ok(vec![ClusteringKey::empty()])
}
