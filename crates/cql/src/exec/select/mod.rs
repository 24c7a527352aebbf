//! SELECT, executed as Cassandra's `SelectStatement` does.
//!
//! The pipeline, per request:
//! 1. the selection is planned (cached per schema for a prepared statement) —
//!    [`selection`];
//! 2. the WHERE clause is resolved into keys or a range, clustering slices and row filters —
//!    [`super::restrict`];
//! 3. the statement's own rules are checked: DISTINCT, GROUP BY, ORDER BY, limits ([`Query`]);
//! 4. partitions are read in order (the keys' value order for `=` / `IN`, token order for a
//!    range) and their rows filtered; then, by mode:
//!    - plain rows: PER PARTITION LIMIT, LIMIT and the page size count the rows that passed
//!      the filters;
//!    - GROUP BY: rows fold into groups (partition key plus a clustering prefix); the limits
//!      and the page size count groups, and a page ends on a group boundary;
//!    - aggregates without GROUP BY: every row feeds one group, one result row, no paging;
//!    - DISTINCT: one row per partition (its key and static columns);
//!    - `IN` on the partition key with ORDER BY: every row is collected, sorted across
//!      partitions, then cut to LIMIT (Cassandra refuses to page such a query);
//!    - a read through a secondary index (`v = …` on an indexed column): the index's
//!      partition for the value, then the base rows it names, in base token order (a local
//!      index: the base partition's index rows under the value) — [`super::indexes`];
//!    - storage-attached indexes (SAI) decide only what needs ALLOW FILTERING
//!      (`sai_serves`: `=`, ranges on ordered types, CONTAINS / CONTAINS KEY, several SAI
//!      columns ANDed); they are read as above when an `=`-like relation is on an indexed
//!      column (its matches filtered by the rest), else the query is a scan in token order
//!      with the restrictions as row filters — correct, not index-served;
//! 5. a partition with no rows in the slice shows its static row when the query restricts
//!    no clustering or regular column (Cassandra's `returnStaticContentOnPartitionWithNoRows`).
//!
//! A page stops after `page_size` rows (groups, partitions); its [`paging::PagingState`]
//! resumes strictly after the last row read.

mod elements;
mod paging;
mod selection;

pub use selection::{cell_value, plan, star_columns, Plan, RowView};

use super::binds::Binds;
use super::consistency;
use super::restrict::{self, Restrictions};
use super::result::{ColumnSpec, Outcome, ResultSet};
use super::session::{QueryParams, Session};
use super::system;
use super::Executor;
use crate::ast::{InValues, Operator, Order as AstOrder, Relation, RelationTarget, Select, Term};
use crate::error::{Error, Result};
use crate::values::{json, term_to_bytes, TermContext, TermValue};
use bytes::Bytes;
use cairn_engine::model::clustering::{ClusteringLayout, Order};
use cairn_engine::model::key::{ClusteringRange, Slice};
use cairn_engine::model::token::split_composite_partition_key;
use cairn_engine::model::types::compare;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{DecoratedKey, PartitionPos, Token};
use cairn_engine::schema::{ColumnDef, ColumnKind, TableSchema};
use cairn_engine::{PartitionResult, ReadCommand, Wait};
use paging::PagingState;
use selection::{row_values, Group};
use std::cmp::Ordering;
use std::sync::Arc;

use super::indexes::Indexed;
use super::plan_cache::PlanCache;
use cairn_engine::schema::index::IndexKind;

/// Runs a SELECT; `cache` is the prepared statement's plan cache, if it is one. Its reads wait
/// for the disk as `wait` says.
pub fn select(
    ex: &Executor,
    session: &Session,
    s: &Select,
    params: &QueryParams,
    cache: Option<&PlanCache<Plan>>,
    wait: Wait,
) -> Result<Outcome> {
    let ks = session.resolve(&s.table.keyspace)?;
    if let Some(v) = system::table(ex, session, &ks, &s.table.name)? {
        let cl = params.levels.consistency;
        consistency::for_read(cl)?;
        // A virtual table answers at any level; a system table is a table of its keyspace.
        if !system::is_virtual_keyspace(&ks) {
            ex.proxy().check_reachable(&ks, cl)?;
        }
        let rows = system::select(v, s, params)?;
        return Ok(Outcome::Rows(if s.json { json_rows(rows)? } else { rows }));
    }
    let table = ex.catalog().require_table(&ks, &s.table.name)?;
    let schema = table.schema();
    let ctx = Binds::new(params);
    let indexed = super::indexes::indexed_columns(ex.catalog(), &schema);
    let (plan, mut r, choice, sai) = plan_and_resolve(&schema, s, &ctx, cache, &indexed)?;
    // Masked columns: shown masked to a user without UNMASK, and restricted only by one with
    // SELECT_MASKED (`masks`).
    let plan = if schema.columns.iter().any(|c| c.mask.is_some()) {
        let (access, user) = ex.mask_access(session, &ks, &s.table.name);
        super::masks::check_restrictions(&schema, &s.where_clause, access, &user)?;
        match plan.masked().filter(|_| !access.unmask) {
            Some(masked) => Arc::new(masked),
            None => plan,
        }
    } else {
        plan
    };
    // Cassandra refuses ORDER BY whenever it reads through an index (a global one with the
    // partition key given included: see `plan_and_resolve`; an index on a clustering
    // column restricted by a multi-column `=`, which Cairn reads as a slice; and an SAI
    // index supporting a relation, ALLOW FILTERING or not).
    let tuple_indexed = r.keys.is_some()
        && tuple_eq_on_indexed(s, &indexed)
        && index_needed_with_keys(&schema, s, &r);
    let sai_used = s
        .where_clause
        .iter()
        .any(|rel| sai_indexed(rel, &indexed, false))
        && (r.keys.is_none() || index_needed_with_keys(&schema, s, &r));
    if (choice.is_some() || sai || sai_used || tuple_indexed) && !s.order_by.is_empty() {
        return Err(Error::Invalid(
            "ORDER BY with 2ndary indexes is not supported, except for ANN queries.".into(),
        ));
    }
    // Read through a global index (Cassandra also reads through one for a tuple `=` on an
    // indexed column), some clustering restrictions become row filters, and a multi-column
    // slice cannot be one (checked as it executes; `tuple_slice_filtered` says when it would
    // be); with a token range they stay the read's slice (seed 977).
    let token_range = (r.token_start.is_some() || r.token_end.is_some())
        && !choice
            .as_ref()
            .is_some_and(|c| c.column.kind == ColumnKind::Clustering);
    let index_read = sai
        || sai_used
        || choice.as_ref().is_some_and(|c| !c.local)
        || tuple_eq_on_indexed(s, &indexed);
    if index_read && r.keys.is_none() && !token_range && tuple_slice_filtered(&schema, s, &indexed)
    {
        return Err(Error::Invalid(
            "Multi-column slice restrictions cannot be used for filtering.".into(),
        ));
    }
    if sai_used {
        sai_read(ex, &schema, s, &indexed, &mut r, params.levels.consistency)?;
    }
    // A global index serves the read when the partition key does not name the partitions (it
    // names them: they are read and filtered), a local one when it does.
    let choice = choice.filter(|c| c.local == r.keys.is_some());
    let mut q = Query::new(&schema, s, &plan, &r, &ctx, params)?;
    if let Some(choice) = choice {
        q.index = IndexRead::new(ex, &schema, choice, &ctx, params.levels.consistency)?;
    }
    consistency::for_read(params.levels.consistency)?;
    let rows = q.run(ex, &table, params, wait)?;
    Ok(Outcome::Rows(if s.json { json_rows(rows)? } else { rows }))
}

/// The restriction a global index can serve (the first one written): `column = value`, and
/// for a collection's index `CONTAINS value` (values), `CONTAINS KEY value` (keys),
/// `column[key] = value` (entries).
#[derive(Debug, Clone)]
pub struct IndexChoice {
    /// The indexed base column.
    pub column: ColumnDef,
    /// What the index is keyed by.
    kind: IndexKind,
    /// The value's term.
    term: Term,
    /// The map key's term (`entries()`).
    key: Option<Term>,
    /// The relation's position in the WHERE clause.
    at: usize,
    /// A local index (usable only when the partition key names the partitions).
    local: bool,
}

