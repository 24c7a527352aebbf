//! Grammar pieces shared by all statements: terms, types, WHERE relations, `IF`
//! conditions, `USING` clauses and `WITH` properties.

use super::Parser;
use crate::ast::{
    ArithmeticOp, Conditions, FunctionCall, InValues, Literal, Operator, Property, PropertyValue,
    QualifiedName, Relation, RelationTarget, Term, TypeName, Using,
};
use crate::error::Result;
use crate::lexer::TokenKind as T;
use cairn_engine::model::types::CqlType;

/// Names Cassandra refuses for user types (`reservedTypeNames` in its parser).
const RESERVED_TYPE_NAMES: &[&str] = &[
    "byte",
    "complex",
    "enum",
    "date",
    "interval",
    "macaddr",
    "bitstring",
];

/// Unreserved keywords that Cassandra's `non_type_ident` does not take as a user type's name
/// (it takes identifiers, quoted names, `basic_unreserved_keyword` and `key`; the native
/// types' names are not among them either).
const NOT_TYPE_NAMES: &[&str] = &[
    "ttl",
    "count",
    "writetime",
    "maxwritetime",
    "cast",
    "json",
    "distinct",
];

/// `*`, `/` or `%` at the current token.
pub(crate) fn multiplicative(p: &Parser) -> Option<ArithmeticOp> {
    match p.tok().kind {
        T::Star => Some(ArithmeticOp::Mul),
        T::Slash => Some(ArithmeticOp::Div),
        T::Percent => Some(ArithmeticOp::Mod),
        _ => None,
    }
}

fn arithmetic_term(op: ArithmeticOp, l: Term, r: Term) -> Term {
    Term::Arithmetic(op, Box::new(l), Box::new(r))
}

/// Which clause a relation is parsed for: WHERE allows tuples and `token(...)`
/// targets, `IF` conditions allow `col.field`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum RelationContext {
    Where,
    Condition,
}

