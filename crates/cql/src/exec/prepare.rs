//! What a PREPARE result describes: one column spec per bind marker (its receiver's name
//! and type, Cassandra's `[limit]`-style names for the others), the bind markers giving
//! the partition key (so drivers can route by token), and the result columns of a SELECT.

use super::restrict::{self, StatementKind};
use super::result::ColumnSpec;
use super::select;
use super::session::{QueryParams, Session};
use super::write;
use super::{system, Executor};
use crate::ast::{
    Assignment, BatchStatement, Conditions, InValues, InsertValues, Operator, Relation,
    RelationTarget, Statement, Term, Using,
};
use crate::error::Result;
use crate::ParsedStatement;
use cairn_engine::model::types::CqlType;
use cairn_engine::schema::{ColumnKind, TableSchema};

/// Metadata of a prepared statement.
pub struct Meta {
    /// One spec per marker.
    pub bind_specs: Vec<ColumnSpec>,
    /// Marker indexes of the partition-key columns (empty unless all are bound).
    pub pk_indexes: Vec<u16>,
    /// Result columns of a SELECT.
    pub result: Vec<ColumnSpec>,
}

struct Collector<'a> {
    schema: &'a TableSchema,
    specs: Vec<Option<ColumnSpec>>,
    pk_markers: Vec<Option<u16>>,
}