/// The restriction of `s` one of `indexed` (global ones first) can serve.
fn index_choice(schema: &TableSchema, s: &Select, indexed: &[Indexed]) -> Option<IndexChoice> {
    indexed.iter().find_map(|ix| {
        s.where_clause.iter().enumerate().find_map(|(at, rel)| {
            let (target, op, value) = match rel {
                // A one-column tuple `(c) = (v)` is `c = v` to Cassandra's index (F86's last
                // case); `(c) = ?` binds a tuple, read as written.
                Relation::Compare {
                    target: target @ RelationTarget::Tuple(names),
                    op: Operator::Eq,
                    value: Term::Tuple(values),
                } if names.len() == 1 && values.len() == 1 => (target, Operator::Eq, &values[0]),
                Relation::Compare {
                    target: RelationTarget::Tuple(_),
                    ..
                } => return None,
                Relation::Compare { target, op, value } => (target, *op, value),
                // A literal IN of one value is an `=` (Cassandra 5.0).
                Relation::In {
                    target,
                    values: InValues::Terms(terms),
                } if terms.len() == 1 => (target, Operator::Eq, &terms[0]),
                _ => return None,
            };
            let (name, key) = match (target, op, ix.kind) {
                (
                    RelationTarget::Column(name),
                    Operator::Eq,
                    IndexKind::Simple | IndexKind::Full,
                )
                | (RelationTarget::Column(name), Operator::Contains, IndexKind::Values)
                | (RelationTarget::Column(name), Operator::ContainsKey, IndexKind::Keys) => {
                    (name, None)
                }
                (RelationTarget::Element(name, key), Operator::Eq, IndexKind::Entries) => {
                    (name, Some(key.clone()))
                }
                (
                    RelationTarget::Tuple(names),
                    Operator::Eq,
                    IndexKind::Simple | IndexKind::Full,
                ) if names.len() == 1 => (&names[0], None),
                _ => return None,
            };
            if *name != ix.column {
                return None;
            }
            Some(IndexChoice {
                column: schema.column(name)?.clone(),
                kind: ix.kind,
                term: value.clone(),
                key,
                at,
                local: ix.local,
            })
        })
    })
}

/// Cassandra's rule with an index: any restriction beside the indexed `=` (other than
/// `token()` bounds, and the partition key when it names the partitions) is filtering.
fn check_index_filtering(
    schema: &TableSchema,
    s: &Select,
    choice: &IndexChoice,
    r: &Restrictions,
) -> Result<()> {
    // With the partition key given, or a token range, clustering restrictions that make a
    // slice are the read's, not filters (Cassandra adds them to its filter restrictions only
    // when they need filtering; without either, it asks for ALLOW FILTERING — seed 977).
    // (Not when the index is on a clustering column: then Cassandra filters the other
    // clustering restrictions — seed 978.)
    let token_range = r.token_start.is_some() || r.token_end.is_some();
    let keyed = r.keys.is_some() || (token_range && choice.column.kind != ColumnKind::Clustering);
    let slice_only = keyed
        && !r
            .filters
            .iter()
            .any(|f| f.column.kind == ColumnKind::Clustering);
    let is_clustering = |n: &str| {
        schema
            .column(n)
            .is_some_and(|c| c.kind == ColumnKind::Clustering)
    };
    let extra = s.where_clause.iter().enumerate().any(|(i, rel)| {
        if i == choice.at {
            return false;
        }
        match rel {
            Relation::Compare {
                target: RelationTarget::Token(_),
                ..
            } => false,
            Relation::Compare {
                target: RelationTarget::Column(n),
                ..
            }
            | Relation::In {
                target: RelationTarget::Column(n),
                ..
            } if keyed => !(r.is_partition_key_column(n) || (slice_only && is_clustering(n))),
            Relation::Compare {
                target: RelationTarget::Tuple(_),
                ..
            }
            | Relation::In {
                target: RelationTarget::Tuple(_),
                ..
            } => !slice_only,
            _ => true,
        }
    });
    if extra {
        return Err(Error::Invalid(restrict::REQUIRES_ALLOW_FILTERING.into()));
    }
    Ok(())
}

/// Whether a storage-attached index on the relation's column supports it (Cassandra 5.0's
/// `StorageAttachedIndex.supportsExpression`): `=` (a literal IN of one value too) on a
/// simple or `full()` index; `<`, `<=`, `>`, `>=` on a simple index of a type SAI orders
/// (not text, ascii, boolean, uuid, nor a frozen or tuple value: SAI's "literal" types,
/// checked on the oracle); CONTAINS on a `values()` index, CONTAINS KEY on a `keys()`
/// index, `m[k] = v` on an `entries()` index.
fn sai_supports(rel: &Relation, indexed: &[Indexed]) -> bool {
    sai_indexed(rel, indexed, true)
}

/// Whether an SAI index supports the relation, a multi-column one supported when `every` of
/// its columns is (what the planner serves without filtering, [`sai_supports`]) or when any
/// one is — Cassandra's `hasSupportingIndex`, which makes it read through the index (so ORDER
/// BY is refused, and a multi-column slice becomes a row filter: seed 984).
fn sai_indexed(rel: &Relation, indexed: &[Indexed], every: bool) -> bool {
    let (target, op) = match rel {
        Relation::Compare { target, op, .. } => (target, *op),
        Relation::In {
            target,
            values: InValues::Terms(terms),
        } if terms.len() == 1 => (target, Operator::Eq),
        _ => return false,
    };
    let on = |name: &str, kinds: &[IndexKind], range: bool| {
        indexed.iter().any(|ix| {
            ix.sai
                && ix.column == name
                && kinds.contains(&ix.kind)
                && (!range || sai_orders(&ix.ty))
        })
    };
    match (target, op) {
        (RelationTarget::Column(n), Operator::Eq) => {
            on(n, &[IndexKind::Simple, IndexKind::Full], false)
        }
        (
            RelationTarget::Column(n),
            Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte,
        ) => on(n, &[IndexKind::Simple], true),
        (RelationTarget::Column(n), Operator::Contains) => on(n, &[IndexKind::Values], false),
        (RelationTarget::Column(n), Operator::ContainsKey) => on(n, &[IndexKind::Keys], false),
        (RelationTarget::Element(n, _), Operator::Eq) => on(n, &[IndexKind::Entries], false),
        // A multi-column relation: see `every` above (a slice supported is then refused as
        // a row filter when it executes).
        (RelationTarget::Tuple(names), Operator::Eq) => {
            let each = |n: &String| on(n, &[IndexKind::Simple, IndexKind::Full], false);
            if every {
                names.iter().all(each)
            } else {
                names.iter().any(each)
            }
        }
        (
            RelationTarget::Tuple(names),
            Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte,
        ) => {
            let each = |n: &String| on(n, &[IndexKind::Simple], true);
            if every {
                names.iter().all(each)
            } else {
                names.iter().any(each)
            }
        }
        _ => false,
    }
}

/// Whether SAI answers ranges on values of `ty` (its non-literal types).
fn sai_orders(ty: &CqlType) -> bool {
    !matches!(
        ty,
        CqlType::Text
            | CqlType::Ascii
            | CqlType::Boolean
            | CqlType::Uuid
            | CqlType::Frozen(_)
            | CqlType::Tuple(_)
            | CqlType::Udt(_)
    )
}

/// A read Cassandra makes through its SAI indexes, as they answer it: refused while one of
/// them is being built (a range-only query included, which Cairn answers by a scan), rows
/// whose indexed column is empty left out where the index holds no empty value
/// ([`sai_empty_filters`]), and inet ranges in the index's order (IPv4 as IPv4-mapped IPv6:
/// seed 985).
fn sai_read(
    ex: &Executor,
    schema: &TableSchema,
    s: &Select,
    indexed: &[Indexed],
    r: &mut Restrictions,
    cl: cairn_cluster::consistency::Consistency,
) -> Result<()> {
    let building = super::indexes::indexes_of(ex.catalog(), &schema.keyspace, &schema.name)
        .into_iter()
        .any(|ix| {
            ix.index().is_some_and(|d| d.is_sai())
                && super::indexes::indexed_column(&ix).is_some_and(|c| {
                    s.where_clause.iter().any(|rel| {
                        relation_column(rel) == Some(c.name.as_str())
                            && sai_indexed(rel, indexed, false)
                    })
                })
                && !ex.proxy().views().is_built(ix.id)
        });
    if building {
        return Err(index_not_available(ex, &schema.keyspace, cl));
    }
    r.filters.extend(sai_empty_filters(schema, s, indexed));
    for f in r.filters.iter_mut() {
        let on_sai = indexed
            .iter()
            .any(|ix| ix.sai && ix.kind == IndexKind::Simple && ix.column == f.column.name);
        if let restrict::FilterKind::Compare(op, x) = &f.kind {
            if on_sai
                && f.column.ty == CqlType::Inet
                && matches!(
                    op,
                    Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte
                )
            {
                f.kind = restrict::FilterKind::CompareMappedInet(*op, x.clone());
            }
        }
    }
    Ok(())
}

/// The one column a relation names (`c op v`, `c IN …`, `c[k] = v`), `None` for a tuple.
fn relation_column(rel: &Relation) -> Option<&str> {
    match rel {
        Relation::Compare {
            target: RelationTarget::Column(n) | RelationTarget::Element(n, _),
            ..
        }
        | Relation::In {
            target: RelationTarget::Column(n) | RelationTarget::Element(n, _),
            ..
        } => Some(n),
        _ => None,
    }
}

