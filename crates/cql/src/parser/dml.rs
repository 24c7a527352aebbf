//! Data statements: SELECT, INSERT, UPDATE, DELETE and BATCH.

use super::terms::RelationContext;
use super::Parser;
use crate::ast::{
    Assignment, Batch, BatchKind, BatchStatement, CellRef, Delete, Insert, InsertValues, Order,
    RelationTarget, Select, Selector, SelectorExpr, Term, Update,
};
use crate::error::Result;
use crate::lexer::TokenKind as T;

impl Parser<'_> {
    // --- SELECT -----------------------------------------------------------------------

    pub(crate) fn select(&mut self) -> Result<Select> {
        self.expect_kw("select")?;
        // `json` and `distinct` are unreserved: they are flags only when what follows
        // still reads as a selector list (`SELECT json FROM t` selects a column).
        let json = self.is_kw("json") && self.flag_keyword_follows() && {
            self.advance();
            true
        };
        let distinct = self.is_kw("distinct") && self.flag_keyword_follows() && {
            self.advance();
            true
        };
        let selectors = if self.eat(&T::Star) {
            None
        } else {
            let mut list = vec![self.selector()?];
            while self.eat(&T::Comma) {
                list.push(self.selector()?);
            }
            Some(list)
        };
        self.expect_kw("from")?;
        let table = self.qualified_name()?;
        let where_clause = if self.eat_kw("where") {
            self.relations(RelationContext::Where)?
        } else {
            Vec::new()
        };
        let mut group_by = Vec::new();
        if self.is_kw("group") {
            self.advance();
            self.expect_kw("by")?;
            group_by.push(self.ident()?);
            while self.eat(&T::Comma) {
                group_by.push(self.ident()?);
            }
        }
        let mut order_by = Vec::new();
        if self.eat_kw("order") {
            self.expect_kw("by")?;
            loop {
                let col = self.ident()?;
                let dir = if self.eat_kw("desc") {
                    Order::Desc
                } else {
                    self.eat_kw("asc");
                    Order::Asc
                };
                order_by.push((col, dir));
                if !self.eat(&T::Comma) {
                    break;
                }
            }
        }
        let mut per_partition_limit = None;
        if self.is_kw("per") {
            self.advance();
            self.expect_kw("partition")?;
            self.expect_kw("limit")?;
            per_partition_limit = Some(self.int_value()?);
        }
        let limit = if self.eat_kw("limit") {
            Some(self.int_value()?)
        } else {
            None
        };
        let allow_filtering = if self.eat_kw("allow") {
            self.expect_kw("filtering")?;
            true
        } else {
            false
        };
        Ok(Select {
            table,
            json,
            distinct,
            selectors,
            where_clause,
            group_by,
            order_by,
            per_partition_limit,
            limit,
            allow_filtering,
        })
    }

    /// After `json`/`distinct`: does a selector list follow (so the word is a flag)?
    fn flag_keyword_follows(&self) -> bool {
        let next = &self.peek_tok(1).kind;
        !(matches!(next, T::Comma | T::LParen | T::Dot | T::LBracket | T::Eof)
            || self.is_kw_at(1, "from")
            || self.is_kw_at(1, "as"))
    }

    fn selector(&mut self) -> Result<Selector> {
        let expr = self.selector_expr()?;
        let alias = if self.eat_kw("as") {
            Some(self.ident()?)
        } else {
            None
        };
        Ok(Selector { expr, alias })
    }

    /// A selector expression, one nesting level deeper.
    fn selector_expr(&mut self) -> Result<SelectorExpr> {
        self.nested(Self::selector_inner)
    }

    fn selector_inner(&mut self) -> Result<SelectorExpr> {
        let mut expr = self.selector_primary()?;
        // Postfix field and element access: `udt.field`, `m['k']`.
        loop {
            if self.eat(&T::Dot) {
                expr = SelectorExpr::Field(Box::new(expr), self.ident()?);
            } else if self.eat(&T::LBracket) {
                let key = self.term()?;
                self.expect(&T::RBracket)?;
                expr = SelectorExpr::Element(Box::new(expr), key);
            } else {
                return Ok(expr);
            }
        }
    }

    fn selector_primary(&mut self) -> Result<SelectorExpr> {
        let call = self.is_at(1, &T::LParen);
        if call && self.is_kw("count") {
            // COUNT(*) and COUNT(1) count rows; COUNT(col) is an ordinary function.
            let star = self.is_at(2, &T::Star);
            let one = self.is_at(2, &T::Integer) && self.text_of(self.peek_tok(2)) == "1";
            if (star || one) && self.is_at(3, &T::RParen) {
                for _ in 0..4 {
                    self.advance();
                }
                return Ok(SelectorExpr::CountAll);
            }
        }
        if call {
            for (kw, make) in [
                (
                    "writetime",
                    SelectorExpr::WriteTime as fn(CellRef) -> SelectorExpr,
                ),
                ("maxwritetime", SelectorExpr::MaxWriteTime),
                ("ttl", SelectorExpr::Ttl),
            ] {
                if self.is_kw(kw) {
                    self.advance();
                    self.advance();
                    let col = self.ident()?;
                    self.expect(&T::RParen)?;
                    return Ok(make(CellRef::column(col)));
                }
            }
            if self.is_kw("cast") {
                self.advance();
                self.advance();
                let inner = self.selector_expr()?;
                self.expect_kw("as")?;
                let ty = self.type_name()?;
                self.expect(&T::RParen)?;
                return Ok(SelectorExpr::Cast(Box::new(inner), ty));
            }
        }
        if self.is_function_call_start() {
            return Ok(SelectorExpr::Function(
                self.function_call(Self::selector_expr)?,
            ));
        }
        if self.is_ident() {
            return Ok(SelectorExpr::Column(self.ident()?));
        }
        // Anything else must be a term (a constant, marker or collection literal).
        Ok(SelectorExpr::Term(self.term()?))
    }

    // --- INSERT -----------------------------------------------------------------------

    pub(crate) fn insert(&mut self) -> Result<Insert> {
        self.expect_kw("insert")?;
        self.expect_kw("into")?;
        let table = self.qualified_name()?;
        let values = if self.eat_kw("json") {
            let json = match self.tok().kind {
                T::Str(_) => self.term()?,
                _ => match self.bind_marker()? {
                    Some(m) => Term::Bind(m),
                    None => return Err(self.no_viable()),
                },
            };
            let mut default_unset = false;
            if self.is_kw("default") {
                self.advance();
                if self.eat_kw("unset") {
                    default_unset = true;
                } else {
                    self.expect_kw("null")?;
                }
            }
            InsertValues::Json {
                json,
                default_unset,
            }
        } else {
            self.expect(&T::LParen)?;
            let columns = self.comma_list(&T::RParen, Self::ident)?;
            if columns.is_empty() {
                return Err(self.no_viable());
            }
            self.expect_kw("values")?;
            self.expect(&T::LParen)?;
            let values = self.comma_list(&T::RParen, Self::term)?;
            InsertValues::Columns { columns, values }
        };
        let if_not_exists = self.if_not_exists()?;
        let using = self.using(true)?;
        Ok(Insert {
            table,
            values,
            if_not_exists,
            using,
        })
    }

    // --- UPDATE -----------------------------------------------------------------------

    pub(crate) fn update(&mut self) -> Result<Update> {
        self.expect_kw("update")?;
        let table = self.qualified_name()?;
        let using = self.using(true)?;
        self.expect_kw("set")?;
        let mut assignments = vec![self.assignment()?];
        while self.eat(&T::Comma) {
            assignments.push(self.assignment()?);
        }
        self.expect_kw("where")?;
        let where_clause = self.relations(RelationContext::Where)?;
        let conditions = self.update_conditions()?;
        Ok(Update {
            table,
            using,
            assignments,
            where_clause,
            conditions,
        })
    }

    fn assignment(&mut self) -> Result<Assignment> {
        let column = self.ident()?;
        match self.tok().kind {
            T::LBracket => {
                self.advance();
                let key = self.term()?;
                self.expect(&T::RBracket)?;
                self.expect(&T::Eq)?;
                let value = self.term()?;
                Ok(Assignment::SetElement { column, key, value })
            }
            T::Dot => {
                self.advance();
                let field = self.ident()?;
                self.expect(&T::Eq)?;
                let value = self.term()?;
                Ok(Assignment::SetField {
                    column,
                    field,
                    value,
                })
            }
            T::Plus | T::Minus if self.is_at(1, &T::Eq) => {
                let add = self.is(&T::Plus);
                self.advance();
                self.advance();
                let value = self.term()?;
                Ok(if add {
                    Assignment::Add { column, value }
                } else {
                    Assignment::Subtract { column, value }
                })
            }
            T::Eq => {
                self.advance();
                self.assignment_value(column)
            }
            _ => Err(self.no_viable()),
        }
    }

    /// After `c =`: `term`, `c + term`, `c - term` or `term + c`.
    fn assignment_value(&mut self, column: String) -> Result<Assignment> {
        if self.is_ident() && matches!(self.peek_tok(1).kind, T::Plus | T::Minus) {
            let other_tok = self.pos;
            let other = self.ident()?;
            let add = self.is(&T::Plus);
            if other != column {
                // Cassandra's wording, including the missing space before `<value>`.
                let sign = if add { '+' } else { '-' };
                return Err(self.error_at(
                    other_tok,
                    format!("Only expressions of the form X = X {sign}<value> are supported."),
                ));
            }
            self.advance();
            let value = self.term()?;
            return Ok(if add {
                Assignment::Add { column, value }
            } else {
                Assignment::Subtract { column, value }
            });
        }
        let value = self.term()?;
        if self.eat(&T::Plus) {
            let other_tok = self.pos;
            let other = self.ident()?;
            if other != column {
                return Err(self.error_at(
                    other_tok,
                    "Only expressions of the form X = <value> + X are supported.".into(),
                ));
            }
            return Ok(Assignment::Prepend { column, value });
        }
        Ok(Assignment::Set { column, value })
    }

    // --- DELETE -----------------------------------------------------------------------

    pub(crate) fn delete(&mut self) -> Result<Delete> {
        self.expect_kw("delete")?;
        let mut targets = Vec::new();
        if !self.is_kw("from") {
            loop {
                let col = self.ident()?;
                targets.push(if self.eat(&T::LBracket) {
                    let key = self.term()?;
                    self.expect(&T::RBracket)?;
                    RelationTarget::Element(col, key)
                } else if self.eat(&T::Dot) {
                    RelationTarget::Field(col, self.ident()?)
                } else {
                    RelationTarget::Column(col)
                });
                if !self.eat(&T::Comma) {
                    break;
                }
            }
        }
        self.expect_kw("from")?;
        let table = self.qualified_name()?;
        let using = self.using(false)?;
        self.expect_kw("where")?;
        let where_clause = self.relations(RelationContext::Where)?;
        let conditions = self.update_conditions()?;
        Ok(Delete {
            table,
            targets,
            using,
            where_clause,
            conditions,
        })
    }

    // --- BATCH ------------------------------------------------------------------------

    pub(crate) fn batch(&mut self) -> Result<Batch> {
        self.expect_kw("begin")?;
        let kind = if self.eat_kw("unlogged") {
            BatchKind::Unlogged
        } else if self.eat_kw("counter") {
            BatchKind::Counter
        } else {
            BatchKind::Logged
        };
        self.expect_kw("batch")?;
        // Cassandra's grammar accepts a TTL here and refuses it at prepare time
        // ("Global TTL on the BATCH statement is not supported."), so the executor does.
        let using = self.using(true)?;
        let mut statements = Vec::new();
        loop {
            while self.eat(&T::Semicolon) {}
            if self.is_kw("apply") {
                self.advance();
                self.expect_kw("batch")?;
                return Ok(Batch {
                    kind,
                    using,
                    statements,
                });
            }
            let st = if self.is_kw("insert") {
                BatchStatement::Insert(self.insert()?)
            } else if self.is_kw("update") {
                BatchStatement::Update(self.update()?)
            } else if self.is_kw("delete") {
                BatchStatement::Delete(self.delete()?)
            } else {
                return Err(self.no_viable());
            };
            statements.push(st);
        }
    }
}