impl Collector<'_> {
    fn spec(&self, name: &str, ty: CqlType) -> ColumnSpec {
        ColumnSpec {
            keyspace: self.schema.keyspace.clone(),
            table: self.schema.name.clone(),
            name: name.to_string(),
            ty,
        }
    }

    fn set(&mut self, index: usize, spec: ColumnSpec) {
        if let Some(slot) = self.specs.get_mut(index) {
            *slot = Some(spec);
        }
    }

    /// Records the markers inside `term`, received by a value of `ty` named `name`.
    fn term(&mut self, term: &Term, name: &str, ty: &CqlType) {
        let inner = match ty {
            CqlType::Frozen(t) => t.as_ref(),
            t => t,
        };
        match term {
            Term::Bind(m) => {
                // A named marker is described by its own name, as Cassandra does.
                let s = self.spec(m.name.as_deref().unwrap_or(name), ty.clone());
                self.set(m.index, s);
            }
            Term::List(ts) | Term::Set(ts) => {
                if let CqlType::List(e) | CqlType::Set(e) = inner {
                    for t in ts {
                        self.term(t, name, e);
                    }
                }
            }
            Term::Map(kv) => {
                if let CqlType::Map(k, v) = inner {
                    for (a, b) in kv {
                        self.term(a, name, k);
                        self.term(b, name, v);
                    }
                }
            }
            Term::Tuple(ts) => {
                if let Some(types) = inner.components() {
                    for (t, ty) in ts.iter().zip(types) {
                        self.term(t, name, ty);
                    }
                }
            }
            Term::TypeHint(_, t) => self.term(t, name, ty),
            // Arguments of functions and operators: the overload's parameters; user type
            // fields: `column.field`.
            Term::Function(_) | Term::Arithmetic(..) | Term::Negate(_) | Term::UserType(_) => {
                for (index, marker, t) in crate::values::term::marker_types(term, name, ty) {
                    let s = self.spec(&marker, t);
                    self.set(index, s);
                }
            }
            _ => {}
        }
    }

    /// Notes `term` as the value of partition-key column `col` when it is a marker: the
    /// marker then routes (Cassandra's `VariableSpecifications.add` with the column as the
    /// receiver; a later marker for the same column replaces an earlier one).
    fn note_pk(&mut self, col: &cairn_engine::schema::ColumnDef, term: &Term) {
        if col.kind != ColumnKind::PartitionKey {
            return;
        }
        if let Term::Bind(m) = term {
            let i = self
                .schema
                .columns_of(ColumnKind::PartitionKey)
                .position(|x| x.id == col.id);
            if let Some(slot) = i.and_then(|i| self.pk_markers.get_mut(i)) {
                *slot = u16::try_from(m.index).ok();
            }
        }
    }

    fn tuple_type(&self, cols: &[String]) -> CqlType {
        CqlType::Tuple(
            cols.iter()
                .filter_map(|c| self.schema.column(c).map(|c| c.ty.clone()))
                .collect(),
        )
    }

    /// The markers of a multi-column relation's value: a tuple literal's markers are received
    /// by their columns; one marker for the whole tuple is named `(a,b)`.
    fn tuple(&mut self, cols: &[String], value: &Term) {
        match value {
            Term::Tuple(elems) => {
                for (c, t) in cols.iter().zip(elems) {
                    if let Some(col) = self.schema.column(c).cloned() {
                        self.term(t, c, &col.ty);
                    }
                }
            }
            other => {
                let ty = self.tuple_type(cols);
                self.term(other, &format!("({})", cols.join(",")), &ty);
            }
        }
    }

    fn using(&mut self, u: &Using) {
        if let Some(t) = &u.ttl {
            self.term(t, "[ttl]", &CqlType::Int);
        }
        if let Some(t) = &u.timestamp {
            self.term(t, "[timestamp]", &CqlType::Bigint);
        }
    }

    fn relations(&mut self, rels: &[Relation]) {
        for rel in rels {
            match rel {
                Relation::Compare { target, op, value } => match target {
                    RelationTarget::Column(c) => {
                        let Some(col) = self.schema.column(c).cloned() else {
                            continue;
                        };
                        let inner = match &col.ty {
                            CqlType::Frozen(t) => t.as_ref(),
                            t => t,
                        };
                        // CONTAINS takes `value(c)`, CONTAINS KEY `key(c)` (Cassandra's
                        // collection receivers).
                        let (name, ty) = match (op, inner) {
                            (Operator::Contains, CqlType::List(e) | CqlType::Set(e)) => {
                                (format!("value({c})"), e.as_ref().clone())
                            }
                            (Operator::Contains, CqlType::Map(_, v)) => {
                                (format!("value({c})"), v.as_ref().clone())
                            }
                            (Operator::ContainsKey, CqlType::Map(k, _)) => {
                                (format!("key({c})"), k.as_ref().clone())
                            }
                            _ => (c.clone(), col.ty.clone()),
                        };
                        self.term(value, &name, &ty);
                        if *op == Operator::Eq {
                            self.note_pk(&col, value);
                        }
                    }
                    RelationTarget::Token(_) => {
                        self.term(value, "partition key token", &CqlType::Bigint)
                    }
                    RelationTarget::Tuple(cols) => self.tuple(cols, value),
                    RelationTarget::Element(c, key) => {
                        // `m[k] = v` in a WHERE clause: `key(m)` and `value(m)`.
                        if let Some(col) = self.schema.column(c).cloned() {
                            if let CqlType::Map(k, v) = &col.ty {
                                self.term(key, &format!("key({c})"), k);
                                self.term(value, &format!("value({c})"), v);
                            }
                        }
                    }
                    _ => {}
                },
                Relation::In {
                    target: RelationTarget::Tuple(cols),
                    values,
                } => match values {
                    InValues::Terms(ts) => {
                        for t in ts {
                            self.tuple(cols, t);
                        }
                    }
                    InValues::Marker(m) => {
                        let ty = self.tuple_type(cols);
                        let n = m
                            .name
                            .clone()
                            .unwrap_or_else(|| format!("in({})", cols.join(",")));
                        let s = self.spec(&n, CqlType::List(Box::new(ty)));
                        self.set(m.index, s);
                    }
                },
                Relation::In { target, values } => {
                    let (name, ty) = match target {
                        RelationTarget::Column(c) => match self.schema.column(c).cloned() {
                            Some(col) => {
                                // Each marker of `pk IN (?, ?)` is received by the column
                                // itself (not `IN ?`, received by `in(pk)`).
                                if let InValues::Terms(ts) = values {
                                    for t in ts {
                                        self.note_pk(&col, t);
                                    }
                                }
                                (c.clone(), col.ty.clone())
                            }
                            None => continue,
                        },
                        RelationTarget::Tuple(cols) => (
                            format!("({})", cols.join(",")),
                            CqlType::Tuple(
                                cols.iter()
                                    .filter_map(|c| self.schema.column(c).map(|c| c.ty.clone()))
                                    .collect(),
                            ),
                        ),
                        _ => continue,
                    };
                    match values {
                        InValues::Terms(ts) => {
                            for t in ts {
                                self.term(t, &name, &ty);
                            }
                        }
                        InValues::Marker(m) => {
                            let n = m.name.clone().unwrap_or_else(|| format!("in({name})"));
                            let s = self.spec(&n, CqlType::List(Box::new(ty)));
                            self.set(m.index, s);
                        }
                    }
                }
                Relation::IsNotNull(_) => {}
            }
        }
    }

    fn statement(&mut self, stmt: &Statement) {
        match stmt {
            Statement::Select(s) => {
                self.relations(&s.where_clause);
                if let Some(t) = &s.per_partition_limit {
                    self.term(t, "[per_partition_limit]", &CqlType::Int);
                }
                if let Some(t) = &s.limit {
                    self.term(t, "[limit]", &CqlType::Int);
                }
            }
            Statement::Insert(i) => {
                if let InsertValues::Columns { columns, values } = &i.values {
                    for (c, v) in columns.iter().zip(values) {
                        let Some(col) = self.schema.column(c).cloned() else {
                            continue;
                        };
                        self.term(v, c, &col.ty);
                        self.note_pk(&col, v);
                    }
                } else if let InsertValues::Json { json, .. } = &i.values {
                    self.term(json, "[json]", &CqlType::Text);
                }
                self.using(&i.using);
            }
            Statement::Update(u) => {
                self.using(&u.using);
                for a in &u.assignments {
                    match a {
                        Assignment::Subtract { column, value } => {
                            if let Some(col) = self.schema.column(column).cloned() {
                                // `m = m - ?` removes a set of keys.
                                let ty = match &col.ty {
                                    CqlType::Map(k, _) => CqlType::Set(k.clone()),
                                    t => t.clone(),
                                };
                                self.term(value, column, &ty);
                            }
                        }
                        Assignment::Set { column, value }
                        | Assignment::Add { column, value }
                        | Assignment::Prepend { column, value } => {
                            if let Some(col) = self.schema.column(column).cloned() {
                                self.term(value, column, &col.ty);
                            }
                        }
                        Assignment::SetElement { column, key, value } => {
                            if let Some(col) = self.schema.column(column).cloned() {
                                let (kn, kt, vt) = match &col.ty {
                                    CqlType::Map(k, v) => {
                                        ("key", k.as_ref().clone(), v.as_ref().clone())
                                    }
                                    CqlType::List(e) => ("idx", CqlType::Int, e.as_ref().clone()),
                                    t => ("key", t.clone(), t.clone()),
                                };
                                self.term(key, &format!("{kn}({column})"), &kt);
                                self.term(value, &format!("value({column})"), &vt);
                            }
                        }
                        // The field's receiver: `column.field` of the field's type.
                        Assignment::SetField {
                            column,
                            field,
                            value,
                        } => {
                            let fty = self.schema.column(column).and_then(|c| {
                                let u = c.ty.as_udt()?;
                                u.field(field).map(|(_, t)| t.clone())
                            });
                            if let Some(fty) = fty {
                                self.term(value, &format!("{column}.{field}"), &fty);
                            }
                        }
                    }
                }
                self.relations(&u.where_clause);
                self.conditions(&u.conditions);
            }
            Statement::Delete(d) => {
                for t in &d.targets {
                    if let RelationTarget::Element(c, key) = t {
                        if let Some(col) = self.schema.column(c).cloned() {
                            let (kn, kt) = match &col.ty {
                                CqlType::Map(k, _) => ("key", k.as_ref().clone()),
                                CqlType::List(_) => ("idx", CqlType::Int),
                                CqlType::Set(e) => ("value", e.as_ref().clone()),
                                t => ("key", t.clone()),
                            };
                            self.term(key, &format!("{kn}({c})"), &kt);
                        }
                    }
                }
                self.using(&d.using);
                self.relations(&d.where_clause);
                self.conditions(&d.conditions);
            }
            _ => {}
        }
    }

    /// The markers of an `IF` clause: received by the column they compare with (drivers
    /// encode the value with that type), by a collection element (`IF m[?] = ?`:
    /// `key(m)` and `value(m)`, as Cassandra names them) or by a user type's field.
    fn conditions(&mut self, c: &Conditions) {
        let Conditions::Columns(rels) = c else {
            return;
        };
        for rel in rels {
            if let Relation::Compare {
                target: RelationTarget::Element(column, key),
                value,
                ..
            } = rel
            {
                if let Some(col) = self.schema.column(column).cloned() {
                    let ty = match &col.ty {
                        CqlType::Frozen(t) => t.as_ref(),
                        t => t,
                    };
                    let (kn, kt, vt) = match ty {
                        CqlType::Map(k, v) => ("key", k.as_ref().clone(), v.as_ref().clone()),
                        CqlType::List(e) => ("idx", CqlType::Int, e.as_ref().clone()),
                        t => ("key", t.clone(), t.clone()),
                    };
                    self.term(key, &format!("{kn}({column})"), &kt);
                    self.term(value, &format!("value({column})"), &vt);
                }
            } else if let Relation::Compare {
                target: RelationTarget::Field(column, field),
                value,
                ..
            } = rel
            {
                // `IF u.f = ?`: received by the field (`u.f`, Cassandra's `fieldSpecOf`).
                let fty = self
                    .schema
                    .column(column)
                    .and_then(|c| c.ty.as_udt()?.field(field).map(|(_, t)| t.clone()));
                if let Some(fty) = fty {
                    self.term(value, &format!("{column}.{field}"), &fty);
                }
            } else {
                self.relations(std::slice::from_ref(rel));
            }
        }
    }
}