/// Filters dropping the rows an SAI index cannot find: Cassandra's storage-attached index
/// holds no empty value (zero bytes: `blobAsInt(0x)`, or `''` in a DESC clustering column)
/// except of the types it indexes as literals (text, ascii, boolean, frozen values) in their
/// own order, so a row whose indexed column is empty matches none of the index's `=` and
/// ranges (checked against 5.0.9: `n = blobAsInt(0x)` and `n < 5` leave it out; seed 983).
fn sai_empty_filters(
    schema: &TableSchema,
    s: &Select,
    indexed: &[Indexed],
) -> Vec<restrict::Filter> {
    let mut out: Vec<restrict::Filter> = Vec::new();
    for rel in &s.where_clause {
        let Relation::Compare {
            target: RelationTarget::Column(n),
            ..
        } = rel
        else {
            continue;
        };
        if !sai_supports(rel, indexed) || out.iter().any(|f| f.column.name == *n) {
            continue;
        }
        let Some(c) = schema.column(n) else {
            continue;
        };
        let literal = matches!(
            c.ty,
            CqlType::Text
                | CqlType::Ascii
                | CqlType::Boolean
                | CqlType::Frozen(_)
                | CqlType::Tuple(_)
                | CqlType::Udt(_)
        );
        let reversed = c.kind == ColumnKind::Clustering && c.order == Order::Desc;
        if !literal || reversed {
            out.push(restrict::Filter {
                column: c.clone(),
                kind: restrict::FilterKind::NotEmpty,
            });
        }
    }
    out
}

/// Whether Cassandra 5.0 answers the WHERE clause through its storage-attached indexes
/// without ALLOW FILTERING: at least one relation is one an SAI index supports
/// ([`sai_supports`]), and the others need no filtering by themselves (the WHERE clause's
/// own rules, ALLOW FILTERING not given). Several SAI relations are intersected, so none of
/// them is filtering.
fn sai_serves(
    schema: &TableSchema,
    s: &Select,
    ctx: &dyn TermContext,
    indexed: &[Indexed],
    static_only: bool,
) -> bool {
    if s.allow_filtering || !indexed.iter().any(|ix| ix.sai) {
        return false;
    }
    if !s.where_clause.iter().any(|rel| sai_supports(rel, indexed)) {
        return false;
    }
    // The rest without filtering: first with the partition key's relations kept (an SAI
    // `=` on a key component completes the key: `a = 1 AND b = 2 AND v > 1`), then without
    // the SAI-supported ones (`b > 1` alone is the index's).
    let rest = |keep_key: bool| -> Vec<Relation> {
        s.where_clause
            .iter()
            .filter(|rel| {
                !sai_supports(rel, indexed) || (keep_key && on_partition_key(schema, rel))
            })
            .cloned()
            .collect()
    };
    let fine = |rels: Vec<Relation>| {
        restrict::resolve(
            schema,
            &rels,
            ctx,
            restrict::Context::select(false, static_only),
        )
        .is_ok()
    };
    fine(rest(true)) || fine(rest(false))
}

/// Whether a relation restricts a partition key column.
fn on_partition_key(schema: &TableSchema, rel: &Relation) -> bool {
    let name = match rel {
        Relation::Compare {
            target: RelationTarget::Column(n),
            ..
        }
        | Relation::In {
            target: RelationTarget::Column(n),
            ..
        } => n,
        _ => return false,
    };
    schema
        .column(name)
        .is_some_and(|c| c.kind == ColumnKind::PartitionKey)
}

