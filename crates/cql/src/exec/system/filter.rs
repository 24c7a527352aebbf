//! WHERE clauses on the system tables, which are built from metadata at every read: `=` and
//! `IN` on any column, anything else refused.

use crate::ast::{InValues, Operator, Relation, RelationTarget, Term};
use crate::error::{Error, Result};
use crate::exec::binds::Binds;
use crate::exec::result::ColumnSpec;
use crate::exec::session::QueryParams;
use crate::values::{term_to_bytes, TermValue};
use bytes::Bytes;

/// Checks a relation list against a virtual table's rows: `=` and `IN` on any column.
pub fn matches(
    specs: &[ColumnSpec],
    row: &[Option<Bytes>],
    where_clause: &[Relation],
    params: &QueryParams,
) -> Result<bool> {
    let ctx = Binds::new(params);
    for rel in where_clause {
        let (name, values): (&str, Vec<&Term>) = match rel {
            Relation::Compare {
                target: RelationTarget::Column(n),
                op: Operator::Eq,
                value,
            } => (n, vec![value]),
            Relation::In {
                target: RelationTarget::Column(n),
                values: InValues::Terms(ts),
            } => (n, ts.iter().collect()),
            _ => {
                return Err(Error::Invalid(
                    "Unsupported restriction on a system table".into(),
                ))
            }
        };
        let i = specs.iter().position(|s| s.name == name).ok_or_else(|| {
            let (ks, t) = specs
                .first()
                .map_or(("", ""), |s| (s.keyspace.as_str(), s.table.as_str()));
            Error::Invalid(format!("Undefined column name {name} in table {ks}.{t}"))
        })?;
        let ty = &specs[i].ty;
        let mut any = false;
        for t in values {
            if let TermValue::Value(v) =
                term_to_bytes(t, ty, name, &ctx).map_err(|e| Error::Invalid(e.to_string()))?
            {
                if row.get(i).cloned().flatten().as_deref() == Some(v.as_ref()) {
                    any = true;
                }
            }
        }
        if !any {
            return Ok(false);
        }
    }
    Ok(true)
}
