//! Server-side DESCRIBE (Cassandra 4): cqlsh sends `DESCRIBE …` to servers that report a
//! release ≥ 4.0 and prints the rows it gets back.
//!
//! Rows are `keyspace_name, type, name[, create_statement]`. Supported: DESCRIBE
//! KEYSPACES / TABLES / TYPES / FUNCTIONS / AGGREGATES (names), DESCRIBE \[FULL\] SCHEMA,
//! DESCRIBE KEYSPACE \[ks\] (the keyspace, its user types with the ones they use first,
//! its tables), DESCRIBE TABLE t (and COLUMNFAMILY), DESCRIBE TYPE t, DESCRIBE CLUSTER, and
//! DESCRIBE name (a keyspace, else a table of the current keyspace). Statements are built from
//! live metadata in Cassandra 5.0's layout, so they can be replayed to recreate the schema.

use super::catalog::{Keyspace, SYSTEM_KEYSPACES};
use super::options;
use super::result::{ColumnSpec, ResultSet};
use super::session::Session;
use super::Executor;
use crate::error::{Error, Result};
use crate::identifier::quote_identifier;
use crate::values::format::java_double_string as double_to_string;
use bytes::Bytes;
use cairn_engine::model::clustering::Order;
use cairn_engine::model::types::{CqlType, UserType};
use cairn_engine::schema::{ColumnKind, TableSchema};

/// Whether `text` is a DESCRIBE statement.
pub fn is_describe(text: &str) -> bool {
    let first = text.split_whitespace().next().unwrap_or("");
    first.eq_ignore_ascii_case("describe") || first.eq_ignore_ascii_case("desc")
}

use crate::identifier::quote_identifier as quote;

fn string_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn map_literal(m: &[(String, String)]) -> String {
    let body: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{}: {}", string_literal(k), string_literal(v)))
        .collect();
    format!("{{{}}}", body.join(", "))
}

/// `CREATE KEYSPACE …;`, the replication map as Cassandra prints it: `class` first, by its
/// simple name for Cassandra's own strategies.
pub fn keyspace_statement(k: &Keyspace) -> String {
    let mut replication: Vec<(String, String)> = Vec::with_capacity(k.replication.len());
    for (key, v) in &k.replication {
        if key == "class" {
            let short = v
                .strip_prefix("org.apache.cassandra.locator.")
                .filter(|s| !s.contains('.'))
                .unwrap_or(v);
            replication.insert(0, (key.clone(), short.to_string()));
        } else {
            replication.push((key.clone(), v.clone()));
        }
    }
    format!(
        "CREATE KEYSPACE {} WITH replication = {}  AND durable_writes = {};",
        quote(&k.name),
        map_literal(&replication),
        k.durable_writes
    )
}

/// `CREATE TABLE …;` with every option, as Cassandra 5.0 prints it.
pub fn table_statement(s: &TableSchema) -> String {
    let pk: Vec<&str> = s
        .columns_of(ColumnKind::PartitionKey)
        .map(|c| c.name.as_str())
        .collect();
    let ck: Vec<_> = s.columns_of(ColumnKind::Clustering).collect();
    let mut out = format!("CREATE TABLE {}.{} (\n", quote(&s.keyspace), quote(&s.name));
    let inline_pk = pk.len() == 1 && ck.is_empty();
    for c in &s.columns {
        out.push_str(&format!("    {} {}", quote(&c.name), c.ty.name()));
        if c.kind == ColumnKind::Static {
            out.push_str(" static");
        }
        if let Some(m) = &c.mask {
            out.push_str(" MASKED WITH ");
            out.push_str(&super::masks::cql(m));
        }
        if inline_pk && c.kind == ColumnKind::PartitionKey {
            out.push_str(" PRIMARY KEY");
        }
        out.push_str(",\n");
    }
    if inline_pk {
        // Drop the trailing ",\n" of the last column.
        out.truncate(out.len() - 2);
        out.push('\n');
    } else {
        let pk_part = if pk.len() == 1 {
            quote(pk[0])
        } else {
            format!(
                "({})",
                pk.iter().map(|n| quote(n)).collect::<Vec<_>>().join(", ")
            )
        };
        let mut parts = vec![pk_part];
        parts.extend(ck.iter().map(|c| quote(&c.name)));
        out.push_str(&format!("    PRIMARY KEY ({})\n", parts.join(", ")));
    }
    out.push_str(") WITH ");
    out.push_str(&table_options(s));
    out.push(';');
    out
}