/// A SELECT's plan and its WHERE clause resolved, refused in Cassandra's order: the selected
/// names first (`toSelectables`), then the WHERE clause (`prepareRestrictions`), then the
/// rest of the selection (`prepareSelection`). PREPARE runs this too, with placeholders for
/// the markers, so a statement whose shape is wrong is refused there. `indexed` names the
/// columns with an index: an `=` on one of them needs no ALLOW FILTERING (the restriction
/// the index serves is returned; the row filters still check it), nor does a WHERE clause
/// storage-attached indexes serve ([`sai_serves`]). The last value says whether the read
/// goes through storage-attached indexes (Cassandra's `usesSecondaryIndexing`): the
/// restriction an index serves is returned when there is an `=` one; ranges alone are a
/// scan with the restrictions as row filters.
pub fn plan_and_resolve(
    schema: &Arc<TableSchema>,
    s: &Select,
    ctx: &dyn TermContext,
    cache: Option<&PlanCache<Plan>>,
    indexed: &[Indexed],
) -> Result<(Arc<Plan>, Restrictions, Option<IndexChoice>, bool)> {
    let choice = index_choice(schema, s, indexed);
    let allow_filtering =
        s.allow_filtering || choice.is_some() || sai_serves(schema, s, ctx, indexed, false);
    let planned = match cache {
        Some(cache) => cache.get_or_plan(schema, || plan(schema, s)),
        None => plan(schema, s).map(Arc::new),
    };
    let plan = match planned {
        Ok(plan) => plan,
        // (The static-only rule needs the selection; without it, that one refusal is
        // missed.)
        Err(e) if !matches!(&e, Error::Invalid(m) if m.starts_with("Undefined column name")) => {
            restrict::resolve(
                schema,
                &s.where_clause,
                ctx,
                restrict::Context::select(allow_filtering, false),
            )?;
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    let static_only = plan.selects_only_statics(schema);
    // Cassandra's `validateSecondaryIndexSelections` comes before the filtering rules: an IN
    // on the partition key is refused when an SAI index serves a relation and is needed (ALLOW
    // FILTERING or not).
    if has_key_in(schema, s) && s.where_clause.iter().any(|rel| sai_supports(rel, indexed)) {
        let r = restrict::resolve(
            schema,
            &s.where_clause,
            ctx,
            restrict::Context::select(true, static_only),
        )?;
        if r.keys.is_none() || index_needed_with_keys(schema, s, &r) {
            return Err(Error::Invalid(
                "Select on indexed columns and with IN clause for the PRIMARY KEY are not supported"
                    .into(),
            ));
        }
    }
    let sai = sai_serves(schema, s, ctx, indexed, static_only);
    let allow_filtering = s.allow_filtering || choice.is_some() || sai;
    let r = restrict::resolve(
        schema,
        &s.where_clause,
        ctx,
        restrict::Context::select(allow_filtering, static_only),
    )?;
    if sai {
        // The partition key naming the partitions, no index is needed when only the
        // partition key and a clustering slice are restricted.
        let sai = r.keys.is_none() || index_needed_with_keys(schema, s, &r);
        let choice = choice.filter(|c| !c.local && sai);
        return Ok((plan, r, choice, sai));
    }
    // An index serves nothing — the WHERE clause's own rules apply — when it is local and
    // the partition key does not name the partitions, or when it is global and the
    // partition key names them with nothing else needing it (Cassandra's
    // `usesSecondaryIndexing` stays false: no regular or static column is restricted and
    // the clustering restrictions are a slice).
    let serves_nothing = |c: &IndexChoice| {
        if c.local {
            r.keys.is_none()
        } else {
            r.keys.is_some() && !index_needed_with_keys(schema, s, &r)
        }
    };
    if choice.as_ref().is_some_and(serves_nothing) {
        let r = restrict::resolve(
            schema,
            &s.where_clause,
            ctx,
            restrict::Context::select(s.allow_filtering, plan.selects_only_statics(schema)),
        )?;
        return Ok((plan, r, None, false));
    }
    let tuple_indexed = r.keys.is_some()
        && tuple_eq_on_indexed(s, indexed)
        && index_needed_with_keys(schema, s, &r);
    if (choice.as_ref().is_some_and(|c| !c.local) || tuple_indexed) && has_key_in(schema, s) {
        // Cassandra's `validateSecondaryIndexSelections` (for the partition key).
        return Err(Error::Invalid(
            "Select on indexed columns and with IN clause for the PRIMARY KEY are not supported"
                .into(),
        ));
    }
    if let Some(c) = choice.as_ref().filter(|_| !s.allow_filtering) {
        check_index_filtering(schema, s, c, &r)?;
    }
    Ok((plan, r, choice, false))
}

/// Whether, the partition key naming the partitions, Cassandra reads through an index: a
/// regular or static column is restricted, or the clustering restrictions need filtering.
fn index_needed_with_keys(schema: &TableSchema, s: &Select, r: &Restrictions) -> bool {
    let non_key = s.where_clause.iter().any(|rel| match rel {
        Relation::Compare {
            target: RelationTarget::Column(n) | RelationTarget::Element(n, _),
            ..
        }
        | Relation::In {
            target: RelationTarget::Column(n) | RelationTarget::Element(n, _),
            ..
        } => schema
            .column(n)
            .is_some_and(|c| matches!(c.kind, ColumnKind::Regular | ColumnKind::Static)),
        _ => false,
    });
    non_key
        || r.filters
            .iter()
            .any(|f| f.column.kind == ColumnKind::Clustering)
}

/// Whether a multi-column slice (`(a, b) > (…)`) is one of an index read's row filters, by
/// Cassandra's rule (`ClusteringColumnRestrictions.addToRowFilter`): walking the clustering
/// relations in column order, one is a filter when something before it is missing from the
/// prefix the read can use, when it is a CONTAINS-like relation, or when an index supports
/// it (the prefix then does not grow past it). A slice that starts the usable part stays the
/// read's slice (F98: `(ck0, ck1) > (…)` beside an index on a regular column).
fn tuple_slice_filtered(schema: &TableSchema, s: &Select, indexed: &[Indexed]) -> bool {
    /// What a clustering relation is to the walk below.
    #[derive(PartialEq)]
    enum Kind {
        Prefix,
        Slice,
        TupleSlice,
        Filter,
    }
    let clustering: Vec<&str> = schema
        .columns_of(ColumnKind::Clustering)
        .map(|c| c.name.as_str())
        .collect();
    let position = |n: &str| clustering.iter().position(|c| *c == n);
    let is_slice = |op: Operator| {
        matches!(
            op,
            Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte
        )
    };
    // A legacy index supports `=` on its column (a tuple `=` when it is on any of them).
    let legacy_eq = |n: &str| {
        indexed.iter().any(|ix| {
            !ix.local && matches!(ix.kind, IndexKind::Simple | IndexKind::Full) && ix.column == n
        })
    };
    let mut rels: Vec<(usize, usize, Kind, bool)> = Vec::new();
    for rel in &s.where_clause {
        let supported = sai_indexed(rel, indexed, false);
        let (names, kind, eq) = match rel {
            Relation::Compare {
                target: RelationTarget::Column(n),
                op,
                ..
            } => {
                let kind = match op {
                    Operator::Eq => Kind::Prefix,
                    op if is_slice(*op) => Kind::Slice,
                    _ => Kind::Filter,
                };
                (std::slice::from_ref(n), kind, *op == Operator::Eq)
            }
            Relation::Compare {
                target: RelationTarget::Tuple(names),
                op,
                ..
            } => {
                let kind = match op {
                    Operator::Eq => Kind::Prefix,
                    op if is_slice(*op) => Kind::TupleSlice,
                    _ => Kind::Filter,
                };
                (names.as_slice(), kind, *op == Operator::Eq)
            }
            Relation::In {
                target: RelationTarget::Column(n),
                ..
            } => (std::slice::from_ref(n), Kind::Prefix, false),
            Relation::In {
                target: RelationTarget::Tuple(names),
                ..
            } => (names.as_slice(), Kind::Prefix, false),
            _ => continue,
        };
        let (Some(first), Some(last)) = (
            names.first().and_then(|n| position(n)),
            names.last().and_then(|n| position(n)),
        ) else {
            continue;
        };
        let supported = supported || (eq && names.iter().any(|n| legacy_eq(n)));
        rels.push((first, last, kind, supported));
    }
    rels.sort_by_key(|r| r.0);
    let mut prefix = 0;
    for (first, last, kind, supported) in rels {
        if kind == Kind::Filter || first != prefix || supported {
            if kind == Kind::TupleSlice {
                return true;
            }
            continue;
        }
        if kind == Kind::Prefix {
            prefix = last + 1;
        }
    }
    false
}

/// Whether a multi-column `=` (or literal IN of one tuple) restricts a column a global index
/// serving `=` is on (a simple or `full()` one: Cassandra's index supports it, its
/// `hasQueriableIndex`).
fn tuple_eq_on_indexed(s: &Select, indexed: &[Indexed]) -> bool {
    let on_indexed = |names: &[String]| {
        names.iter().any(|n| {
            indexed.iter().any(|ix| {
                !ix.local
                    && matches!(ix.kind, IndexKind::Simple | IndexKind::Full)
                    && ix.column == *n
            })
        })
    };
    s.where_clause.iter().any(|rel| match rel {
        Relation::Compare {
            target: RelationTarget::Tuple(names),
            op: Operator::Eq,
            ..
        } => on_indexed(names),
        Relation::In {
            target: RelationTarget::Tuple(names),
            values: InValues::Terms(terms),
        } if terms.len() == 1 => on_indexed(names),
        _ => false,
    })
}

/// Whether the WHERE clause has an IN on a partition key column (what Cassandra 5.0 refuses
/// beside an index; an IN on clustering columns is filtered).
fn has_key_in(schema: &TableSchema, s: &Select) -> bool {
    s.where_clause.iter().any(|rel| match rel {
        // A literal IN of one value is an `=` (Cassandra's `keyIsInRelation`).
        Relation::In {
            values: InValues::Terms(terms),
            ..
        } if terms.len() == 1 => false,
        Relation::In {
            target: RelationTarget::Column(n),
            ..
        } => schema
            .column(n)
            .is_some_and(|c| c.kind == ColumnKind::PartitionKey),
        _ => false,
    })
}

/// An index lookup while the index is still being built on this node (it would miss rows):
/// Cassandra's `IndexNotAvailableException` ("The secondary index '…' is not yet
/// available", in its log), which reaches the client as a read failure of this replica with
/// reason `INDEX_NOT_AVAILABLE`.
fn index_not_available(
    ex: &Executor,
    keyspace: &str,
    cl: cairn_cluster::consistency::Consistency,
) -> Error {
    let node = ex.node();
    let me = match node.listen_address.as_slice() {
        &[a, b, c, d] => std::net::IpAddr::from([a, b, c, d]),
        v => <[u8; 16]>::try_from(v)
            .map(std::net::IpAddr::from)
            .unwrap_or(std::net::IpAddr::from([127, 0, 0, 1])),
    };
    let block_for = cl.block_for(&ex.proxy().replication(keyspace), &node.data_center);
    Error::ReadFailure(cairn_cluster::consistency::ReadFailure {
        consistency: cl,
        received: 0,
        block_for,
        failures: vec![(me, "INDEX_NOT_AVAILABLE".into())],
        data_present: false,
    })
}

/// Rows per read of an index partition.
const INDEX_BATCH: usize = 512;

/// A read through an index: the index's hidden view, the indexed column and the value.
/// An index still being built on this node is not read: the query scans the base table and
/// filters instead (Cassandra refuses it until the index is built).
struct IndexRead {
    table: Arc<cairn_engine::table::Table>,
    column: ColumnDef,
    /// The index partition's key: the value (a pair's composite key for `entries()`).
    value: Bytes,
    /// A local index: its partition is the base partition, clustered by the value.
    local: bool,
    /// Its entries name base partitions, read whole in the query's slice: an index on a
    /// static column (an entry per partition), or on a partition key column (every row of a
    /// partition has the value; the static row's entry finds a partition without rows).
    whole_partitions: bool,
}

impl IndexRead {
    fn new(
        ex: &Executor,
        schema: &TableSchema,
        choice: IndexChoice,
        ctx: &dyn TermContext,
        cl: cairn_cluster::consistency::Consistency,
    ) -> Result<Option<IndexRead>> {
        let missing = || Error::Invalid(format!("No index found on column {}", choice.column.name));
        let ix = super::indexes::usable_index(
            ex.catalog(),
            schema,
            &choice.column.name,
            choice.kind,
            choice.local,
        )
        .ok_or_else(missing)?;
        if !ex.proxy().views().is_built(ix.id) {
            return Err(index_not_available(ex, &ix.keyspace, cl));
        }
        let table = ex
            .catalog()
            .db()
            .table(&ix.keyspace, &ix.name)
            .ok_or_else(missing)?;
        let bytes = |term: &Term, ty: &CqlType| -> Result<Bytes> {
            Ok(
                match term_to_bytes(term, ty, &choice.column.name, ctx)
                    .map_err(|e| Error::Invalid(e.to_string()))?
                {
                    TermValue::Value(b) => b,
                    // The restriction's own resolution refused null and unset before.
                    _ => Bytes::new(),
                },
            )
        };
        // A set element or a map key is looked up as its cell path (the index's key).
        let path = |v: Bytes| -> Result<Bytes> {
            crate::values::collections::element_path(&choice.column.ty, &v)
                .map_err(|e| Error::Invalid(e.to_string()))
        };
        let value = match (&choice.column.ty, choice.kind) {
            (CqlType::Set(e), IndexKind::Values) => path(bytes(&choice.term, e)?)?,
            (CqlType::List(e), IndexKind::Values) | (CqlType::Map(_, e), IndexKind::Values) => {
                bytes(&choice.term, e)?
            }
            (CqlType::Map(k, _), IndexKind::Keys) => path(bytes(&choice.term, k)?)?,
            (CqlType::Map(k, v), IndexKind::Entries) => {
                let key_term = choice.key.as_ref().ok_or_else(missing)?;
                let key = path(bytes(key_term, k)?)?;
                let value = bytes(&choice.term, v)?;
                cairn_engine::model::token::composite_partition_key(&[&key, &value])
            }
            (ty, _) => bytes(&choice.term, ty)?,
        };
        Ok(Some(IndexRead {
            table,
            whole_partitions: matches!(
                choice.column.kind,
                ColumnKind::Static | ColumnKind::PartitionKey
            ),
            column: choice.column,
            value,
            local: choice.local,
        }))
    }

    /// The base clustering keys (encoded) a local index's partition `key` names for the value:
    /// its rows under the value's prefix, clustered by the value, then the base clustering
    /// columns other than the indexed one.
    fn local_rows(
        &self,
        ex: &Executor,
        schema: &TableSchema,
        layout: &ClusteringLayout,
        key: &DecoratedKey,
        cmd: &ReadCommand,
        cl: cairn_cluster::consistency::Consistency,
    ) -> Result<Vec<Bytes>> {
        let ilayout = self.table.schema().clustering_layout();
        let prefix = ilayout
            .encode_prefix(&[&self.value])
            .map_err(|e| Error::Invalid(e.to_string()))?;
        let mut icmd = ReadCommand::all(cmd.now, cmd.wait);
        icmd.slice = Slice::new(vec![ClusteringRange::prefix(&prefix)]);
        icmd.trace = cmd.trace.clone();
        let Some(part) = ex.proxy().read(&self.table, key, &icmd, cl)? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::with_capacity(part.rows.len());
        for (ick, _) in &part.rows {
            let values = ilayout
                .decode(&ick.0)
                .map_err(|e| Error::Invalid(e.to_string()))?;
            let mut rest = values.iter().skip(1);
            let mut ck = Vec::new();
            for c in schema.columns_of(ColumnKind::Clustering) {
                let v = if c.id == self.column.id {
                    Some(self.value.clone())
                } else {
                    rest.next().cloned()
                };
                ck.push(v.ok_or_else(|| Error::Invalid("malformed secondary index entry".into()))?);
            }
            let refs: Vec<&[u8]> = ck.iter().map(|b| b.as_ref()).collect();
            let ck = layout
                .encode_key(&refs)
                .map_err(|e| Error::Invalid(e.to_string()))?;
            out.push(ck.0);
        }
        Ok(out)
    }

    /// The base partition key and clustering key an index row names: its clustering is the
    /// token, then the base key's columns other than the indexed one.
    fn base_position(
        &self,
        schema: &TableSchema,
        layout: &ClusteringLayout,
        values: &[Bytes],
    ) -> Result<(DecoratedKey, Bytes)> {
        let mut rest = values.iter().skip(1);
        let mut take = |c: &ColumnDef| -> Result<Bytes> {
            if c.id == self.column.id {
                return Ok(self.value.clone());
            }
            rest.next()
                .cloned()
                .ok_or_else(|| Error::Invalid("malformed secondary index entry".into()))
        };
        let pk = schema
            .columns_of(ColumnKind::PartitionKey)
            .map(&mut take)
            .collect::<Result<Vec<_>>>()?;
        if self.whole_partitions {
            // The entry names the partition only.
            let refs: Vec<&[u8]> = pk.iter().map(|b| b.as_ref()).collect();
            let key = cairn_engine::model::token::composite_partition_key(&refs);
            return Ok((DecoratedKey::new(key), Bytes::new()));
        }
        let ck = schema
            .columns_of(ColumnKind::Clustering)
            .map(&mut take)
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&[u8]> = pk.iter().map(|b| b.as_ref()).collect();
        let key = cairn_engine::model::token::composite_partition_key(&refs);
        let refs: Vec<&[u8]> = ck.iter().map(|b| b.as_ref()).collect();
        let ck = layout
            .encode_key(&refs)
            .map_err(|e| Error::Invalid(e.to_string()))?;
        Ok((DecoratedKey::new(key), ck.0))
    }
}

/// The one result column of `SELECT JSON` on `columns`' table.
pub fn json_columns(columns: &[ColumnSpec], keyspace: &str, table: &str) -> Arc<[ColumnSpec]> {
    let (keyspace, table) = match columns.first() {
        Some(c) => (c.keyspace.clone(), c.table.clone()),
        None => (keyspace.to_string(), table.to_string()),
    };
    Arc::from(vec![ColumnSpec {
        keyspace,
        table,
        name: json::JSON_COLUMN.to_string(),
        ty: CqlType::Text,
    }])
}

/// `SELECT JSON`: each result row becomes one JSON object of its columns, keyed by the
/// result column names (Cassandra's `Selection.rowToJson`); paging is unchanged.
fn json_rows(rs: ResultSet) -> Result<ResultSet> {
    let rows = rs
        .rows
        .iter()
        .map(|row| {
            let mut out = String::from("{");
            for (i, (spec, v)) in rs.columns.iter().zip(row).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&json::json_key(&spec.name));
                out.push_str(": ");
                out.push_str(&json::to_json(&spec.ty, v.as_deref())?);
            }
            out.push('}');
            Ok(vec![Some(Bytes::from(out))])
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ResultSet {
        columns: json_columns(&rs.columns, "", ""),
        rows,
        paging_state: rs.paging_state,
    })
}

/// How rows become result rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// One result row per CQL row.
    Rows,
    /// One result row per partition.
    Distinct,
    /// Groups of the partition key and this many clustering columns.
    GroupBy(usize),
    /// One group of every row.
    AggregateAll,
}

