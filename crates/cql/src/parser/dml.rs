//! Data statements: SELECT, INSERT, UPDATE, DELETE and BATCH.

use super::terms::{multiplicative, RelationContext};
use super::Parser;
use crate::ast::{
    ArithmeticOp, Assignment, Batch, BatchKind, BatchStatement, CellRef, CellStep, Delete,
    ElementRef, Insert, InsertValues, Order, QualifiedName, Relation, RelationTarget, Select,
    Selector, SelectorExpr, Term, Update,
};
use crate::error::Result;
use crate::lexer::TokenKind as T;

fn arithmetic_selector(op: ArithmeticOp, l: SelectorExpr, r: SelectorExpr) -> SelectorExpr {
    SelectorExpr::Arithmetic(op, Box::new(l), Box::new(r))
}

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
        let (selectors, table, where_clause) = self.selection_from_where()?;
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
        // ScyllaDB's extension: read past the row cache, neither using nor filling it.
        let bypass_cache = self.is_kw("bypass") && {
            self.advance();
            self.expect_kw("cache")?;
            true
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
            bypass_cache,
        })
    }

    /// After `json`/`distinct`: does a selector list follow (so the word is a flag)?
    fn flag_keyword_follows(&self) -> bool {
        // Cassandra tries to read a selector list after the word: `-`, `*` and `(` can start
        // one (`SELECT json - 1`, `SELECT json *`, `SELECT JSON (a, b)`: never a call of a
        // function named `json`), the other operators cannot.
        let next = &self.peek_tok(1).kind;
        !(matches!(
            next,
            T::Comma | T::Dot | T::LBracket | T::Eof | T::Plus | T::Slash | T::Percent
        ) || self.is_kw_at(1, "from")
            || self.is_kw_at(1, "as"))
    }

    /// `* | selector, …  FROM table [WHERE relations]`: what a SELECT and a CREATE
    /// MATERIALIZED VIEW's `AS SELECT` share (`None` for `*`).
    pub(crate) fn selection_from_where(
        &mut self,
    ) -> Result<(Option<Vec<Selector>>, QualifiedName, Vec<Relation>)> {
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
        let table = self.table_name()?;
        let where_clause = if self.eat_kw("where") {
            self.relations(RelationContext::Where)?
        } else {
            Vec::new()
        };
        Ok((selectors, table, where_clause))
    }

    pub(crate) fn selector(&mut self) -> Result<Selector> {
        let expr = self.selector_expr()?;
        let alias = if self.eat_kw("as") {
            Some(self.ident()?)
        } else {
            None
        };
        Ok(Selector { expr, alias })
    }

    /// A selector expression, one nesting level deeper: Cassandra's `selectionAddition`, i.e.
    /// selector groups joined by `+ - * / %` (the multiplicative ones binding tighter, all
    /// left-associative).
    fn selector_expr(&mut self) -> Result<SelectorExpr> {
        self.nested(Self::selection_addition)
    }

    fn selection_addition(&mut self) -> Result<SelectorExpr> {
        let operator = |p: &Self| match p.tok().kind {
            T::Plus => Some(ArithmeticOp::Add),
            // `a -1` is a column and a negative literal in Cassandra's lexer, and an error;
            // only a minus apart from a number is an operator.
            T::Minus if !p.minus_glued_to_number() => Some(ArithmeticOp::Sub),
            _ => None,
        };
        self.operator_chain(
            operator,
            Self::selection_multiplication,
            arithmetic_selector,
        )
    }

    fn selection_multiplication(&mut self) -> Result<SelectorExpr> {
        self.operator_chain(multiplicative, Self::selection_group, arithmetic_selector)
    }

    /// `'-' selectionGroup | selectionGroupWithoutField selectorModifier*`.
    fn selection_group(&mut self) -> Result<SelectorExpr> {
        if self.is(&T::Minus) && !self.minus_glued_to_number() {
            self.advance();
            let inner = self.nested(Self::selection_group)?;
            return Ok(SelectorExpr::Negate(Box::new(inner)));
        }
        let base = self.selection_without_field()?;
        self.selector_modifiers(base)
    }

    /// Postfix field and element access: `udt.field`, `m['k']`, `m[1..3]`, chained.
    fn selector_modifiers(&mut self, base: SelectorExpr) -> Result<SelectorExpr> {
        self.chain(|p| {
            let mut expr = base;
            loop {
                if p.is(&T::Dot) {
                    p.deepen()?;
                    p.advance();
                    expr = SelectorExpr::Field(Box::new(expr), p.ident()?);
                } else if p.is(&T::LBracket) {
                    p.deepen()?;
                    expr = match p.collection_sub_selection()? {
                        ElementRef::Key(key) => SelectorExpr::Element(Box::new(expr), key),
                        ElementRef::Slice(from, to) => {
                            SelectorExpr::ElementSlice(Box::new(expr), from, to)
                        }
                    };
                } else {
                    return Ok(expr);
                }
            }
        })
    }

    /// Whether the current token starts Cassandra's `..` (two dots written together; spaces
    /// around them are fine, as in `m[1 .. 3]`).
    fn is_range(&self) -> bool {
        self.is(&T::Dot) && self.is_at(1, &T::Dot) && self.peek_tok(0).end == self.peek_tok(1).start
    }

    /// `[term]`, `[term..]`, `[term..term]` or `[..term]`.
    fn collection_sub_selection(&mut self) -> Result<ElementRef> {
        self.expect(&T::LBracket)?;
        let sub = if self.is_range() {
            self.advance();
            self.advance();
            ElementRef::Slice(None, Some(self.term()?))
        } else {
            let from = self.term()?;
            if self.is_range() {
                self.advance();
                self.advance();
                let to = if self.is(&T::RBracket) {
                    None
                } else {
                    Some(self.term()?)
                };
                ElementRef::Slice(Some(from), to)
            } else {
                ElementRef::Key(from)
            }
        };
        self.expect(&T::RBracket)?;
        Ok(sub)
    }

    /// Cassandra's `selectionGroupWithoutField`: a column, constant, marker or function call,
    /// a type hint, a parenthesised selector, or a collection literal.
    fn selection_without_field(&mut self) -> Result<SelectorExpr> {
        match self.tok().kind {
            T::LParen => self.paren_selector(),
            T::LBracket | T::LBrace => Ok(SelectorExpr::Term(self.simple_term()?)),
            _ => self.selector_primary(),
        }
    }

    /// `(type) selector`, `(selector)` or a tuple `(a, b, ...)`.
    ///
    /// The type hint is tried first and kept only when a type, `)` and a selector follow
    /// (Cassandra's syntactic predicate), so `(a) + 1` is the column `a` in parentheses. A
    /// hinted constant or marker is a [`Term::TypeHint`], any other hinted selector a
    /// [`SelectorExpr::TypeHint`]. A parenthesised selector keeps its parentheses (they are
    /// part of the result column's name, `(a + b) * 2`); a tuple of constants is a
    /// [`Term::Tuple`], any other a [`SelectorExpr::Tuple`].
    fn paren_selector(&mut self) -> Result<SelectorExpr> {
        let (save, markers) = (self.pos, self.marker_count());
        self.expect(&T::LParen)?;
        if self.is_ident() {
            if let Ok(ty) = self.type_name() {
                if self.eat(&T::RParen) {
                    match self.selection_without_field() {
                        Ok(SelectorExpr::Term(t)) => {
                            return Ok(SelectorExpr::Term(Term::TypeHint(ty, Box::new(t))))
                        }
                        Ok(other) => return Ok(SelectorExpr::TypeHint(ty, Box::new(other))),
                        Err(_) => {}
                    }
                }
            }
            self.pos = save;
            self.truncate_markers(markers);
            self.expect(&T::LParen)?;
        }
        let mut items = self.comma_list(&T::RParen, Self::selector_expr)?;
        if items.iter().all(|s| matches!(s, SelectorExpr::Term(_))) && !items.is_empty() {
            let terms = items
                .into_iter()
                .filter_map(|s| match s {
                    SelectorExpr::Term(t) => Some(t),
                    _ => None,
                })
                .collect();
            return Ok(SelectorExpr::Term(Term::Tuple(terms)));
        }
        match items.len() {
            1 => Ok(SelectorExpr::Parenthesized(Box::new(items.remove(0)))),
            0 => Err(self.no_viable()),
            _ => Ok(SelectorExpr::Tuple(items)),
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
                    let cell = self.cell_ref()?;
                    self.expect(&T::RParen)?;
                    return Ok(make(cell));
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
        // Anything else must be a constant or marker (collection literals and parentheses
        // are handled by the caller).
        Ok(SelectorExpr::Term(self.simple_term()?))
    }

    /// The argument of `WRITETIME`, `MAXWRITETIME` and `TTL`: a column, then any chain of
    /// element, slice and field selections (`c[k]`, `c[a..b]`, `u.f`, `m[1][2]`), as
    /// Cassandra's grammar allows there.
    fn cell_ref(&mut self) -> Result<CellRef> {
        let column = self.ident()?;
        let mut path = Vec::new();
        loop {
            if self.is(&T::LBracket) {
                path.push(CellStep::Element(self.collection_sub_selection()?));
            } else if self.eat(&T::Dot) {
                path.push(CellStep::Field(self.ident()?));
            } else {
                return Ok(CellRef { column, path });
            }
        }
    }

    // --- INSERT -----------------------------------------------------------------------

    pub(crate) fn insert(&mut self) -> Result<Insert> {
        self.expect_kw("insert")?;
        self.expect_kw("into")?;
        let table = self.table_name()?;
        let values = if self.eat_kw("json") {
            // `jsonValue`: a string or a marker, never an expression.
            let json = match self.tok().kind {
                T::Str(_) => match self.literal()? {
                    Some(lit) => Term::Literal(lit),
                    None => return Err(self.no_viable()),
                },
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
        let table = self.table_name()?;
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
        let table = self.table_name()?;
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