/// A view's `PRIMARY KEY (…)` clause.
fn key_clause(s: &TableSchema) -> String {
    let pk: Vec<String> = s
        .columns_of(ColumnKind::PartitionKey)
        .map(|c| quote(&c.name))
        .collect();
    let pk_part = if pk.len() == 1 {
        pk[0].clone()
    } else {
        format!("({})", pk.join(", "))
    };
    let mut parts = vec![pk_part];
    parts.extend(s.columns_of(ColumnKind::Clustering).map(|c| quote(&c.name)));
    format!("PRIMARY KEY ({})", parts.join(", "))
}

/// `CREATE MATERIALIZED VIEW …;` as Cassandra 5.0's `ViewMetadata.appendCqlTo` writes it
/// (`None` if `s` is not a view).
pub fn view_statement(s: &TableSchema) -> Option<String> {
    let def = s.view()?;
    let select = if def.include_all_columns {
        "*".to_string()
    } else {
        // Cassandra's select order: key columns, then the others by name.
        let mut regular: Vec<&str> = s
            .columns
            .iter()
            .filter(|c| matches!(c.kind, ColumnKind::Regular | ColumnKind::Static))
            .map(|c| c.name.as_str())
            .collect();
        regular.sort_unstable();
        s.columns_of(ColumnKind::PartitionKey)
            .chain(s.columns_of(ColumnKind::Clustering))
            .map(|c| c.name.as_str())
            .chain(regular)
            .map(quote)
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(format!(
        "CREATE MATERIALIZED VIEW {}.{} AS\n    SELECT {select}\n    FROM {}.{}\n    WHERE {}\n    {}\n WITH {};",
        quote(&s.keyspace),
        quote(&s.name),
        quote(&s.keyspace),
        quote(&def.base),
        def.where_clause,
        key_clause(s),
        table_options(s)
    ))
}

/// The `WITH` options of a table or view, joined by `\n    AND ` (a view's leave out
/// `default_time_to_live`, as Cassandra's do).
fn table_options(s: &TableSchema) -> String {
    let ck: Vec<_> = s.columns_of(ColumnKind::Clustering).collect();
    let o = &s.options;
    let mut props = Vec::new();
    if !ck.is_empty() {
        let order: Vec<String> = ck
            .iter()
            .map(|c| {
                format!(
                    "{} {}",
                    quote(&c.name),
                    if c.order == Order::Desc {
                        "DESC"
                    } else {
                        "ASC"
                    }
                )
            })
            .collect();
        props.push(format!("CLUSTERING ORDER BY ({})", order.join(", ")));
    }
    let text = |k: &str| string_literal(&options::text_option(o, k));
    props.push(format!(
        "additional_write_policy = {}",
        text("additional_write_policy")
    ));
    props.push(format!(
        "allow_auto_snapshot = {}",
        options::flag_value(o, "allow_auto_snapshot")
    ));
    props.push(format!(
        "bloom_filter_fp_chance = {}",
        double_to_string(o.bloom_filter_fp_chance)
    ));
    props.push(format!(
        "caching = {}",
        map_literal(&options::caching_map(o))
    ));
    props.push(format!("cdc = {}", options::flag_value(o, "cdc")));
    props.push(format!("comment = {}", string_literal(&o.comment)));
    props.push(format!(
        "compaction = {}",
        map_literal(&options::compaction_map(o))
    ));
    let compression: Vec<(String, String)> = o
        .compression
        .to_options()
        .into_iter()
        .filter(|(k, _)| k != "crc_check_chance")
        .collect();
    props.push(format!("compression = {}", map_literal(&compression)));
    props.push("memtable = 'default'".into());
    props.push(format!(
        "crc_check_chance = {}",
        double_to_string(o.compression.crc_check_chance)
    ));
    if !s.is_view() {
        props.push(format!("default_time_to_live = {}", o.default_time_to_live));
    }
    props.push("extensions = {}".into());
    props.push(format!("gc_grace_seconds = {}", o.gc_grace_seconds));
    props.push(format!(
        "incremental_backups = {}",
        options::flag_value(o, "incremental_backups")
    ));
    for k in [
        "max_index_interval",
        "memtable_flush_period_in_ms",
        "min_index_interval",
    ] {
        props.push(format!("{k} = {}", options::text_option(o, k)));
    }
    props.push(format!("read_repair = {}", text("read_repair")));
    props.push(format!("speculative_retry = {}", text("speculative_retry")));
    props.join("\n    AND ")
}

/// A snapshot's `schema.cql`: the statements that recreate the table with the same column
/// ids, so that `nodetool refresh` can load the snapshot's sstables into it. As Cassandra
/// writes it: `CREATE TABLE IF NOT EXISTS` listing the dropped columns too, then `ALTER TABLE
/// … DROP … USING TIMESTAMP …` for each; a column re-added after a drop comes back with
/// `ALTER TABLE … ADD`. Statements run in column-id order, since ids are handed out in
/// order. Unlike Cassandra's, there is no `WITH ID`: the table is recreated under a new id.
pub fn schema_cql(s: &TableSchema) -> String {
    use cairn_engine::schema::ColumnDef;
    enum Event<'a> {
        Live(&'a ColumnDef),
        Dropped(&'a cairn_engine::schema::DroppedColumn, CqlType),
    }
    let dropped = s.dropped_columns();
    let mut events: Vec<(u32, Event<'_>)> = s
        .columns
        .iter()
        .filter(|c| matches!(c.kind, ColumnKind::Regular | ColumnKind::Static))
        .map(|c| (c.id, Event::Live(c)))
        .collect();
    for d in &dropped {
        if let Some(ty) = CqlType::parse(&d.ty) {
            if !s.columns.iter().any(|c| c.id == d.id) {
                events.push((d.id, Event::Dropped(d, ty)));
            }
        }
    }
    events.sort_by_key(|(id, _)| *id);
    let name = format!("{}.{}", quote(&s.keyspace), quote(&s.name));
    let mut created = s.clone();
    created
        .columns
        .retain(|c| matches!(c.kind, ColumnKind::PartitionKey | ColumnKind::Clustering));
    let mut after: Vec<String> = Vec::new();
    // Names taken in the table as built so far, and the dropped columns still to drop.
    let mut taken: Vec<&str> = Vec::new();
    let mut to_drop: Vec<&cairn_engine::schema::DroppedColumn> = Vec::new();
    for (id, e) in &events {
        let (col_name, ty, kind) = match e {
            Event::Live(c) => (c.name.as_str(), c.ty.clone(), c.kind),
            Event::Dropped(d, ty) => (
                d.name.as_str(),
                ty.clone(),
                if d.is_static {
                    ColumnKind::Static
                } else {
                    ColumnKind::Regular
                },
            ),
        };
        if let Some(pos) = to_drop.iter().position(|d| d.name == col_name) {
            let d = to_drop.remove(pos);
            after.push(format!(
                "ALTER TABLE {name} DROP {} USING TIMESTAMP {};",
                quote(&d.name),
                d.dropped_at
            ));
        }
        if after.is_empty() && !taken.contains(&col_name) {
            created.columns.push(ColumnDef {
                id: *id,
                name: col_name.to_string(),
                ty,
                kind,
                order: Order::Asc,
                mask: None,
            });
        } else {
            after.push(format!(
                "ALTER TABLE {name} ADD {} {}{};",
                quote(col_name),
                ty.name(),
                if kind == ColumnKind::Static {
                    " static"
                } else {
                    ""
                }
            ));
        }
        taken.push(col_name);
        if let Event::Dropped(d, _) = e {
            to_drop.push(d);
        }
    }
    for d in to_drop {
        after.push(format!(
            "ALTER TABLE {name} DROP {} USING TIMESTAMP {};",
            quote(&d.name),
            d.dropped_at
        ));
    }
    let create = table_statement(&created);
    let mut out = match create.strip_prefix("CREATE TABLE ") {
        Some(rest) => format!("CREATE TABLE IF NOT EXISTS {rest}"),
        None => create,
    };
    for stmt in after {
        out.push('\n');
        out.push_str(&stmt);
    }
    out.push('\n');
    out
}

/// A user type's CREATE TYPE statement (Cassandra's `UserType.toCqlString`).
pub fn type_statement(ut: &UserType) -> String {
    let fields: Vec<String> = ut
        .fields()
        .map(|(f, t)| format!("    {} {}", quote_identifier(f), t.name()))
        .collect();
    format!(
        "CREATE TYPE {}.{} (\n{}\n);",
        quote_identifier(&ut.keyspace),
        quote_identifier(&ut.name),
        fields.join(",\n")
    )
}

/// A keyspace's user types, each after the types it uses (Cassandra's
/// `Types.sortedStream`).
fn sorted_types(types: &[UserType]) -> Vec<&UserType> {
    fn visit<'a>(t: &'a UserType, all: &'a [UserType], out: &mut Vec<&'a UserType>) {
        if out.iter().any(|o| o.name == t.name) {
            return;
        }
        for dep in all {
            if dep.name != t.name
                && t.field_types
                    .iter()
                    .any(|f| f.references_udt(&dep.keyspace, &dep.name))
            {
                visit(dep, all, out);
            }
        }
        if !out.iter().any(|o| o.name == t.name) {
            out.push(t);
        }
    }
    let mut out = Vec::new();
    for t in types {
        visit(t, types, &mut out);
    }
    out
}

fn specs(with_statement: bool) -> Vec<ColumnSpec> {
    let mut cols = vec!["keyspace_name", "type", "name"];
    if with_statement {
        cols.push("create_statement");
    }
    cols.into_iter()
        .map(|n| ColumnSpec {
            keyspace: String::new(),
            table: String::new(),
            name: n.into(),
            ty: CqlType::Text,
        })
        .collect()
}

fn text(s: &str) -> Option<Bytes> {
    Some(Bytes::copy_from_slice(s.as_bytes()))
}

/// Runs a DESCRIBE statement.
pub fn run(ex: &Executor, session: &Session, query: &str) -> Result<ResultSet> {
    let words: Vec<String> = query
        .trim()
        .trim_end_matches(';')
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let mut i = 1;
    let full = lower.get(i).is_some_and(|w| w == "full");
    if full {
        i += 1;
    }
    let cat = ex.catalog();
    let user_keyspaces = || {
        cat.keyspaces()
            .into_iter()
            .filter(|k| full || !SYSTEM_KEYSPACES.contains(&k.name.as_str()))
            .collect::<Vec<_>>()
    };
    let names = |rows: Vec<(String, &str, String)>| ResultSet {
        columns: specs(false).into(),
        rows: rows
            .into_iter()
            .map(|(k, t, n)| vec![text(&k), text(t), text(&n)])
            .collect(),
        paging_state: None,
    };
    let mut statements: Vec<(String, &str, String, String)> = Vec::new();
    let describe_keyspace = |k: &Keyspace, out: &mut Vec<(String, &str, String, String)>| {
        out.push((
            k.name.clone(),
            "keyspace",
            k.name.clone(),
            keyspace_statement(k),
        ));
        for ut in sorted_types(&cat.user_types(&k.name)) {
            out.push((k.name.clone(), "type", ut.name.clone(), type_statement(ut)));
        }
        let tables = cat.tables(&k.name);
        for t in &tables {
            let s = t.schema();
            if !s.is_view() {
                out.push((k.name.clone(), "table", s.name.clone(), table_statement(&s)));
                push_indexes(cat, &s, out);
            }
        }
        // Views after every table, as Cassandra lists them.
        for t in &tables {
            let s = t.schema();
            if let Some(v) = view_statement(&s) {
                out.push((k.name.clone(), "materialized_view", s.name.clone(), v));
            }
        }
    };
    match lower.get(i).map(String::as_str) {
        Some("keyspaces") => {
            return Ok(names(
                cat.keyspaces()
                    .into_iter()
                    .map(|k| (k.name.clone(), "keyspace", k.name))
                    .collect(),
            ))
        }
        Some("tables") | Some("columnfamilies") => {
            let mut rows = Vec::new();
            for k in cat.keyspaces() {
                for t in cat.tables(&k.name) {
                    if !t.schema().is_view() {
                        rows.push((k.name.clone(), "table", t.schema().name.clone()));
                    }
                }
            }
            return Ok(names(rows));
        }
        Some("types") => {
            let mut rows = Vec::new();
            for k in cat.keyspaces() {
                for ut in cat.user_types(&k.name) {
                    rows.push((k.name.clone(), "type", ut.name));
                }
            }
            return Ok(names(rows));
        }
        Some("type") => {
            let (ks, t) = split_name(words.get(i + 1), session)?;
            cat.require_keyspace(&ks)?;
            let ut = cat.user_type(&ks, &t).ok_or_else(|| {
                Error::Invalid(format!("User defined type '{t}' not found in '{ks}'"))
            })?;
            statements.push((ks, "type", ut.name.clone(), type_statement(&ut)));
        }
        Some("functions") | Some("aggregates") => return Ok(names(Vec::new())),
        Some("cluster") => {
            let node = ex.node();
            let cols = ["cluster", "partitioner", "snitch"];
            return Ok(ResultSet {
                columns: cols
                    .iter()
                    .map(|n| ColumnSpec {
                        keyspace: String::new(),
                        table: String::new(),
                        name: (*n).into(),
                        ty: CqlType::Text,
                    })
                    .collect(),
                rows: vec![vec![
                    text(&node.cluster_name),
                    text("org.apache.cassandra.dht.Murmur3Partitioner"),
                    text("org.apache.cassandra.locator.SimpleSnitch"),
                ]],
                paging_state: None,
            });
        }
        Some("schema") => {
            for k in user_keyspaces() {
                describe_keyspace(&k, &mut statements);
            }
        }
        Some("keyspace") => {
            let name = match words.get(i + 1) {
                Some(n) => n.trim_matches('"').to_string(),
                None => session.resolve(&None)?,
            };
            let k = cat.require_keyspace(&name)?;
            describe_keyspace(&k, &mut statements);
        }
        Some("table") | Some("columnfamily") => {
            let (ks, t) = split_name(words.get(i + 1), session)?;
            let table = cat.require_table(&ks, &t)?;
            let s = table.schema();
            if s.is_view() {
                return Err(Error::Invalid(format!(
                    "Table '{t}' not found in keyspace '{ks}'"
                )));
            }
            statements.push((ks.clone(), "table", s.name.clone(), table_statement(&s)));
            push_indexes(cat, &s, &mut statements);
            // Cassandra prints the table's views after it.
            for v in super::views::views_of(ex, &ks, &s.name) {
                if let Some(text) = view_statement(&v) {
                    statements.push((ks.clone(), "materialized_view", v.name.clone(), text));
                }
            }
        }
        Some("index") => {
            let (ks, name) = split_name(words.get(i + 1), session)?;
            cat.require_keyspace(&ks)?;
            let found = cat
                .index_tables(&ks)
                .iter()
                .filter_map(|t| super::indexes::index_statement(&t.schema()))
                .find(|(n, _)| *n == name)
                .ok_or_else(|| Error::Invalid(format!("Index '{name}' not found in '{ks}'")))?;
            statements.push((ks, "index", found.0, found.1));
        }
        Some("materialized") if lower.get(i + 1).is_some_and(|w| w == "view") => {
            let (ks, t) = split_name(words.get(i + 2), session)?;
            cat.require_keyspace(&ks)?;
            let view = cat
                .table(&ks, &t)
                .and_then(|table| view_statement(&table.schema()))
                .ok_or_else(|| {
                    Error::Invalid(format!(
                        "Materialized view '{t}' not found in keyspace '{ks}'"
                    ))
                })?;
            statements.push((ks, "materialized_view", t, view));
        }
        Some(_) => {
            let raw = words.get(i).cloned();
            let bare = raw.as_deref().unwrap_or("").trim_matches('"').to_string();
            if !bare.contains('.') {
                if let Some(k) = cat.keyspace(&bare) {
                    describe_keyspace(&k, &mut statements);
                    return Ok(with_statements(statements));
                }
            }
            let (ks, t) = split_name(raw.as_ref(), session)?;
            let table = cat
                .table(&ks, &t)
                .ok_or_else(|| Error::Invalid(format!("'{bare}' not found in keyspaces")))?;
            let s = table.schema();
            match view_statement(&s) {
                Some(v) => statements.push((ks, "materialized_view", s.name.clone(), v)),
                None => statements.push((ks, "table", s.name.clone(), table_statement(&s))),
            }
        }
        None => {
            return Err(Error::Syntax(crate::error::SyntaxError {
                line: 1,
                column: 0,
                offset: 0,
                message: "no viable alternative at input '<EOF>'".into(),
            }))
        }
    }
    Ok(with_statements(statements))
}

/// A table's `CREATE INDEX` statements, after its own (as Cassandra lists them).
fn push_indexes(
    cat: &super::catalog::Catalog,
    table: &TableSchema,
    out: &mut Vec<(String, &str, String, String)>,
) {
    for ix in super::indexes::indexes_of(cat, &table.keyspace, &table.name) {
        if let Some((name, text)) = super::indexes::index_statement(&ix) {
            out.push((table.keyspace.clone(), "index", name, text));
        }
    }
}

fn with_statements(statements: Vec<(String, &str, String, String)>) -> ResultSet {
    ResultSet {
        columns: specs(true).into(),
        rows: statements
            .into_iter()
            .map(|(k, t, n, s)| vec![text(&k), text(t), text(&n), text(&s)])
            .collect(),
        paging_state: None,
    }
}

fn split_name(word: Option<&String>, session: &Session) -> Result<(String, String)> {
    let w = word.ok_or_else(|| Error::Invalid("DESCRIBE needs a name".into()))?;
    let unquote = |s: &str| {
        if s.starts_with('"') {
            s.trim_matches('"').replace("\"\"", "\"")
        } else {
            s.to_ascii_lowercase()
        }
    };
    match w.split_once('.') {
        Some((k, t)) => Ok((unquote(k), unquote(t))),
        None => Ok((session.resolve(&None)?, unquote(w))),
    }
}