/// A SELECT checked against its table and restrictions, ready to run.
struct Query<'a> {
    schema: &'a TableSchema,
    plan: &'a Plan,
    r: &'a Restrictions,
    ctx: &'a Binds<'a>,
    layout: ClusteringLayout,
    mode: Mode,
    reversed: bool,
    /// For `IN` + ORDER BY: the clustering positions to sort on, each with its direction
    /// (`true`: descending values).
    post_order: Option<Vec<(usize, bool)>>,
    limit: Option<usize>,
    per_partition: Option<usize>,
    page_size: Option<usize>,
    /// `BYPASS CACHE`: read past the row cache.
    bypass_cache: bool,
    /// The global index the read goes through, if any.
    index: Option<IndexRead>,
}

impl<'a> Query<'a> {
    fn new(
        schema: &'a TableSchema,
        s: &Select,
        plan: &'a Plan,
        r: &'a Restrictions,
        ctx: &'a Binds<'a>,
        params: &QueryParams,
    ) -> Result<Query<'a>> {
        if s.distinct {
            if s.per_partition_limit.is_some() {
                return Err(Error::Invalid(
                    "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries".into(),
                ));
            }
            check_distinct(schema, s, plan, r)?;
        }
        let mode = match group_prefix(schema, s, r)? {
            Some(n) => Mode::GroupBy(n),
            None if plan.aggregate => Mode::AggregateAll,
            None if s.distinct => Mode::Distinct,
            None => Mode::Rows,
        };
        if mode == Mode::AggregateAll && s.per_partition_limit.is_some() {
            return Err(Error::Invalid(
                "PER PARTITION LIMIT is not allowed with aggregate queries.".into(),
            ));
        }
        let (reversed, order_columns) = ordering(schema, s, r)?;
        let post_order = (r.key_in && !order_columns.is_empty()).then_some(order_columns);
        let limit = limit_of(&s.limit, "[limit]", ctx)?;
        let per_partition = limit_of(&s.per_partition_limit, "[per_partition_limit]", ctx)?;
        let page_size = params.page_size.filter(|p| *p > 0).map(|p| p as usize);
        Ok(Query {
            schema,
            plan,
            r,
            ctx,
            layout: schema.clustering_layout(),
            mode,
            reversed,
            post_order,
            limit,
            per_partition,
            page_size: match mode {
                // Aggregates over everything answer in one page.
                Mode::AggregateAll => None,
                _ => page_size,
            },
            bypass_cache: s.bypass_cache,
            index: None,
        })
    }

    /// Reads and shapes the rows.
    fn run(
        &self,
        ex: &Executor,
        table: &cairn_engine::table::Table,
        params: &QueryParams,
        wait: Wait,
    ) -> Result<ResultSet> {
        let resume = params
            .paging_state
            .as_ref()
            .filter(|b| !b.is_empty())
            .map(|b| PagingState::decode(b))
            .transpose()?;
        let mut run = Run::new(self, resume.as_ref());
        // As Cassandra's `getSliceCommands`: a query that selects nothing (an empty `IN`, an
        // impossible clustering slice) answers no rows before its keys are validated. A
        // paged sort across partitions is refused after that: for an aggregate or GROUP BY
        // query always (Cassandra pages those internally), for rows only when something is
        // read (`execute`'s paging path).
        let refuse_paging = self.post_order.is_some() && params.page_size.is_some_and(|p| p > 0);
        let aggregated = matches!(self.mode, Mode::AggregateAll | Mode::GroupBy(_));
        let paging_refused = || {
            Err(Error::Invalid("Cannot page queries with both ORDER BY and a IN restriction on the partition key; you must either remove the ORDER BY or the IN and sort client side, or disable paging for this query".into()))
        };
        let slice = if self.r.empty {
            None
        } else {
            Some(self.r.slice(self.schema)?).filter(|s| !s.is_empty())
        };
        let Some(slice) = slice else {
            if refuse_paging && aggregated {
                return paging_refused();
            }
            return Ok(run.finish());
        };
        self.r.check_keys()?;
        if refuse_paging {
            return paging_refused();
        }
        let mut cmd = ReadCommand::all(super::catalog::now_secs(), wait);
        cmd.slice = slice.clone();
        cmd.reversed = self.reversed;
        cmd.include_static = true;
        cmd.bypass_cache = self.bypass_cache;
        cmd.trace = params.trace.clone();
        if self.mode == Mode::Distinct {
            // One live row proves the partition; only its key and statics are shown.
            cmd.limit = Some(1);
        }
        let resume_key = resume.as_ref().map(|p| DecoratedKey::new(p.key.clone()));
        // The partition a page stopped in, read from just after its last row.
        let resumed = |p: &PagingState| -> Option<ReadCommand> {
            if p.clustering.is_empty() || self.mode == Mode::Distinct {
                return None;
            }
            let mut c = cmd.clone();
            c.slice = slice.resume_after(&p.clustering, self.reversed);
            c.include_static = true;
            Some(c)
        };
        let cl = params.levels.consistency;
        if let (Some(ix), None) = (&self.index, &self.r.keys) {
            self.run_index(
                ex,
                table,
                ix,
                &cmd,
                &slice,
                resume.as_ref(),
                &mut run,
                params,
            )?;
            return Ok(run.finish());
        }
        if let (Some(ix), Some(keys)) = (self.index.as_ref().filter(|ix| ix.local), &self.r.keys) {
            let from = resume_key
                .as_ref()
                .and_then(|rk| keys.iter().position(|k| k == rk))
                .unwrap_or(0);
            for key in keys.iter().skip(from) {
                let cks = ix.local_rows(ex, self.schema, &self.layout, key, &cmd, cl)?;
                let resume = resume.as_ref();
                if !self.index_partition(
                    ex,
                    table,
                    ix,
                    key.clone(),
                    cks,
                    &cmd,
                    &slice,
                    resume,
                    &mut run,
                    params,
                )? {
                    break;
                }
            }
            return Ok(run.finish());
        }
        match &self.r.keys {
            Some(keys) => {
                let from = resume_key
                    .as_ref()
                    .and_then(|rk| keys.iter().position(|k| k == rk))
                    .unwrap_or(0);
                for key in keys.iter().skip(from) {
                    let (c, prior, is_resumed) = match (&resume, &resume_key) {
                        (Some(p), Some(rk)) if key == rk => match resumed(p) {
                            Some(c) => {
                                let prior = p.partition_rows as usize;
                                (self.read_command(&c, prior, &run), prior, true)
                            }
                            None => continue,
                        },
                        _ => (self.read_command(&cmd, 0, &run), 0, false),
                    };
                    if let Some(p) =
                        ex.proxy()
                            .read_or_defer(table, key, &c, cl, params.acks.as_deref())?
                    {
                        if !run.partition(p, prior, is_resumed)? {
                            break;
                        }
                    }
                }
            }
            None => {
                let start = match &resume_key {
                    Some(k) => PartitionPos::After(k.clone()),
                    None => match self.r.token_start {
                        Some((t, true)) => PartitionPos::TokenStart(Token(t)),
                        Some((t, false)) if t < i64::MAX => PartitionPos::TokenStart(Token(t + 1)),
                        Some(_) => return Ok(run.finish()),
                        None => PartitionPos::TokenStart(Token::MIN),
                    },
                };
                // The minimum token as an end bound stands for the end of the ring.
                let end = match self.r.token_end.filter(|(t, _)| *t != i64::MIN) {
                    Some((t, true)) => Some(Token(t)),
                    Some((t, false)) if t > i64::MIN => Some(Token(t - 1)),
                    Some(_) => return Ok(run.finish()),
                    None => None,
                };
                let mut go_on = true;
                if let (Some(p), Some(rk)) = (&resume, &resume_key) {
                    if let Some(c) = resumed(p) {
                        let prior = p.partition_rows as usize;
                        let c = self.read_command(&c, prior, &run);
                        if let Some(part) =
                            ex.proxy()
                                .read_or_defer(table, rk, &c, cl, params.acks.as_deref())?
                        {
                            go_on = run.partition(part, prior, true)?;
                        }
                    }
                }
                if go_on {
                    let scan = ex.proxy().scan(
                        &self.schema.keyspace,
                        &self.schema.name,
                        start,
                        end,
                        self.read_command(&cmd, 0, &run),
                        cl,
                    )?;
                    for p in scan {
                        if !run.partition(p?, 0, false)? {
                            break;
                        }
                    }
                }
            }
        }
        Ok(run.finish())
    }

    /// Reads through a global index: the index partition of the value, in batches, from the
    /// token of the partition a page stopped in; its rows name base rows in token order,
    /// each base partition's rows read together at the request's consistency, and the
    /// filters (the indexed restriction among them) checked on them as on any read, so an
    /// index entry the base row no longer matches shows nothing.
    #[allow(clippy::too_many_arguments)]
    fn run_index(
        &self,
        ex: &Executor,
        base: &cairn_engine::table::Table,
        ix: &IndexRead,
        cmd: &ReadCommand,
        slice: &Slice,
        resume: Option<&PagingState>,
        run: &mut Run<'_>,
        params: &QueryParams,
    ) -> Result<()> {
        let cl = params.levels.consistency;
        let ischema = ix.table.schema();
        let ilayout = ischema.clustering_layout();
        let resume_key = resume.map(|p| DecoratedKey::new(p.key.clone()));
        let mut islice = match &resume_key {
            Some(k) => {
                let start = ilayout
                    .encode_prefix(&[&k.token.0.to_be_bytes()])
                    .map_err(|e| Error::Invalid(e.to_string()))?;
                Slice::new(vec![ClusteringRange::from_bounds(
                    Some((&start, true)),
                    None,
                )])
            }
            None => Slice::all(),
        };
        // An empty value (`''`, an empty blob) is indexed, as Cassandra indexes it: its index
        // partition is the empty key (the ring's minimum token).
        let index_key = DecoratedKey::new(ix.value.clone());
        let in_bounds = |t: i64| {
            let after = match self.r.token_start {
                None => true,
                Some((s, true)) => t >= s,
                Some((s, false)) => t > s,
            };
            let before = match self.r.token_end.filter(|(e, _)| *e != i64::MIN) {
                None => true,
                Some((e, true)) => t <= e,
                Some((e, false)) => t < e,
            };
            after && before
        };
        let mut pending: Option<(DecoratedKey, Vec<Bytes>)> = None;
        loop {
            let mut icmd = ReadCommand::all(cmd.now, cmd.wait);
            icmd.slice = islice.clone();
            icmd.limit = Some(INDEX_BATCH);
            icmd.trace = cmd.trace.clone();
            let Some(part) = ex.proxy().read(&ix.table, &index_key, &icmd, cl)? else {
                break;
            };
            for (ick, _) in &part.rows {
                let values = ilayout
                    .decode(&ick.0)
                    .map_err(|e| Error::Invalid(e.to_string()))?;
                let (key, ck) = ix.base_position(self.schema, &self.layout, &values)?;
                if resume_key.as_ref().is_some_and(|rk| key < *rk) || !in_bounds(key.token.0) {
                    continue;
                }
                match &mut pending {
                    Some((k, cks)) if *k == key => cks.push(ck),
                    _ => {
                        if let Some((k, cks)) = pending.replace((key, vec![ck])) {
                            if !self.index_partition(
                                ex, base, ix, k, cks, cmd, slice, resume, run, params,
                            )? {
                                return Ok(());
                            }
                        }
                    }
                }
            }
            match part.rows.last() {
                Some((last, _)) if part.rows.len() >= INDEX_BATCH => {
                    islice = islice.resume_after(&last.0, false);
                }
                _ => break,
            }
        }
        if let Some((k, cks)) = pending {
            self.index_partition(ex, base, ix, k, cks, cmd, slice, resume, run, params)?;
        }
        Ok(())
    }

    /// One base partition's rows an index names (`cks`, encoded; an index whose entries name
    /// partitions: its rows in the query's slice), within the query's slice
    /// and after the row a page stopped at. Returns false when the read should stop.
    #[allow(clippy::too_many_arguments)]
    fn index_partition(
        &self,
        ex: &Executor,
        base: &cairn_engine::table::Table,
        ix: &IndexRead,
        key: DecoratedKey,
        mut cks: Vec<Bytes>,
        cmd: &ReadCommand,
        slice: &Slice,
        resume: Option<&PagingState>,
        run: &mut Run<'_>,
        params: &QueryParams,
    ) -> Result<bool> {
        let (prior, resumed) = match resume {
            Some(p) if p.key == key.key => {
                if p.clustering.is_empty() {
                    // The partition (without clustering rows) was returned whole.
                    return Ok(true);
                }
                cks.retain(|c| c.as_ref() > p.clustering.as_ref());
                (p.partition_rows as usize, true)
            }
            _ => (0, false),
        };
        let mut c = cmd.clone();
        if ix.whole_partitions {
            c.slice = match resume {
                Some(p) if resumed => slice.resume_after(&p.clustering, self.reversed),
                _ => slice.clone(),
            };
        } else if self.layout.columns.is_empty() {
            c.slice = slice.clone();
        } else {
            cks.retain(|ck| slice.contains(ck));
            cks.sort();
            cks.dedup();
            if cks.is_empty() {
                return Ok(true);
            }
            c.slice = Slice::new(
                cks.iter()
                    .map(|ck| ClusteringRange::from_bounds(Some((ck, true)), Some((ck, true))))
                    .collect(),
            );
        }
        let c = self.read_command(&c, prior, run);
        let cl = params.levels.consistency;
        match ex
            .proxy()
            .read_or_defer(base, &key, &c, cl, params.acks.as_deref())?
        {
            Some(p) => run.partition(p, prior, resumed),
            None => Ok(true),
        }
    }

    /// The read command for a partition. When every live row read is a row of the result
    /// (no filter, grouping or sort here), the engine stops at the rows the result can still
    /// take — the per-partition limit, LIMIT and the page — so that a `LIMIT 1` reads one
    /// row of a partition, not all of it (nor fills the row cache with all of it).
    fn read_command(&self, cmd: &ReadCommand, prior: usize, run: &Run<'_>) -> ReadCommand {
        let mut c = cmd.clone();
        if self.mode == Mode::Rows && self.r.filters.is_empty() && self.post_order.is_none() {
            let per_partition = self.per_partition.map(|l| l.saturating_sub(prior).max(1));
            let page_room = self
                .page_size
                .map(|p| p.saturating_sub(run.rows.len()).max(1));
            c.limit = [per_partition, Some(run.remaining.max(1)), page_room]
                .into_iter()
                .flatten()
                .min()
                .filter(|n| *n != usize::MAX);
        }
        c
    }
}

