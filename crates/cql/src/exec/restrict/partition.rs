//! Restrictions on the partition key: `=` / `IN` on its parts, or `token(...)` bounds
//! (Cassandra's `PartitionKeySingleRestrictionSet`, `TokenRestriction` and `TokenFilter`).

use super::restriction::{Bounds, Restriction};
use super::{value_for, Context, Restrictions, StatementKind, REQUIRES_ALLOW_FILTERING};
use crate::ast::{Operator, Term};
use crate::error::{Error, Result};
use crate::values::TermContext;
use bytes::Bytes;
use cairn_engine::model::token::composite_partition_key;
use cairn_engine::model::types::compare;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::DecoratedKey;
use cairn_engine::schema::{ColumnDef, ColumnKind, TableSchema};
use std::cmp::Ordering;

/// One side of a token range: the token and whether it is included.
type TokenBound = Option<(i64, bool)>;

/// The partition-key restrictions of a WHERE clause, as they are added.
pub struct PartitionRestrictions {
    columns: Vec<ColumnDef>,
    per_column: Vec<Option<Restriction>>,
    token: Option<Restriction>,
}

impl PartitionRestrictions {
    /// No restriction yet on `schema`'s partition key.
    pub fn new(schema: &TableSchema) -> Self {
        let columns: Vec<ColumnDef> = schema
            .columns_of(ColumnKind::PartitionKey)
            .cloned()
            .collect();
        PartitionRestrictions {
            per_column: vec![None; columns.len()],
            columns,
            token: None,
        }
    }

    /// Adds a restriction on one partition-key column.
    pub fn add(&mut self, col: &ColumnDef, r: Restriction) -> Result<()> {
        let i = self
            .columns
            .iter()
            .position(|c| c.id == col.id)
            .unwrap_or(0);
        let Some(slot) = self.per_column.get_mut(i) else {
            return Ok(());
        };
        *slot = Some(match slot.take() {
            None => r,
            Some(existing) => existing.merge(r, &col.name, &col.name)?,
        });
        Ok(())
    }

    /// Adds `token(cols) op value`.
    pub fn add_token(
        &mut self,
        cols: &[String],
        op: Operator,
        value: &Term,
        ctx: &dyn TermContext,
    ) -> Result<()> {
        let names: Vec<&str> = self.columns.iter().map(|c| c.name.as_str()).collect();
        if cols.iter().map(String::as_str).ne(names.iter().copied()) {
            let all = names.iter().all(|n| cols.iter().any(|c| c == n));
            let mut seen = Vec::new();
            for c in cols {
                if seen.contains(&c) {
                    return Err(Error::Invalid(
                        "The token() function contains duplicate partition key components".into(),
                    ));
                }
                seen.push(c);
            }
            if !all {
                return Err(Error::Invalid(
                    "The token() function must be applied to all partition key components or none of them".into(),
                ));
            }
            if cols.iter().any(|c| !names.contains(&c.as_str())) {
                return Err(Error::Invalid(
                    "The token() function must contains only partition key components".into(),
                ));
            }
            return Err(Error::Invalid(format!(
                "The token function arguments must be in the partition key order: {}",
                names.join(", ")
            )));
        }
        let v = match value {
            Term::Function(call)
                if call.name.keyspace.as_deref().is_none_or(|k| k == "system")
                    && call.name.name == "token" =>
            {
                self.token_of_values(&call.args, ctx)?
            }
            _ => value_for(value, &CqlType::Bigint, "partition key token", ctx)?,
        };
        let r = match op {
            Operator::Eq => Restriction::Eq(vec![v]),
            Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte => {
                Restriction::Slice(Bounds::one(op, vec![v]))
            }
            other => {
                return Err(Error::Invalid(format!(
                    "{} cannot be used with the token function",
                    super::op_text(other)
                )))
            }
        };
        let joined = names.join(", ");
        self.token = Some(match self.token.take() {
            None => r,
            Some(Restriction::Slice(_)) if !r.is_slice() => {
                return Err(Error::Invalid(format!(
                    "Columns \"{joined}\" cannot be restricted by both an equality and an inequality relation"
                )));
            }
            Some(existing) => existing.merge(r, &joined, &joined)?,
        });
        Ok(())
    }

    /// `token(v1, v2, …)` as a term: the token of the partition key made of the values (typed
    /// as the partition-key columns, as Cassandra's `token` function of the table).
    fn token_of_values(&self, args: &[Term], ctx: &dyn TermContext) -> Result<Bytes> {
        if args.len() != self.columns.len() {
            return Err(Error::Invalid(format!(
                "Invalid number of arguments in call to function system.token: {} required but {} provided",
                self.columns.len(),
                args.len()
            )));
        }
        let mut parts = Vec::with_capacity(args.len());
        for (a, c) in args.iter().zip(&self.columns) {
            parts.push(value_for(a, &c.ty, &c.name, ctx)?);
        }
        let key = match parts.as_slice() {
            [one] => one.clone(),
            _ => {
                let refs: Vec<&[u8]> = parts.iter().map(|b| b.as_ref()).collect();
                composite_partition_key(&refs)
            }
        };
        let token = cairn_engine::model::token::token_of(&key);
        Ok(Bytes::copy_from_slice(&token.0.to_be_bytes()))
    }