/// What Cassandra refuses at PREPARE about the columns a statement's operations and WHERE
/// relations apply to (element operations on frozen collections; an INSERT's column list,
/// missing key columns among them), before any value is bound; execution checks the same
/// again.
fn check_receivers(schema: &TableSchema, stmt: &Statement) -> Result<()> {
    match stmt {
        Statement::Insert(i) => {
            if let InsertValues::Columns { columns, values } = &i.values {
                write::InsertPlan::new(schema, columns, values.len())?;
            }
            Ok(())
        }
        Statement::Select(s) => {
            restrict::check_receivers(schema, &s.where_clause, StatementKind::Select)
        }
        Statement::Update(u) => {
            for a in &u.assignments {
                if let Assignment::SetElement { column, key, value } = a {
                    if let Some(c) = schema.column(column) {
                        write::check_set_element(c, key, value)?;
                    }
                }
            }
            restrict::check_receivers(schema, &u.where_clause, StatementKind::Update)
        }
        Statement::Delete(d) => {
            for t in &d.targets {
                if let RelationTarget::Element(column, _) = t {
                    if let Some(c) = schema.column(column) {
                        write::check_element_deletion(c)?;
                    }
                }
            }
            restrict::check_receivers(schema, &d.where_clause, StatementKind::Delete)
        }
        _ => Ok(()),
    }
}