/// One execution's state: the result rows and what the limits still allow.
struct Run<'q> {
    q: &'q Query<'q>,
    rows: Vec<Vec<Option<Bytes>>>,
    /// Sort keys of the rows, for ORDER BY across partitions.
    sort_keys: Vec<Vec<Option<Bytes>>>,
    /// Rows (or groups) LIMIT still allows.
    remaining: usize,
    /// The open group: its key (partition key and clustering prefix), state, and the position
    /// of its last row.
    group: Option<OpenGroup>,
    /// Every row's group (aggregates without GROUP BY).
    all: Option<Group>,
    /// The position after which the next page starts, with the partition's count.
    last: Option<(DecoratedKey, Bytes, usize)>,
    /// Whether more may follow the page.
    more: bool,
}

struct OpenGroup {
    key: DecoratedKey,
    prefix: Vec<Bytes>,
    group: Group,
    last_ck: Bytes,
    /// For ORDER BY across partitions: the group's first row's ordering values (what
    /// Cassandra's selection shows for a column that is not aggregated).
    sort_key: Vec<Option<Bytes>>,
}

impl<'q> Run<'q> {
    fn new(q: &'q Query<'q>, resume: Option<&PagingState>) -> Self {
        let remaining = match resume {
            // ORDER BY across partitions collects every row: LIMIT applies after the sort.
            _ if q.post_order.is_some() => usize::MAX,
            Some(p) => usize::try_from(p.remaining.max(0)).unwrap_or(usize::MAX),
            None => q.limit.unwrap_or(usize::MAX),
        };
        Run {
            q,
            rows: Vec::new(),
            sort_keys: Vec::new(),
            remaining,
            group: None,
            all: (q.mode == Mode::AggregateAll).then(|| Group::new(q.plan)),
            last: None,
            more: false,
        }
    }