impl Parser<'_> {
    // --- terms ------------------------------------------------------------------------

    /// A term, one nesting level deeper: Cassandra's `termAddition`, i.e. simple terms joined
    /// by `+ - * / %` (the multiplicative ones binding tighter, all left-associative) and
    /// prefixed by a unary `-`.
    pub(crate) fn term(&mut self) -> Result<Term> {
        self.nested(Self::term_addition)
    }

    fn term_addition(&mut self) -> Result<Term> {
        let operator = |p: &Self| {
            let op = match p.tok().kind {
                T::Plus => ArithmeticOp::Add,
                T::Minus => ArithmeticOp::Sub,
                _ => return None,
            };
            // `[1] + l` (a list prepend) and `c = 5 - c` end the term at the operator: a
            // bare column name cannot start a term. A minus glued to a number is a negative
            // literal in Cassandra's lexer, so `1 -1` is two terms there (and an error).
            let column_next = p.is_ident_at(1) && !p.is_function_call_start_at(1);
            (!column_next && !p.minus_glued_to_number()).then_some(op)
        };
        self.operator_chain(operator, Self::term_multiplication, arithmetic_term)
    }

    fn term_multiplication(&mut self) -> Result<Term> {
        self.operator_chain(multiplicative, Self::term_group, arithmetic_term)
    }

    /// `simpleTerm | '-' simpleTerm`: a minus apart from its operand negates it (`- 1`, `-now()`),
    /// one glued to a number is part of the literal (`-1`).
    fn term_group(&mut self) -> Result<Term> {
        if self.is(&T::Minus) && !self.minus_glued_to_number() {
            self.advance();
            return Ok(Term::Negate(Box::new(self.simple_term()?)));
        }
        // Already one level deeper than the enclosing term.
        self.simple_term_inner()
    }

    /// Whether the current token is a `-` written right before a number, `NaN` or `Infinity`
    /// (Cassandra's lexer reads the two as one negative literal).
    pub(crate) fn minus_glued_to_number(&self) -> bool {
        if !self.is(&T::Minus) {
            return false;
        }
        let (minus, next) = (self.peek_tok(0), self.peek_tok(1));
        let numeric = match next.kind {
            T::Integer | T::Float | T::Duration => true,
            T::Ident => {
                let text = self.text_of(next);
                text.eq_ignore_ascii_case("nan") || text.eq_ignore_ascii_case("infinity")
            }
            _ => false,
        };
        numeric && minus.end == next.start
    }

    /// Cassandra's `simpleTerm`, one nesting level deeper: a value (constant, collection,
    /// user-type or tuple literal, `NULL`, bind marker), a function call, or `(type) simpleTerm`.
    pub(crate) fn simple_term(&mut self) -> Result<Term> {
        self.nested(Self::simple_term_inner)
    }

    fn simple_term_inner(&mut self) -> Result<Term> {
        if let Some(lit) = self.literal()? {
            return Ok(Term::Literal(lit));
        }
        if let Some(m) = self.bind_marker()? {
            return Ok(Term::Bind(m));
        }
        match self.tok().kind {
            T::Ident | T::QuotedName(_) => {
                if self.is_kw("null") {
                    self.advance();
                    return Ok(Term::Null);
                }
                if self.is_kw("cast") && self.is_at(1, &T::LParen) {
                    return self.cast_term();
                }
                if self.is_function_call_start() {
                    return Ok(Term::Function(self.function_call(Self::term)?));
                }
                Err(self.no_viable())
            }
            T::LBracket => {
                self.advance();
                let items = self.comma_list(&T::RBracket, Self::term)?;
                Ok(Term::List(items))
            }
            T::LBrace => self.braces(),
            T::LParen => self.paren_term(),
            _ => Err(self.no_viable()),
        }
    }

    /// `CAST(simpleTerm AS native_type)`: Cassandra's call of the native function
    /// `system.cast_as_<type>` on the term, resolved among that function's overloads like
    /// any call (so `CAST(1 AS int)` is ambiguous and `CAST(1.5 AS int)` is not).
    fn cast_term(&mut self) -> Result<Term> {
        self.advance();
        self.expect(&T::LParen)?;
        let arg = self.simple_term()?;
        self.expect_kw("as")?;
        let ty = match self.tok().kind {
            T::Ident => CqlType::native(&self.text_of(self.tok()).to_ascii_lowercase()),
            _ => None,
        };
        let Some(ty) = ty else {
            return Err(self.no_viable());
        };
        self.advance();
        self.expect(&T::RParen)?;
        Ok(Term::Function(FunctionCall {
            name: QualifiedName::qualified("system", format!("cast_as_{}", ty.name())),
            args: vec![arg],
        }))
    }

    /// A constant at the current token, if there is one: numbers (with a leading minus
    /// written right before them), strings, booleans, uuids, blobs, durations, `NaN` and
    /// `Infinity`.
    pub(crate) fn literal(&mut self) -> Result<Option<Literal>> {
        let t = self.tok().clone();
        let text = self.text_of(&t).to_string();
        let lit = match &t.kind {
            T::Integer => Literal::Integer(text),
            T::Float => Literal::Float(text),
            T::Str(s) => Literal::String(s.clone()),
            T::Uuid => Literal::Uuid(text),
            T::Blob => Literal::Blob(text),
            T::Duration => Literal::Duration(text),
            T::Ident => match text.to_ascii_lowercase().as_str() {
                "true" => Literal::Boolean(true),
                "false" => Literal::Boolean(false),
                "nan" => Literal::Float("NaN".into()),
                "infinity" => Literal::Float("Infinity".into()),
                _ => return Ok(None),
            },
            // The lexer leaves `-` separate; glued to a number it is a negative literal (as
            // Cassandra's lexer reads it), apart from it an operator the caller handles.
            T::Minus if self.minus_glued_to_number() => {
                let next = self.peek_tok(1).clone();
                let ntext = self.text_of(&next).to_string();
                let lit = match next.kind {
                    T::Integer => Literal::Integer(format!("-{ntext}")),
                    T::Float => Literal::Float(format!("-{ntext}")),
                    T::Duration => Literal::Duration(format!("-{ntext}")),
                    _ if ntext.eq_ignore_ascii_case("nan") => Literal::Float("NaN".into()),
                    _ => Literal::Float("-Infinity".into()),
                };
                self.advance();
                self.advance();
                return Ok(Some(lit));
            }
            _ => return Ok(None),
        };
        self.advance();
        Ok(Some(lit))
    }

    /// Whether the tokens ahead are `name (` or `ks . name (`; `token` (reserved) is
    /// allowed as a function name.
    pub(crate) fn is_function_call_start(&self) -> bool {
        self.is_function_call_start_at(0)
    }

    /// [`Self::is_function_call_start`] for the tokens from `n` ahead.
    pub(crate) fn is_function_call_start_at(&self, n: usize) -> bool {
        let name_at = |k: usize| self.is_ident_at(k) || self.is_kw_at(k, "token");
        (name_at(n) && self.is_at(n + 1, &T::LParen))
            || (self.is_ident_at(n)
                && self.is_at(n + 1, &T::Dot)
                && name_at(n + 2)
                && self.is_at(n + 3, &T::LParen))
    }

    /// `[ks.]name(arg, ...)` with arguments parsed by `arg`.
    pub(crate) fn function_call<A>(
        &mut self,
        arg: impl FnMut(&mut Self) -> Result<A>,
    ) -> Result<FunctionCall<A>> {
        let fn_name = |p: &mut Self| -> Result<String> {
            if p.eat_kw("token") {
                Ok("token".into())
            } else {
                p.ident()
            }
        };
        let first = fn_name(self)?;
        let name = if self.eat(&T::Dot) {
            QualifiedName::qualified(first, fn_name(self)?)
        } else {
            QualifiedName::new(first)
        };
        self.expect(&T::LParen)?;
        let args = self.comma_list(&T::RParen, arg)?;
        Ok(FunctionCall { name, args })
    }

    /// `item, item, ... close` (possibly empty), after the opening bracket.
    pub(crate) fn comma_list<X>(
        &mut self,
        close: &T,
        mut item: impl FnMut(&mut Self) -> Result<X>,
    ) -> Result<Vec<X>> {
        let mut items = Vec::new();
        if self.eat(close) {
            return Ok(items);
        }
        loop {
            items.push(item(self)?);
            if self.eat(close) {
                return Ok(items);
            }
            if !self.is(&T::Comma) {
                return Err(self.mismatched(&super::token_name(close)));
            }
            self.advance();
        }
    }

    /// `{}`, `{a, b}`, `{k: v}` or a user-type literal `{field: v}`.
    fn braces(&mut self) -> Result<Term> {
        self.expect(&T::LBrace)?;
        if self.eat(&T::RBrace) {
            return Ok(Term::EmptyBraces);
        }
        // A bare identifier followed by `:` can only be a user-type field: an
        // identifier alone is not a term.
        if self.is_ident() && self.is_at(1, &T::Colon) {
            let fields = self.comma_list(&T::RBrace, |p| {
                let name = p.ident()?;
                p.expect(&T::Colon)?;
                Ok((name, p.term()?))
            })?;
            return Ok(Term::UserType(fields));
        }
        let first = self.term()?;
        if self.eat(&T::Colon) {
            let value = self.term()?;
            let mut entries = vec![(first, value)];
            if !self.eat(&T::RBrace) {
                self.expect(&T::Comma)?;
                entries.extend(self.comma_list(&T::RBrace, |p| {
                    let k = p.term()?;
                    p.expect(&T::Colon)?;
                    Ok((k, p.term()?))
                })?);
            }
            Ok(Term::Map(entries))
        } else {
            let mut items = vec![first];
            if !self.eat(&T::RBrace) {
                self.expect(&T::Comma)?;
                items.extend(self.comma_list(&T::RBrace, Self::term)?);
            }
            Ok(Term::Set(items))
        }
    }

    /// `(type) simpleTerm` or a tuple `(a, b, ...)`. A type hint is tried first and
    /// abandoned (backtracking) unless it is a type followed by `)`; types never record bind
    /// markers, so nothing needs undoing. A hint binds to the simple term after it:
    /// `(int) 1 + 2` adds 2 to `(int) 1`. (`(a + b)` is a one-element tuple, which stands for
    /// its element wherever the receiver is not a tuple.)
    pub(crate) fn paren_term(&mut self) -> Result<Term> {
        self.expect(&T::LParen)?;
        if self.is_ident() {
            let save = self.pos;
            if let Ok(ty) = self.type_name() {
                if self.eat(&T::RParen) {
                    let inner = self.simple_term()?;
                    return Ok(Term::TypeHint(ty, Box::new(inner)));
                }
            }
            self.pos = save;
        }
        let items = self.comma_list(&T::RParen, Self::term)?;
        if items.is_empty() {
            return Err(self.no_viable());
        }
        Ok(Term::Tuple(items))
    }

    /// A non-negative integer or bind marker, as LIMIT and USING take.
    pub(crate) fn int_value(&mut self) -> Result<Term> {
        if let Some(m) = self.bind_marker()? {
            return Ok(Term::Bind(m));
        }
        let is_int = self.is(&T::Integer) || (self.is(&T::Minus) && self.is_at(1, &T::Integer));
        if !is_int {
            return Err(self.no_viable());
        }
        match self.literal()? {
            Some(lit) => Ok(Term::Literal(lit)),
            None => Err(self.no_viable()),
        }
    }

    // --- types ------------------------------------------------------------------------

    /// A CQL type, one nesting level deeper.
    pub(crate) fn type_name(&mut self) -> Result<TypeName> {
        self.nested(Self::type_inner)
    }

    fn type_inner(&mut self) -> Result<TypeName> {
        if let T::Str(s) = &self.tok().kind {
            let s = s.clone();
            self.advance();
            return Ok(TypeName::Custom(s));
        }
        if self.tok().kind == T::Ident {
            let word = self.text_of(self.tok()).to_ascii_lowercase();
            if let Some(t) = CqlType::native(&word) {
                self.advance();
                return Ok(TypeName::Native(t));
            }
            if self.is_at(1, &T::Lt) {
                match word.as_str() {
                    "list" | "set" | "frozen" => {
                        self.advance();
                        self.advance();
                        let inner = Box::new(self.type_name()?);
                        self.expect(&T::Gt)?;
                        return Ok(match word.as_str() {
                            "list" => TypeName::List(inner),
                            "set" => TypeName::Set(inner),
                            _ => TypeName::Frozen(inner),
                        });
                    }
                    "map" => {
                        self.advance();
                        self.advance();
                        let k = self.type_name()?;
                        self.expect(&T::Comma)?;
                        let v = self.type_name()?;
                        self.expect(&T::Gt)?;
                        return Ok(TypeName::Map(Box::new(k), Box::new(v)));
                    }
                    "tuple" => {
                        self.advance();
                        self.advance();
                        let items = self.comma_list(&T::Gt, Self::type_name)?;
                        if items.is_empty() {
                            return Err(self.no_viable());
                        }
                        return Ok(TypeName::Tuple(items));
                    }
                    "vector" => {
                        self.advance();
                        self.advance();
                        let elem = self.type_name()?;
                        self.expect(&T::Comma)?;
                        let dim_at = self.pos;
                        let dim_tok = self.expect(&T::Integer)?;
                        let dim = self.text_of(&dim_tok).parse::<u32>().ok();
                        let Some(dim) = dim.filter(|d| *d > 0) else {
                            return Err(self.error_at(
                                dim_at,
                                "vectors must have a dimension greater than 0".into(),
                            ));
                        };
                        self.expect(&T::Gt)?;
                        return Ok(TypeName::Vector(Box::new(elem), dim));
                    }
                    _ => {}
                }
            }
        }
        Ok(TypeName::UserDefined(self.user_type_name()?))
    }

    /// A user type's name, `[ks.]name` (Cassandra's `userTypeName`): the name unquoted may be
    /// any unreserved keyword but a native type's name and [`NOT_TYPE_NAMES`].
    pub(crate) fn user_type_name(&mut self) -> Result<QualifiedName> {
        let first_tok = self.pos;
        let first = self.ident()?;
        Ok(if self.eat(&T::Dot) {
            let second_tok = self.pos;
            let second = self.ident()?;
            self.check_type_name(second_tok, &second)?;
            QualifiedName::qualified(first, second)
        } else {
            self.check_type_name(first_tok, &first)?;
            QualifiedName::new(first)
        })
    }

    fn check_type_name(&self, tok: usize, name: &str) -> Result<()> {
        let unquoted = matches!(self.tokens.get(tok).map(|t| &t.kind), Some(T::Ident));
        if unquoted
            && (NOT_TYPE_NAMES.contains(&name)
                || (CqlType::native(name).is_some() && !RESERVED_TYPE_NAMES.contains(&name)))
        {
            return Err(self.no_viable_at(tok));
        }
        let quoted = matches!(
            self.tokens.get(tok).map(|t| &t.kind),
            Some(T::QuotedName(_))
        );
        if !quoted && RESERVED_TYPE_NAMES.contains(&name) {
            return Err(self.error_at(tok, format!("Invalid (reserved) user type name {name}")));
        }
        Ok(())
    }

    // --- relations and conditions -----------------------------------------------------

    /// `relation (AND relation)*`
    pub(crate) fn relations(&mut self, ctx: RelationContext) -> Result<Vec<Relation>> {
        let mut out = vec![self.relation(ctx)?];
        while self.eat_kw("and") {
            out.push(self.relation(ctx)?);
        }
        Ok(out)
    }

    fn relation(&mut self, ctx: RelationContext) -> Result<Relation> {
        let target = if ctx == RelationContext::Where && self.is_kw("token") {
            self.advance();
            self.expect(&T::LParen)?;
            let cols = self.comma_list(&T::RParen, Self::ident)?;
            if cols.is_empty() {
                return Err(self.no_viable());
            }
            RelationTarget::Token(cols)
        } else if ctx == RelationContext::Where && self.is(&T::LParen) {
            self.advance();
            let cols = self.comma_list(&T::RParen, Self::ident)?;
            if cols.is_empty() {
                return Err(self.no_viable());
            }
            RelationTarget::Tuple(cols)
        } else {
            let col = self.ident()?;
            if self.eat(&T::LBracket) {
                let key = self.term()?;
                self.expect(&T::RBracket)?;
                RelationTarget::Element(col, key)
            } else if ctx == RelationContext::Condition && self.eat(&T::Dot) {
                RelationTarget::Field(col, self.ident()?)
            } else {
                if ctx == RelationContext::Where && self.is_kw("is") {
                    self.advance();
                    self.expect_kw("not")?;
                    self.expect_kw("null")?;
                    return Ok(Relation::IsNotNull(col));
                }
                RelationTarget::Column(col)
            }
        };
        if self.eat_kw("in") {
            let values = if self.is_bind_marker() {
                match self.bind_marker()? {
                    Some(m) => InValues::Marker(m),
                    None => return Err(self.no_viable()),
                }
            } else if self.eat(&T::LParen) {
                InValues::Terms(self.comma_list(&T::RParen, Self::term)?)
            } else {
                return Err(self.no_viable());
            };
            return Ok(Relation::In { target, values });
        }
        let op = match self.tok().kind {
            T::Eq => Operator::Eq,
            T::Neq => Operator::Neq,
            T::Lt => Operator::Lt,
            T::Lte => Operator::Lte,
            T::Gt => Operator::Gt,
            T::Gte => Operator::Gte,
            T::Ident if self.is_kw("contains") => {
                if self.is_kw_at(1, "key") {
                    self.advance();
                    Operator::ContainsKey
                } else {
                    Operator::Contains
                }
            }
            T::Ident if self.is_kw("like") => Operator::Like,
            _ => return Err(self.no_viable()),
        };
        self.advance();
        let value = self.term()?;
        Ok(Relation::Compare { target, op, value })
    }

    /// The optional `IF ...` of an UPDATE or DELETE: `IF EXISTS` or conditions.
    pub(crate) fn update_conditions(&mut self) -> Result<Conditions> {
        if !self.eat_kw("if") {
            return Ok(Conditions::None);
        }
        if self.eat_kw("exists") {
            return Ok(Conditions::Exists);
        }
        Ok(Conditions::Columns(
            self.relations(RelationContext::Condition)?,
        ))
    }

    // --- USING ------------------------------------------------------------------------

    /// `USING TTL x AND TIMESTAMP y` (either order, each at most once). DELETE and
    /// BATCH pass `allow_ttl = false`, as their grammar only has `USING TIMESTAMP`.
    pub(crate) fn using(&mut self, allow_ttl: bool) -> Result<Using> {
        let mut using = Using::default();
        if !self.eat_kw("using") {
            return Ok(using);
        }
        loop {
            if allow_ttl && self.is_kw("ttl") && using.ttl.is_none() {
                self.advance();
                using.ttl = Some(self.int_value()?);
            } else if self.is_kw("timestamp") && using.timestamp.is_none() {
                self.advance();
                using.timestamp = Some(self.int_value()?);
            } else if allow_ttl {
                return Err(self.no_viable());
            } else {
                return Err(self.mismatched("K_TIMESTAMP"));
            }
            if !self.eat_kw("and") {
                return Ok(using);
            }
        }
    }

    // --- properties -------------------------------------------------------------------

    /// `name = value` (or a map). The caller handles `AND` because table options mix
    /// properties with `CLUSTERING ORDER BY` and `COMPACT STORAGE`.
    pub(crate) fn property(&mut self, seen: &[Property]) -> Result<Property> {
        let name = self.ident()?;
        if seen.iter().any(|p| p.name == name) {
            // Cassandra's `PropertyDefinitions.addProperty`: no position.
            return Err(crate::error::Error::syntax(format!(
                "Multiple definitions for property '{name}'"
            )));
        }
        self.expect(&T::Eq)?;
        let value = if self.is(&T::LBrace) {
            PropertyValue::Map(self.property_map()?)
        } else {
            PropertyValue::Simple(self.property_constant()?)
        };
        Ok(Property { name, value })
    }

    /// `prop AND prop ...`
    pub(crate) fn properties(&mut self) -> Result<Vec<Property>> {
        let mut props = Vec::new();
        loop {
            let p = self.property(&props)?;
            props.push(p);
            if !self.eat_kw("and") {
                return Ok(props);
            }
        }
    }

    /// A property value: a constant, or an unreserved keyword used as a word.
    fn property_constant(&mut self) -> Result<String> {
        if let Some(lit) = self.literal()? {
            return Ok(lit.text());
        }
        // Cassandra takes an unreserved keyword here as written (not lowercased).
        if self.tok().kind == T::Ident && self.is_ident() {
            let word = self.text_of(self.tok()).to_string();
            self.advance();
            return Ok(word);
        }
        Err(self.no_viable())
    }

    /// `{ 'k': 'v', ... }` with constant keys and values, as text.
    pub(crate) fn property_map(&mut self) -> Result<Vec<(String, String)>> {
        self.expect(&T::LBrace)?;
        let map: Vec<(String, String)> = self.comma_list(&T::RBrace, |p| {
            let k = p.property_constant()?;
            p.expect(&T::Colon)?;
            Ok((k, p.property_constant()?))
        })?;
        for (i, (k, _)) in map.iter().enumerate() {
            if map[..i].iter().any(|(j, _)| j == k) {
                // Cassandra's text for a key given twice in a property map.
                return Err(crate::error::Error::syntax(format!(
                    "Multiple definition for property {k}"
                )));
            }
        }
        Ok(map)
    }
}