    fn token_bounds(&self) -> Result<(TokenBound, TokenBound)> {
        let tok = |b: &[Bytes]| -> Result<i64> {
            let v = b
                .first()
                .ok_or_else(|| Error::Invalid("Invalid token value".into()))?;
            Ok(i64::from_be_bytes(v.as_ref().try_into().map_err(|_| {
                Error::Invalid("Invalid token value".into())
            })?))
        };
        Ok(match &self.token {
            None => (None, None),
            Some(Restriction::Eq(v)) => {
                let t = tok(v)?;
                (Some((t, true)), Some((t, true)))
            }
            Some(Restriction::Slice(b)) => (
                b.start
                    .as_ref()
                    .map(|(v, i)| tok(v).map(|t| (t, *i)))
                    .transpose()?,
                b.end
                    .as_ref()
                    .map(|(v, i)| tok(v).map(|t| (t, *i)))
                    .transpose()?,
            ),
            Some(_) => (None, None),
        })
    }

    /// Works out the partitions to read (or the range to scan and its filters), with
    /// Cassandra's rules for the statement kind.
    pub fn finish(self, _schema: &TableSchema, cx: Context, out: &mut Restrictions) -> Result<()> {
        let restricted = self.per_column.iter().filter(|r| r.is_some()).count();
        let all_eq_in = restricted == self.columns.len()
            && !self.columns.is_empty()
            && self
                .per_column
                .iter()
                .all(|r| matches!(r, Some(Restriction::Eq(_) | Restriction::In(_))));
        if cx.kind != StatementKind::Select {
            let kind = cx.kind.name();
            if self.token.is_some() {
                return Err(Error::Invalid(format!(
                    "The token function cannot be used in WHERE clauses for {kind} statements"
                )));
            }
            if restricted < self.columns.len() {
                let missing: Vec<&str> = self
                    .columns
                    .iter()
                    .zip(&self.per_column)
                    .filter(|(_, r)| r.is_none())
                    .map(|(c, _)| c.name.as_str())
                    .collect();
                return Err(Error::Invalid(format!(
                    "Some partition key parts are missing: {}",
                    missing.join(", ")
                )));
            }
            if !all_eq_in {
                return Err(Error::Invalid(format!(
                    "Only EQ and IN relation are supported on the partition key (unless you use the token() function) for {kind} statements"
                )));
            }
        }
        let (token_start, token_end) = self.token_bounds()?;
        out.token_start = token_start;
        out.token_end = token_end;
        for (c, r) in self.columns.iter().zip(&self.per_column) {
            match r {
                Some(Restriction::Eq(_)) => out.eq_columns.push(c.id),
                Some(Restriction::In(_)) => out.key_in = true,
                _ => {}
            }
        }
        if all_eq_in {
            let mut keys = self.keys()?;
            if self.token.is_some() {
                keys.retain(|k| in_token_bounds(k.token.0, token_start, token_end));
            }
            if self
                .per_column
                .iter()
                .any(|r| matches!(r, Some(Restriction::In(v)) if v.is_empty()))
            {
                out.empty = true;
            }
            out.keys = Some(keys);
            return Ok(());
        }
        out.is_key_range = true;
        if restricted > 0 {
            // Part of the key, or a slice on it: a scan that filters.
            if !cx.allow_filtering {
                return Err(Error::Invalid(REQUIRES_ALLOW_FILTERING.into()));
            }
            for (c, r) in self.columns.iter().zip(self.per_column) {
                if let Some(r) = r {
                    r.into_filters(c, &mut out.filters)?;
                }
            }
        }
        Ok(())
    }

    /// Every key the `=` / `IN` restrictions select, in the partition key's value order
    /// (part by part, each in its type's order), without duplicates.
    fn keys(&self) -> Result<Vec<DecoratedKey>> {
        let mut tuples: Vec<Vec<Bytes>> = vec![Vec::new()];
        for r in &self.per_column {
            let values: Vec<&Bytes> = match r {
                Some(Restriction::Eq(v)) => v.iter().take(1).collect(),
                Some(Restriction::In(vs)) => vs.iter().filter_map(|t| t.first()).collect(),
                _ => Vec::new(),
            };
            let mut next = Vec::with_capacity(tuples.len() * values.len());
            for t in &tuples {
                for v in &values {
                    let mut t2 = t.clone();
                    t2.push((*v).clone());
                    next.push(t2);
                }
            }
            tuples = next;
        }
        let types: Vec<&CqlType> = self.columns.iter().map(|c| &c.ty).collect();
        let order = |a: &Vec<Bytes>, b: &Vec<Bytes>| -> Ordering {
            for ((x, y), ty) in a.iter().zip(b).zip(&types) {
                match compare(ty, x, y) {
                    Ordering::Equal => {}
                    o => return o,
                }
            }
            Ordering::Equal
        };
        tuples.sort_by(order);
        tuples.dedup_by(|a, b| order(a, b) == Ordering::Equal);
        // The keys are validated later ([`Restrictions::check_keys`]): Cassandra answers a
        // read that selects no rows before it looks at them.
        tuples
            .into_iter()
            .map(|parts| {
                let key = match parts.as_slice() {
                    [one] => one.clone(),
                    _ => {
                        let refs: Vec<&[u8]> = parts.iter().map(|b| b.as_ref()).collect();
                        composite_partition_key(&refs)
                    }
                };
                Ok(DecoratedKey::new(key))
            })
            .collect()
    }
}

/// Whether token `t` lies within the bounds.
fn in_token_bounds(t: i64, start: Option<(i64, bool)>, end: Option<(i64, bool)>) -> bool {
    let after_start = match start {
        None => true,
        Some((s, true)) => t >= s,
        Some((s, false)) => t > s,
    };
    let before_end = match end {
        None => true,
        Some((e, true)) => t <= e,
        Some((e, false)) => t < e,
    };
    after_start && before_end
}