    fn page_full(&self) -> bool {
        self.q.page_size.is_some_and(|ps| self.rows.len() >= ps)
    }

    /// Takes one partition's rows; `prior` rows (or groups) of it were returned by earlier
    /// pages, `resumed` when it continues a page. Returns false when the read should stop.
    fn partition(&mut self, p: PartitionResult, prior: usize, resumed: bool) -> Result<bool> {
        let q = self.q;
        let pk = partition_values(q.schema, &p.key);
        let static_row = p.static_row.as_ref();
        let now = super::catalog::now_secs();
        let mut count = prior;
        if q.mode == Mode::Distinct {
            let view = RowView {
                key: &p.key,
                pk: &pk,
                ck: None,
                static_row,
                row: None,
                now,
            };
            if !self.passes(&view) {
                return Ok(true);
            }
            let values = row_values(q.plan, q.schema, &view, q.ctx)?;
            self.rows.push(values);
            self.remaining = self.remaining.saturating_sub(1);
            self.last = Some((p.key.clone(), Bytes::new(), 1));
            return Ok(self.after_output());
        }
        let per_partition = q.per_partition.unwrap_or(usize::MAX);
        let had_rows = !p.rows.is_empty();
        for (ck, row) in &p.rows {
            if count >= per_partition {
                break;
            }
            let ckv = q.layout.decode(&ck.0).unwrap_or_default();
            let view = RowView {
                key: &p.key,
                pk: &pk,
                ck: Some(&ckv),
                static_row,
                row: Some(row),
                now,
            };
            if !self.passes(&view) {
                continue;
            }
            match q.mode {
                Mode::Rows => {
                    self.emit(&view)?;
                    count += 1;
                    self.last = Some((p.key.clone(), ck.0.clone(), count));
                    if !self.after_output() {
                        return Ok(false);
                    }
                }
                Mode::GroupBy(n) => {
                    let prefix: Vec<Bytes> = ckv.iter().take(n).cloned().collect();
                    if self
                        .group
                        .as_ref()
                        .is_some_and(|g| g.key != p.key || g.prefix != prefix)
                    {
                        count += 1;
                        if !self.close_group(count)? {
                            return Ok(false);
                        }
                        if count >= per_partition {
                            break;
                        }
                    }
                    if self.group.is_none() {
                        self.group = Some(OpenGroup {
                            key: p.key.clone(),
                            prefix,
                            group: Group::new(q.plan),
                            last_ck: Bytes::new(),
                            sort_key: self.sort_key(&view),
                        });
                    }
                    let Some(g) = self.group.as_mut() else {
                        continue;
                    };
                    g.group.add(q.plan, q.schema, &view, q.ctx)?;
                    g.last_ck = ck.0.clone();
                }
                Mode::AggregateAll => {
                    if let Some(all) = self.all.as_mut() {
                        all.add(q.plan, q.schema, &view, q.ctx)?;
                    }
                }
                Mode::Distinct => {}
            }
        }
        // A partition without rows in the slice shows its static row, when the query does
        // not restrict clustering or regular columns.
        if !had_rows && !resumed && static_row.is_some() && q.r.returns_static_only_partitions() {
            let view = RowView {
                key: &p.key,
                pk: &pk,
                ck: None,
                static_row,
                row: None,
                now,
            };
            if self.passes(&view) && count < per_partition {
                match q.mode {
                    Mode::Rows => {
                        self.emit(&view)?;
                        self.last = Some((p.key.clone(), Bytes::new(), count + 1));
                        if !self.after_output() {
                            return Ok(false);
                        }
                    }
                    Mode::GroupBy(_) => {
                        let mut group = Group::new(q.plan);
                        group.add(q.plan, q.schema, &view, q.ctx)?;
                        self.group = Some(OpenGroup {
                            key: p.key.clone(),
                            prefix: Vec::new(),
                            group,
                            last_ck: Bytes::new(),
                            sort_key: self.sort_key(&view),
                        });
                    }
                    Mode::AggregateAll => {
                        if let Some(all) = self.all.as_mut() {
                            all.add(q.plan, q.schema, &view, q.ctx)?;
                        }
                    }
                    Mode::Distinct => {}
                }
            }
        }
        if matches!(q.mode, Mode::GroupBy(_))
            && self.group.is_some()
            && !self.close_group(count + 1)?
        {
            return Ok(false);
        }
        Ok(true)
    }

    /// Emits the open group's row, the `in_partition`-th group of its partition; false when
    /// the limits stop the read.
    fn close_group(&mut self, in_partition: usize) -> Result<bool> {
        let Some(g) = self.group.take() else {
            return Ok(true);
        };
        let values = g.group.result(self.q.plan, self.q.ctx)?;
        if self.q.post_order.is_some() {
            self.sort_keys.push(g.sort_key);
        }
        self.rows.push(values);
        self.remaining = self.remaining.saturating_sub(1);
        self.last = Some((g.key, g.last_ck, in_partition));
        Ok(self.after_output())
    }

    /// Counts an output against LIMIT and the page; false when the read stops here.
    fn after_output(&mut self) -> bool {
        if self.remaining == 0 {
            return false;
        }
        if self.page_full() {
            self.more = true;
            return false;
        }
        true
    }

    fn passes(&self, view: &RowView<'_>) -> bool {
        self.q
            .r
            .filters
            .iter()
            .all(|f| f.matches(view.value(self.q.schema, &f.column).as_deref()))
    }

    /// A row's values of the ORDER BY columns, for a sort across partitions (none without
    /// one).
    fn sort_key(&self, view: &RowView<'_>) -> Vec<Option<Bytes>> {
        self.q.post_order.as_ref().map_or_else(Vec::new, |order| {
            order
                .iter()
                .map(|(pos, _)| view.ck.and_then(|c| c.get(*pos)).cloned())
                .collect()
        })
    }

    fn emit(&mut self, view: &RowView<'_>) -> Result<()> {
        let q = self.q;
        let values = row_values(q.plan, q.schema, view, q.ctx)?;
        if q.post_order.is_some() {
            let key = self.sort_key(view);
            self.sort_keys.push(key);
        }
        self.rows.push(values);
        self.remaining = self.remaining.saturating_sub(1);
        Ok(())
    }