/// Describes a statement for PREPARE.
pub fn describe(ex: &Executor, session: &Session, parsed: &ParsedStatement) -> Result<Meta> {
    let n = parsed.bind_markers.len();
    let mut specs: Vec<Option<ColumnSpec>> = vec![None; n];
    let mut pk_indexes = Vec::new();
    let mut result = Vec::new();
    let mut statements: Vec<Statement> = Vec::new();
    match &parsed.statement {
        Statement::Batch(b) => {
            // The BATCH's own `USING TIMESTAMP ?`.
            if let Some(Term::Bind(m)) = &b.using.timestamp {
                if let Some(slot) = specs.get_mut(m.index) {
                    *slot = Some(ColumnSpec {
                        keyspace: "[batch]".into(),
                        table: "[batch]".into(),
                        name: m.name.clone().unwrap_or_else(|| "[timestamp]".into()),
                        ty: CqlType::Bigint,
                    });
                }
            }
            for s in &b.statements {
                statements.push(match s {
                    BatchStatement::Insert(i) => Statement::Insert(i.clone()),
                    BatchStatement::Update(u) => Statement::Update(u.clone()),
                    BatchStatement::Delete(d) => Statement::Delete(d.clone()),
                });
            }
        }
        other => statements.push(other.clone()),
    }
    // Cassandra's `getPartitionKeyBindVariableIndexes`: per partition-key column the last
    // marker (highest index) bound to it in any statement, when every statement is on one
    // table and every column has one.
    let mut first_table: Option<(String, String)> = None;
    let mut one_table = true;
    let mut pk_best: Vec<Option<u16>> = Vec::new();
    let mut validation_error = None;
    for stmt in &statements {
        let table = match stmt {
            Statement::Select(s) => Some(&s.table),
            Statement::Insert(i) => Some(&i.table),
            Statement::Update(u) => Some(&u.table),
            Statement::Delete(d) => Some(&d.table),
            _ => None,
        };
        let Some(table) = table else { continue };
        let ks = session.resolve(&table.keyspace)?;
        if let Statement::Select(s) = stmt {
            if let Some(mut v) = system::table(ex, session, &ks, &table.name)? {
                // The columns only: no rows, so no restriction needs its bound values.
                v.rows.clear();
                result = system::select(v, s, &QueryParams::default())?
                    .columns
                    .to_vec();
                if s.json {
                    result = select::json_columns(&result, &ks, &table.name).to_vec();
                }
            }
        }
        let schema = match system::virtual_schema(&ks, &table.name) {
            Some(v) => std::sync::Arc::new(v),
            None => ex.catalog().require_table(&ks, &table.name)?.schema(),
        };
        check_receivers(&schema, stmt)?;
        if system::virtual_schema(&ks, &table.name).is_none() {
            // A batch's statements are all prepared before any is validated.
            match write::check_shape(ex, session, stmt) {
                Err(e) if write::is_validation_error(&e) => {
                    validation_error.get_or_insert(e);
                }
                other => other?,
            }
        }
        let pk_count = schema.columns_of(ColumnKind::PartitionKey).count();
        let mut c = Collector {
            schema: &schema,
            specs: std::mem::take(&mut specs),
            pk_markers: vec![None; pk_count],
        };
        c.statement(stmt);
        specs = c.specs;
        match &first_table {
            None => {
                first_table = Some((ks.clone(), table.name.clone()));
                pk_best = c.pk_markers;
            }
            Some((k, t)) if *k == ks && *t == table.name => {
                for (best, m) in pk_best.iter_mut().zip(c.pk_markers) {
                    *best = (*best).max(m);
                }
            }
            Some(_) => one_table = false,
        }
        if let Statement::Select(s) = stmt {
            if system::virtual_schema(&ks, &table.name).is_none() {
                let indexed = super::indexes::indexed_columns(ex.catalog(), &schema);
                let (plan, _, _, _) = select::plan_and_resolve(
                    &schema,
                    s,
                    &super::Placeholders::new(),
                    None,
                    &indexed,
                )?;
                // Markers in the selection (element keys, slice bounds, constants).
                let mut markers = Vec::new();
                plan.selectors
                    .iter()
                    .for_each(|sel| sel.markers(&mut markers));
                for (i, name, ty) in markers {
                    if let Some(slot) = specs.get_mut(i) {
                        *slot = Some(ColumnSpec {
                            keyspace: ks.clone(),
                            table: table.name.clone(),
                            name,
                            ty,
                        });
                    }
                }
                result = plan.specs.to_vec();
                if s.json {
                    result = select::json_columns(&result, &ks, &table.name).to_vec();
                }
            }
        }
    }
    if let Some(e) = validation_error {
        return Err(e);
    }
    if one_table && !pk_best.is_empty() && pk_best.iter().all(Option::is_some) {
        pk_indexes = pk_best.into_iter().flatten().collect();
    }
    let bind_specs: Vec<ColumnSpec> = specs
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            s.unwrap_or(ColumnSpec {
                keyspace: String::new(),
                table: String::new(),
                name: format!("[{i}]"),
                ty: CqlType::Blob,
            })
        })
        .collect();
    // The indexes go on the wire only with a global table spec (Cassandra's
    // `PreparedMetadata` codec): a batch's `USING TIMESTAMP ?`, named `[batch]`, drops them.
    if let Some(first) = bind_specs.first() {
        if bind_specs
            .iter()
            .any(|s| s.keyspace != first.keyspace || s.table != first.table)
        {
            pk_indexes.clear();
        }
    }
    Ok(Meta {
        bind_specs,
        pk_indexes,
        result,
    })
}
