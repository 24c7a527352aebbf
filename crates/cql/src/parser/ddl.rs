//! Schema statements: keyspaces, tables, user types and indexes (CREATE, ALTER, DROP).
//! The CREATE/ALTER/DROP dispatchers also route to roles and users in `auth`.

use super::Parser;
use crate::ast::{
    AlterKeyspace, AlterTable, AlterTableAction, AlterType, AlterTypeAction, AlterView, ColumnDef,
    CreateIndex, CreateKeyspace, CreateTable, CreateType, CreateView, DropIndex, DropKeyspace,
    DropTable, DropType, DropView, FunctionCall, IndexTarget, Order, PrimaryKey, Property,
    QualifiedName, Statement, Term,
};
use crate::error::Result;
use crate::lexer::TokenKind as T;

impl Parser<'_> {
    pub(crate) fn create(&mut self) -> Result<Statement> {
        self.expect_kw("create")?;
        if self.eat_kw("keyspace") || self.eat_kw("schema") {
            let if_not_exists = self.if_not_exists()?;
            let name = self.keyspace_name()?;
            self.expect_kw("with")?;
            let properties = self.properties()?;
            return Ok(Statement::CreateKeyspace(CreateKeyspace {
                name,
                if_not_exists,
                properties,
            }));
        }
        if self.eat_kw("table") || self.eat_kw("columnfamily") {
            return Ok(Statement::CreateTable(self.create_table()?));
        }
        if self.eat_kw("type") {
            let if_not_exists = self.if_not_exists()?;
            let name = self.user_type_name()?;
            self.expect(&T::LParen)?;
            let fields = self.comma_list(&T::RParen, |p| {
                let f = p.ident()?;
                Ok((f, p.type_name()?))
            })?;
            if fields.is_empty() {
                return Err(self.no_viable());
            }
            return Ok(Statement::CreateType(CreateType {
                name,
                if_not_exists,
                fields,
            }));
        }
        if self.is_kw("index") || (self.is_kw("custom") && self.is_kw_at(1, "index")) {
            return Ok(Statement::CreateIndex(self.create_index()?));
        }
        if self.eat_kw("materialized") {
            self.expect_kw("view")?;
            return Ok(Statement::CreateView(self.create_view()?));
        }
        if self.eat_kw("role") {
            return self.create_role();
        }
        if self.eat_kw("user") {
            return self.create_user();
        }
        Err(self.no_viable())
    }

    pub(crate) fn alter(&mut self) -> Result<Statement> {
        self.expect_kw("alter")?;
        if self.eat_kw("keyspace") || self.eat_kw("schema") {
            let if_exists = self.if_exists()?;
            let name = self.keyspace_name()?;
            self.expect_kw("with")?;
            let properties = self.properties()?;
            return Ok(Statement::AlterKeyspace(AlterKeyspace {
                name,
                if_exists,
                properties,
            }));
        }
        if self.eat_kw("table") || self.eat_kw("columnfamily") {
            return Ok(Statement::AlterTable(self.alter_table()?));
        }
        if self.eat_kw("type") {
            // Cassandra 5.0's `alterTypeStatement`.
            let if_exists = self.if_exists()?;
            let name = self.user_type_name()?;
            let action = if self.eat_kw("add") {
                let if_not_exists = self.if_not_exists()?;
                let field = self.ident()?;
                AlterTypeAction::Add {
                    field,
                    ty: self.type_name()?,
                    if_not_exists,
                }
            } else if self.eat_kw("rename") {
                let if_exists = self.if_exists()?;
                AlterTypeAction::Rename {
                    renames: self.renames()?,
                    if_exists,
                }
            } else if self.eat_kw("alter") {
                let field = self.ident()?;
                self.expect_kw("type")?;
                AlterTypeAction::Alter {
                    field,
                    ty: self.type_name()?,
                }
            } else {
                return Err(self.no_viable());
            };
            return Ok(Statement::AlterType(AlterType {
                name,
                if_exists,
                action,
            }));
        }
        if self.eat_kw("materialized") {
            self.expect_kw("view")?;
            let if_exists = self.if_exists()?;
            let name = self.table_name()?;
            self.expect_kw("with")?;
            let properties = self.properties()?;
            return Ok(Statement::AlterView(AlterView {
                name,
                if_exists,
                properties,
            }));
        }
        if self.eat_kw("role") {
            return self.alter_role();
        }
        if self.eat_kw("user") {
            return self.alter_user();
        }
        Err(self.no_viable())
    }

    pub(crate) fn drop(&mut self) -> Result<Statement> {
        self.expect_kw("drop")?;
        if self.eat_kw("keyspace") || self.eat_kw("schema") {
            let if_exists = self.if_exists()?;
            let name = self.keyspace_name()?;
            return Ok(Statement::DropKeyspace(DropKeyspace { name, if_exists }));
        }
        if self.eat_kw("table") || self.eat_kw("columnfamily") {
            let if_exists = self.if_exists()?;
            let name = self.table_name()?;
            return Ok(Statement::DropTable(DropTable { name, if_exists }));
        }
        if self.eat_kw("type") {
            let if_exists = self.if_exists()?;
            let name = self.user_type_name()?;
            return Ok(Statement::DropType(DropType { name, if_exists }));
        }
        if self.eat_kw("index") {
            let if_exists = self.if_exists()?;
            let name = self.qualified_name()?;
            return Ok(Statement::DropIndex(DropIndex { name, if_exists }));
        }
        if self.eat_kw("materialized") {
            self.expect_kw("view")?;
            let if_exists = self.if_exists()?;
            let name = self.table_name()?;
            return Ok(Statement::DropView(DropView { name, if_exists }));
        }
        if self.eat_kw("role") {
            return self.drop_role();
        }
        if self.eat_kw("user") {
            return self.drop_user();
        }
        Err(self.no_viable())
    }

    /// After `CREATE TABLE`.
    fn create_table(&mut self) -> Result<CreateTable> {
        let if_not_exists = self.if_not_exists()?;
        let name = self.table_name()?;
        self.expect(&T::LParen)?;
        let mut columns = Vec::new();
        let mut key_clauses = Vec::new();
        loop {
            if self.eat_kw("primary") {
                self.expect_kw("key")?;
                key_clauses.push(self.primary_key_clause()?);
            } else {
                columns.push(self.column_def(true)?);
            }
            if self.eat(&T::RParen) {
                break;
            }
            if !self.is(&T::Comma) {
                return Err(self.mismatched("')'"));
            }
            self.advance();
            // Cassandra tolerates a trailing comma before `)`.
            if self.eat(&T::RParen) {
                break;
            }
        }
        let mut table = CreateTable {
            name,
            if_not_exists,
            columns,
            key_clauses,
            clustering_order: Vec::new(),
            compact_storage: false,
            properties: Vec::new(),
        };
        if self.eat_kw("with") {
            let w = self.with_clauses()?;
            table.compact_storage = w.compact_storage;
            table.clustering_order = w.clustering_order;
            table.properties = w.properties;
        }
        Ok(table)
    }

    /// The clauses after a CREATE TABLE's or CREATE MATERIALIZED VIEW's `WITH`, joined by
    /// `AND`: `COMPACT STORAGE`, `CLUSTERING ORDER BY (…)` and properties.
    fn with_clauses(&mut self) -> Result<WithClauses> {
        let mut w = WithClauses::default();
        loop {
            if self.is_kw("compact") && self.is_kw_at(1, "storage") {
                self.advance();
                self.advance();
                w.compact_storage = true;
            } else if self.is_kw("clustering") && self.is_kw_at(1, "order") {
                self.advance();
                self.advance();
                self.expect_kw("by")?;
                self.expect(&T::LParen)?;
                let order = self.comma_list(&T::RParen, |p| {
                    let col = p.ident()?;
                    let dir = if p.eat_kw("desc") {
                        Order::Desc
                    } else {
                        p.eat_kw("asc");
                        Order::Asc
                    };
                    Ok((col, dir))
                })?;
                w.clustering_order.extend(order);
            } else {
                let p = self.property(&w.properties)?;
                w.properties.push(p);
            }
            if !self.eat_kw("and") {
                return Ok(w);
            }
        }
    }

    /// After `CREATE MATERIALIZED VIEW` (Cassandra's `createMaterializedViewStatement`).
    fn create_view(&mut self) -> Result<CreateView> {
        let markers_before = self.marker_count();
        let if_not_exists = self.if_not_exists()?;
        let name = self.table_name()?;
        self.expect_kw("as")?;
        self.expect_kw("select")?;
        let (selectors, base, where_clause) = self.selection_from_where()?;
        self.expect_kw("primary")?;
        self.expect_kw("key")?;
        let key = self.primary_key_clause()?;
        let mut view = CreateView {
            name,
            if_not_exists,
            base,
            selectors,
            where_clause,
            key,
            clustering_order: Vec::new(),
            compact_storage: false,
            properties: Vec::new(),
            bind_markers: 0,
        };
        if self.eat_kw("with") {
            let w = self.with_clauses()?;
            view.compact_storage = w.compact_storage;
            view.clustering_order = w.clustering_order;
            view.properties = w.properties;
        }
        view.bind_markers = self.marker_count() - markers_before;
        Ok(view)
    }

    /// `name type [STATIC] [PRIMARY KEY]` (the last only when `allow_key`).
    fn column_def(&mut self, allow_key: bool) -> Result<ColumnDef> {
        let name = self.ident()?;
        let ty = self.type_name()?;
        let is_static = self.eat_kw("static");
        let mask = if self.is_kw("masked") {
            Some(self.column_mask()?)
        } else {
            None
        };
        let primary_key = allow_key && self.is_kw("primary") && {
            self.advance();
            self.expect_kw("key")?;
            true
        };
        Ok(ColumnDef {
            name,
            ty,
            is_static,
            primary_key,
            mask,
        })
    }

    /// `MASKED WITH DEFAULT` (`mask_default()`) or `MASKED WITH f(term, …)`.
    fn column_mask(&mut self) -> Result<FunctionCall<Term>> {
        self.expect_kw("masked")?;
        self.expect_kw("with")?;
        if self.eat_kw("default") {
            return Ok(FunctionCall {
                name: QualifiedName::new("mask_default"),
                args: Vec::new(),
            });
        }
        self.function_call(Self::term)
    }

    /// `( pk )` after `PRIMARY KEY`: `(a)`, `(a, b, c)`, `((a, b), c)`.
    fn primary_key_clause(&mut self) -> Result<PrimaryKey> {
        self.expect(&T::LParen)?;
        let partition_key = if self.eat(&T::LParen) {
            let cols = self.comma_list(&T::RParen, Self::ident)?;
            if cols.is_empty() {
                return Err(self.no_viable());
            }
            cols
        } else {
            vec![self.ident()?]
        };
        let mut clustering = Vec::new();
        while self.eat(&T::Comma) {
            clustering.push(self.ident()?);
        }
        self.expect(&T::RParen)?;
        Ok(PrimaryKey {
            partition_key,
            clustering,
        })
    }

    /// After `ALTER TABLE`.
    fn alter_table(&mut self) -> Result<AlterTable> {
        let if_exists = self.if_exists()?;
        let name = self.table_name()?;
        let action = if self.eat_kw("add") {
            let if_not_exists = self.if_not_exists()?;
            let columns = if self.eat(&T::LParen) {
                let cols = self.comma_list(&T::RParen, |p| p.column_def(false))?;
                if cols.is_empty() {
                    return Err(self.no_viable());
                }
                cols
            } else {
                vec![self.column_def(false)?]
            };
            AlterTableAction::Add {
                if_not_exists,
                columns,
            }
        } else if self.eat_kw("drop") {
            if self.is_kw("compact") && self.is_kw_at(1, "storage") {
                self.advance();
                self.advance();
                return Ok(AlterTable {
                    name,
                    if_exists,
                    action: AlterTableAction::DropCompactStorage,
                });
            }
            let if_exists = self.if_exists()?;
            let columns = if self.eat(&T::LParen) {
                let cols = self.comma_list(&T::RParen, Self::ident)?;
                if cols.is_empty() {
                    return Err(self.no_viable());
                }
                cols
            } else {
                vec![self.ident()?]
            };
            let timestamp = if self.eat_kw("using") {
                self.expect_kw("timestamp")?;
                Some(self.int_value()?)
            } else {
                None
            };
            AlterTableAction::Drop {
                if_exists,
                columns,
                timestamp,
            }
        } else if self.eat_kw("alter") {
            let column = self.ident()?;
            if self.is_kw("masked") {
                return Ok(AlterTable {
                    name,
                    if_exists,
                    action: AlterTableAction::Mask {
                        column,
                        mask: Some(self.column_mask()?),
                    },
                });
            }
            if self.eat_kw("drop") {
                self.expect_kw("masked")?;
                return Ok(AlterTable {
                    name,
                    if_exists,
                    action: AlterTableAction::Mask { column, mask: None },
                });
            }
            self.expect_kw("type")?;
            AlterTableAction::AlterType {
                column,
                ty: self.type_name()?,
            }
        } else if self.eat_kw("rename") {
            let if_exists = self.if_exists()?;
            AlterTableAction::Rename {
                if_exists,
                renames: self.renames()?,
            }
        } else if self.eat_kw("with") {
            AlterTableAction::With(self.properties()?)
        } else {
            return Err(self.no_viable());
        };
        Ok(AlterTable {
            name,
            if_exists,
            action,
        })
    }

    /// `a TO b (AND c TO d)*`
    fn renames(&mut self) -> Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        loop {
            let from = self.ident()?;
            self.expect_kw("to")?;
            out.push((from, self.ident()?));
            if !self.eat_kw("and") {
                return Ok(out);
            }
        }
    }

    /// `[CUSTOM] INDEX [IF NOT EXISTS] [name] ON t (target, ...) [USING 'c'] [WITH ...]`
    fn create_index(&mut self) -> Result<CreateIndex> {
        let custom = self.eat_kw("custom");
        self.expect_kw("index")?;
        let if_not_exists = self.if_not_exists()?;
        let name = if self.is_kw("on") {
            None
        } else {
            Some(self.ident()?)
        };
        self.expect_kw("on")?;
        let table = self.table_name()?;
        self.expect(&T::LParen)?;
        let targets = self.comma_list(&T::RParen, |p| {
            if p.eat(&T::LParen) {
                return Ok(IndexTarget::PartitionKey(
                    p.comma_list(&T::RParen, |p| p.ident())?,
                ));
            }
            for (kw, make) in [
                ("keys", IndexTarget::Keys as fn(String) -> IndexTarget),
                ("values", IndexTarget::Values),
                ("entries", IndexTarget::Entries),
                ("full", IndexTarget::Full),
            ] {
                if p.is_kw(kw) && p.is_at(1, &T::LParen) {
                    p.advance();
                    p.advance();
                    let col = p.ident()?;
                    p.expect(&T::RParen)?;
                    return Ok(make(col));
                }
            }
            Ok(IndexTarget::Column(p.ident()?))
        })?;
        let custom_class = if self.eat_kw("using") {
            match &self.tok().kind {
                T::Str(s) => {
                    let s = s.clone();
                    self.advance();
                    Some(s)
                }
                _ => return Err(self.mismatched("STRING_LITERAL")),
            }
        } else {
            None
        };
        if custom && custom_class.is_none() {
            return Err(self.error_here("CUSTOM index requires specifying the index class"));
        }
        let properties = if self.eat_kw("with") {
            self.properties()?
        } else {
            Vec::new()
        };
        Ok(CreateIndex {
            name,
            if_not_exists,
            table,
            targets,
            custom_class,
            properties,
        })
    }
}

/// What [`Parser::with_clauses`] read.
#[derive(Default)]
struct WithClauses {
    compact_storage: bool,
    clustering_order: Vec<(String, Order)>,
    properties: Vec<Property>,
}