    fn finish(mut self) -> ResultSet {
        let q = self.q;
        if let Some(all) = self.all.take() {
            let row = all.result(q.plan, q.ctx).unwrap_or_default();
            self.rows = vec![row];
        }
        if let Some(order) = &q.post_order {
            let columns: Vec<(CqlType, Order)> = order
                .iter()
                .map(|(pos, _)| {
                    q.layout
                        .columns
                        .get(*pos)
                        .cloned()
                        .unwrap_or((CqlType::Blob, Order::Asc))
                })
                .collect();
            let mut idx: Vec<usize> = (0..self.rows.len()).collect();
            idx.sort_by(|&a, &b| {
                for (i, (_, desc)) in order.iter().enumerate() {
                    let key = |row: usize| {
                        self.sort_keys
                            .get(row)
                            .and_then(|k| k.get(i))
                            .and_then(Option::as_ref)
                    };
                    let (ty, declared) = &columns[i];
                    // A null (a static-only partition's row) is the smallest value in the
                    // column's declared order (Cassandra compares with the column's type,
                    // reversed for a DESC column, then reverses the whole comparator when
                    // the query reads against that order): first when the query reads in
                    // the declared order, last when against it.
                    let against = *desc != (*declared == Order::Desc);
                    let null_first = if against {
                        Ordering::Greater
                    } else {
                        Ordering::Less
                    };
                    let o = match (key(a), key(b)) {
                        (Some(x), Some(y)) => {
                            let o = compare(ty, x, y);
                            if *desc {
                                o.reverse()
                            } else {
                                o
                            }
                        }
                        (None, Some(_)) => null_first,
                        (Some(_), None) => null_first.reverse(),
                        (None, None) => Ordering::Equal,
                    };
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                Ordering::Equal
            });
            let mut rows: Vec<Vec<Option<Bytes>>> = Vec::with_capacity(idx.len());
            let mut taken: Vec<Option<Vec<Option<Bytes>>>> = std::mem::take(&mut self.rows)
                .into_iter()
                .map(Some)
                .collect();
            for i in idx {
                if let Some(r) = taken.get_mut(i).and_then(Option::take) {
                    rows.push(r);
                }
            }
            self.rows = rows;
        }
        if let Some(limit) = q.limit {
            // LIMIT after the sort (and over an aggregate's one row).
            if q.post_order.is_some() || q.mode == Mode::AggregateAll {
                self.rows.truncate(limit);
            }
        }
        let paging_state = if self.more && self.remaining > 0 {
            self.last.as_ref().map(|(key, ck, n)| {
                PagingState {
                    key: key.key.clone(),
                    clustering: ck.clone(),
                    remaining: i64::try_from(self.remaining).unwrap_or(i64::MAX),
                    partition_rows: u32::try_from(*n).unwrap_or(u32::MAX),
                }
                .encode()
            })
        } else {
            None
        };
        ResultSet {
            columns: q.plan.specs.clone(),
            rows: self.rows,
            paging_state,
        }
    }
}

/// The partition-key column values of a key.
pub fn partition_values(schema: &TableSchema, key: &DecoratedKey) -> Vec<Bytes> {
    let n = schema.columns_of(ColumnKind::PartitionKey).count();
    if n <= 1 {
        vec![key.key.clone()]
    } else {
        split_composite_partition_key(&key.key, n).unwrap_or_default()
    }
}

/// `LIMIT` / `PER PARTITION LIMIT`: strictly positive; unset means none.
fn limit_of(t: &Option<Term>, what: &str, ctx: &Binds<'_>) -> Result<Option<usize>> {
    let Some(t) = t else { return Ok(None) };
    match term_to_bytes(t, &CqlType::Int, what, ctx).map_err(|e| Error::Invalid(e.to_string()))? {
        TermValue::Value(b) => {
            let v = i32::from_be_bytes(
                b.as_ref()
                    .try_into()
                    .map_err(|_| Error::Invalid("Invalid limit value".into()))?,
            );
            if v <= 0 {
                return Err(Error::Invalid("LIMIT must be strictly positive".into()));
            }
            Ok(Some(v as usize))
        }
        TermValue::Null => Err(Error::Invalid("Invalid null value of limit".into())),
        TermValue::Unset => Ok(None),
    }
}

/// Cassandra's rules for SELECT DISTINCT (`validateDistinctSelection`). With an `IN` on the
/// partition key the ORDER BY columns count as requested: Cassandra adds them to the
/// selection to sort on (`getResultSetOrdering`), even when the `IN` is empty.
fn check_distinct(schema: &TableSchema, s: &Select, plan: &Plan, r: &Restrictions) -> Result<()> {
    let non_static_filter = r
        .filters
        .iter()
        .any(|f| !matches!(f.column.kind, ColumnKind::Static | ColumnKind::PartitionKey));
    if r.has_clustering_restrictions || non_static_filter {
        return Err(Error::Invalid(
            "SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns."
                .into(),
        ));
    }
    let requested = plan.columns();
    let ordering: Vec<&ColumnDef> = if r.key_in {
        s.order_by
            .iter()
            .filter_map(|(name, _)| schema.column(name))
            .collect()
    } else {
        Vec::new()
    };
    if let Some(c) = requested
        .iter()
        .copied()
        .chain(ordering)
        .find(|c| !matches!(c.kind, ColumnKind::PartitionKey | ColumnKind::Static))
    {
        return Err(Error::Invalid(format!(
            "SELECT DISTINCT queries must only request partition key columns and/or static columns (not {})",
            c.name
        )));
    }
    if r.is_key_range {
        if let Some(c) = schema
            .columns_of(ColumnKind::PartitionKey)
            .find(|c| !requested.iter().any(|x| x.id == c.id))
        {
            return Err(Error::Invalid(format!(
                "SELECT DISTINCT queries must request all the partition key columns (missing {})",
                c.name
            )));
        }
    }
    Ok(())
}

/// GROUP BY: the number of clustering columns in a group's key (`None`: no GROUP BY), with
/// Cassandra's rules (`getAggregationSpecFactory`).
fn group_prefix(schema: &TableSchema, s: &Select, r: &Restrictions) -> Result<Option<usize>> {
    if s.group_by.is_empty() {
        return Ok(None);
    }
    let key: Vec<&ColumnDef> = schema
        .columns_of(ColumnKind::PartitionKey)
        .chain(schema.columns_of(ColumnKind::Clustering))
        .collect();
    let order_error = || {
        Error::Invalid(
            "Group by currently only support groups of columns following their declared order in the PRIMARY KEY"
                .into(),
        )
    };
    let mut next = 0;
    let mut prefix = 0;
    for name in &s.group_by {
        let def = schema
            .column(name)
            .ok_or_else(|| Error::undefined_column(schema, name))?;
        if !matches!(def.kind, ColumnKind::PartitionKey | ColumnKind::Clustering) {
            return Err(Error::Invalid(format!(
                "Group by is currently only supported on the columns of the PRIMARY KEY, got {name}"
            )));
        }
        loop {
            let Some(k) = key.get(next) else {
                return Err(order_error());
            };
            next += 1;
            if k.kind == ColumnKind::Clustering {
                prefix += 1;
            }
            if k.id == def.id {
                break;
            }
            if !r.is_eq(k.id) {
                return Err(order_error());
            }
        }
    }
    if key
        .get(next)
        .is_some_and(|k| k.kind == ColumnKind::PartitionKey)
    {
        return Err(Error::Invalid(
            "Group by is not supported on only a part of the partition key".into(),
        ));
    }
    if prefix > 0 && s.distinct {
        return Err(Error::Invalid(
            "Grouping on clustering columns is not allowed for SELECT DISTINCT queries".into(),
        ));
    }
    Ok(Some(prefix))
}

/// ORDER BY: whether rows are read in reverse clustering order, and the ordering columns
/// (clustering positions, descending) for a sort across partitions — Cassandra's
/// `isReversed` and `verifyOrderingIsAllowed`.
fn ordering(
    schema: &TableSchema,
    s: &Select,
    r: &Restrictions,
) -> Result<(bool, Vec<(usize, bool)>)> {
    if s.order_by.is_empty() {
        return Ok((false, Vec::new()));
    }
    if r.is_key_range {
        return Err(Error::Invalid(
            "ORDER BY is only supported when the partition key is restricted by an EQ or an IN."
                .into(),
        ));
    }
    let ck: Vec<&ColumnDef> = schema.columns_of(ColumnKind::Clustering).collect();
    let follow = || {
        Error::Invalid(
            "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY"
                .into(),
        )
    };
    let mut reversed: Option<bool> = None;
    let mut columns = Vec::new();
    let mut i = 0;
    for (name, dir) in &s.order_by {
        let def = schema
            .column(name)
            .ok_or_else(|| Error::undefined_column(schema, name))?;
        let Some(pos) = ck.iter().position(|c| c.id == def.id) else {
            return Err(Error::Invalid(format!(
                "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got {name}"
            )));
        };
        if pos < i {
            return Err(follow());
        }
        while i != pos {
            if !ck.get(i).is_some_and(|c| r.is_eq(c.id)) {
                return Err(follow());
            }
            i += 1;
        }
        i += 1;
        let desc = *dir == AstOrder::Desc;
        let rev = desc != (def.order == Order::Desc);
        match reversed {
            None => reversed = Some(rev),
            Some(prev) if prev != rev => {
                return Err(Error::Invalid("Unsupported order by relation".into()))
            }
            _ => {}
        }
        columns.push((pos, desc));
    }
    Ok((reversed.unwrap_or(false), columns))
}
