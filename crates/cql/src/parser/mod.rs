//! The recursive-descent CQL parser: the token cursor, error construction, identifiers,
//! and the statement dispatcher. The grammar itself is split by topic:
//!
//! - `terms`: terms (literals, collections, bind markers, function calls), types,
//!   WHERE relations, `IF` conditions and `WITH` properties — the pieces every statement
//!   shares;
//! - `dml`: SELECT, INSERT, UPDATE, DELETE and BATCH;
//! - `ddl`: keyspaces, tables, user types, indexes, USE and TRUNCATE;
//! - `auth`: roles, users and permissions.
//!
//! Keywords are matched by text on identifier tokens (see the lexer), which is how
//! Cassandra's *unreserved* keywords (`key`, `type`, `ttl`, `writetime`, `count`, `json`,
//! `static`, …) remain usable as names; the reserved ones in
//! [`RESERVED`](crate::identifier::RESERVED) are not.
//! Recursion through nested terms, types and selectors is bounded by [`MAX_DEPTH`], so
//! hostile input gets an error, not a stack overflow.

mod auth;
mod ddl;
mod dml;
mod terms;

use crate::ast::{ArithmeticOp, BindMarker, ParsedStatement, QualifiedName, Statement};
use crate::error::{Error, Result, SyntaxError};
use crate::identifier::is_reserved;
use crate::lexer::{tokenize, Token, TokenKind};

/// How deeply terms, types and selectors may nest before the parser gives up.
pub const MAX_DEPTH: usize = 100;

/// Parses exactly one statement, optionally followed by `;`.
pub fn parse_statement(text: &str) -> Result<ParsedStatement> {
    let mut p = Parser::new(text)?;
    let st = p.statement()?;
    while p.eat(&TokenKind::Semicolon) {}
    if !p.at_eof() {
        return Err(p.mismatched("EOF"));
    }
    Ok(st)
}

/// Parses a `;`-separated sequence of statements (empty statements are skipped). Bind
/// markers are numbered per statement, as each is prepared on its own.
pub fn parse_statements(text: &str) -> Result<Vec<ParsedStatement>> {
    let mut p = Parser::new(text)?;
    let mut out = Vec::new();
    loop {
        while p.eat(&TokenKind::Semicolon) {}
        if p.at_eof() {
            return Ok(out);
        }
        out.push(p.statement()?);
        if !p.at_eof() && !p.is(&TokenKind::Semicolon) {
            return Err(p.mismatched("';'"));
        }
    }
}

/// The parser state: the token list and a cursor into it.
pub(crate) struct Parser<'a> {
    src: &'a str,
    tokens: Vec<Token>,
    /// Returned when the cursor is past the end, so lookups never fail.
    eof: Token,
    pos: usize,
    depth: usize,
    markers: Vec<BindMarker>,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(src: &'a str) -> Result<Self> {
        let tokens = tokenize(src)?;
        let eof = tokens.last().cloned().unwrap_or(Token {
            kind: TokenKind::Eof,
            start: src.len(),
            end: src.len(),
            line: 1,
            column: 0,
        });
        Ok(Parser {
            src,
            tokens,
            eof,
            pos: 0,
            depth: 0,
            markers: Vec::new(),
        })
    }

    // --- cursor -----------------------------------------------------------------------

    pub(crate) fn tok(&self) -> &Token {
        self.peek_tok(0)
    }

    pub(crate) fn peek_tok(&self, n: usize) -> &Token {
        self.tokens.get(self.pos + n).unwrap_or(&self.eof)
    }

    pub(crate) fn text_of(&self, t: &Token) -> &'a str {
        self.src.get(t.start..t.end).unwrap_or("")
    }

    pub(crate) fn at_eof(&self) -> bool {
        self.tok().kind == TokenKind::Eof
    }

    pub(crate) fn advance(&mut self) -> Token {
        let t = self.tok().clone();
        if t.kind != TokenKind::Eof {
            self.pos += 1;
        }
        t
    }

    pub(crate) fn is(&self, kind: &TokenKind) -> bool {
        self.tok().kind == *kind
    }

    pub(crate) fn is_at(&self, n: usize, kind: &TokenKind) -> bool {
        self.peek_tok(n).kind == *kind
    }

    pub(crate) fn eat(&mut self, kind: &TokenKind) -> bool {
        if self.is(kind) {
            self.advance();
            true
        } else {
            false
        }
    }

    pub(crate) fn expect(&mut self, kind: &TokenKind) -> Result<Token> {
        if self.is(kind) {
            Ok(self.advance())
        } else {
            Err(self.mismatched(&token_name(kind)))
        }
    }

    /// Whether the token `n` ahead is the keyword `kw` (given in lowercase).
    pub(crate) fn is_kw_at(&self, n: usize, kw: &str) -> bool {
        let t = self.peek_tok(n);
        t.kind == TokenKind::Ident && self.text_of(t).eq_ignore_ascii_case(kw)
    }

    pub(crate) fn is_kw(&self, kw: &str) -> bool {
        self.is_kw_at(0, kw)
    }

    pub(crate) fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.advance();
            true
        } else {
            false
        }
    }

    pub(crate) fn expect_kw(&mut self, kw: &str) -> Result<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.mismatched(&format!("K_{}", kw.to_ascii_uppercase())))
        }
    }

    /// Consumes `IF NOT EXISTS` when present.
    pub(crate) fn if_not_exists(&mut self) -> Result<bool> {
        if self.is_kw("if") {
            self.advance();
            self.expect_kw("not")?;
            self.expect_kw("exists")?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Consumes `IF EXISTS` when present.
    pub(crate) fn if_exists(&mut self) -> Result<bool> {
        if self.is_kw("if") {
            self.advance();
            self.expect_kw("exists")?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Runs `f` one nesting level deeper, failing past [`MAX_DEPTH`].
    pub(crate) fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.deepen()?;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// Runs `f`, which may call [`Self::deepen`] any number of times (once per link of a
    /// chain whose tree nests one level per link, such as `a + b + c` or `m[1][2]`), and
    /// restores the depth afterwards.
    pub(crate) fn chain<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        let saved = self.depth;
        let r = f(self);
        self.depth = saved;
        r
    }

    /// A left-associative chain `operand (op operand)*` of binary operators, as Cassandra's
    /// `termAddition`, `termMultiplication`, `selectionAddition` and
    /// `selectionMultiplication` read them: `operator` says whether the current token is an
    /// operator that continues the chain (and which), `combine` builds the tree.
    pub(crate) fn operator_chain<X>(
        &mut self,
        operator: impl Fn(&Self) -> Option<ArithmeticOp>,
        operand: impl Fn(&mut Self) -> Result<X>,
        combine: impl Fn(ArithmeticOp, X, X) -> X,
    ) -> Result<X> {
        self.chain(|p| {
            let mut left = operand(p)?;
            while let Some(op) = operator(p) {
                p.deepen()?;
                p.advance();
                let right = p.nested(&operand)?;
                left = combine(op, left, right);
            }
            Ok(left)
        })
    }

    /// One more nesting level, failing past [`MAX_DEPTH`].
    pub(crate) fn deepen(&mut self) -> Result<()> {
        if self.depth >= MAX_DEPTH {
            let msg = format!(
                "nesting deeper than {MAX_DEPTH} levels at input {}",
                self.display(self.pos)
            );
            return Err(self.error_at(self.pos, msg));
        }
        self.depth += 1;
        Ok(())
    }

    // --- errors -----------------------------------------------------------------------

    /// `'text'` of token `idx`, the way ANTLR prints a token in messages.
    pub(crate) fn display(&self, idx: usize) -> String {
        let t = self.tokens.get(idx).unwrap_or(&self.eof);
        if t.kind == TokenKind::Eof {
            return "'<EOF>'".into();
        }
        // Cassandra's lexer replaces the text of string and quoted-name tokens by their
        // unescaped content, so that is what its messages show.
        let glued_number = self.tokens.get(idx + 1).filter(|n| {
            t.kind == TokenKind::Minus
                && n.start == t.end
                && matches!(
                    n.kind,
                    TokenKind::Integer | TokenKind::Float | TokenKind::Duration
                )
        });
        let text = match (&t.kind, glued_number) {
            (TokenKind::Str(s) | TokenKind::QuotedName(s), _) => s.clone(),
            // Cassandra's lexer reads `-1` as one token, so its messages show both.
            (_, Some(n)) => format!("-{}", self.text_of(n)),
            _ => self.text_of(t).to_string(),
        };
        let text = text
            .replace('\n', "\\n")
            .replace('\r', "\\r")
            .replace('\t', "\\t");
        format!("'{text}'")
    }

    /// An error at token `idx` with a Cassandra-style query snippet appended.
    pub(crate) fn error_at(&self, idx: usize, message: String) -> Error {
        let t = self.tokens.get(idx).unwrap_or(&self.eof);
        let message = format!("{message}{}", self.snippet(idx));
        Error::Syntax(SyntaxError {
            line: t.line,
            column: t.column,
            offset: t.start,
            message,
        })
    }

    /// `no viable alternative at input 'x'` at the current token: used where several
    /// alternatives were possible.
    pub(crate) fn no_viable(&self) -> Error {
        self.no_viable_at(self.pos)
    }

    /// [`Parser::no_viable`] at the token at `pos`.
    pub(crate) fn no_viable_at(&self, pos: usize) -> Error {
        self.error_at(
            pos,
            format!("no viable alternative at input {}", self.display(pos)),
        )
    }

    /// `mismatched input 'x' expecting Y` at the current token: used where one token was
    /// required. `expecting` uses ANTLR's token names (`K_FROM`, `IDENT`, `')'`, `EOF`).
    pub(crate) fn mismatched(&self, expecting: &str) -> Error {
        self.error_at(
            self.pos,
            format!(
                "mismatched input {} expecting {expecting}",
                self.display(self.pos)
            ),
        )
    }

    /// A custom message at the current token (Cassandra's `addRecognitionError` texts).
    pub(crate) fn error_here(&self, message: impl Into<String>) -> Error {
        self.error_at(self.pos, message.into())
    }

    /// Cassandra's `ErrorCollector.appendQuerySnippet`: up to 10 tokens before the
    /// offending one and 2 after, the offending token in brackets, `...` where the
    /// snippet does not reach the query's start or end, lines concatenated. No snippet
    /// when the offending token is the end of input (Cassandra's EOF token has no
    /// position, so it prints none either).
    fn snippet(&self, idx: usize) -> String {
        let Some(off) = self.tokens.get(idx).filter(|t| t.kind != TokenKind::Eof) else {
            return String::new();
        };
        let last_real = self.tokens.len().saturating_sub(2);
        let from_idx = idx.saturating_sub(10);
        let to_idx = (idx + 2).min(last_real);
        let (Some(from), Some(to)) = (self.tokens.get(from_idx), self.tokens.get(to_idx)) else {
            return String::new();
        };
        let piece = |a: usize, b: usize| self.src.get(a..b).unwrap_or("").replace('\n', "");
        let include_start = from.line == 1 && from.column == 0;
        let include_end = self
            .src
            .get(to.end.max(off.end)..)
            .is_some_and(|rest| rest.chars().all(|c| c == '\n'));
        format!(
            " ({}{}[{}]{}{})",
            if include_start { "" } else { "..." },
            piece(from.start, off.start),
            piece(off.start, off.end),
            piece(off.end, to.end.max(off.end)),
            if include_end { "" } else { "..." },
        )
    }

    // --- identifiers ------------------------------------------------------------------

    /// Whether the current token can be an identifier (unquoted non-reserved or quoted).
    pub(crate) fn is_ident(&self) -> bool {
        self.is_ident_at(0)
    }

    pub(crate) fn is_ident_at(&self, n: usize) -> bool {
        let t = self.peek_tok(n);
        match &t.kind {
            TokenKind::Ident => !is_reserved(self.text_of(t)),
            TokenKind::QuotedName(_) => true,
            _ => false,
        }
    }

    /// An identifier: unquoted ones are lowercased, quoted ones kept as written.
    pub(crate) fn ident(&mut self) -> Result<String> {
        let t = self.tok();
        match &t.kind {
            TokenKind::Ident if !is_reserved(self.text_of(t)) => {
                let s = self.text_of(t).to_ascii_lowercase();
                self.advance();
                Ok(s)
            }
            TokenKind::QuotedName(s) => {
                let s = s.clone();
                self.advance();
                Ok(s)
            }
            _ => Err(self.no_viable()),
        }
    }

    /// `name` or `keyspace.name`.
    pub(crate) fn qualified_name(&mut self) -> Result<QualifiedName> {
        let first = self.ident()?;
        if self.eat(&TokenKind::Dot) {
            let second = self.ident()?;
            Ok(QualifiedName::qualified(first, second))
        } else {
            Ok(QualifiedName::new(first))
        }
    }

    /// A keyspace name; a `?` there is Cassandra's error.
    pub(crate) fn keyspace_name(&mut self) -> Result<String> {
        if self.is(&TokenKind::Question) {
            return Err(crate::error::Error::syntax(
                "Bind variables cannot be used for keyspace names",
            ));
        }
        self.ident()
    }

    /// A `[keyspace.]table` name; a `?` in it is Cassandra's error.
    pub(crate) fn table_name(&mut self) -> Result<QualifiedName> {
        let no_tables = || {
            Err(crate::error::Error::syntax(
                "Bind variables cannot be used for table names",
            ))
        };
        if self.is(&TokenKind::Question) && !self.is_at(1, &TokenKind::Dot) {
            return no_tables();
        }
        let first = self.keyspace_name()?;
        if self.eat(&TokenKind::Dot) {
            if self.is(&TokenKind::Question) {
                return no_tables();
            }
            let second = self.ident()?;
            Ok(QualifiedName::qualified(first, second))
        } else {
            Ok(QualifiedName::new(first))
        }
    }

    /// Records a bind marker (`?` or `:name`) at the current token, if there is one.
    pub(crate) fn bind_marker(&mut self) -> Result<Option<BindMarker>> {
        let t = self.tok().clone();
        let name = match t.kind {
            TokenKind::Question => {
                self.advance();
                None
            }
            TokenKind::Colon => {
                self.advance();
                Some(self.ident()?)
            }
            _ => return Ok(None),
        };
        let marker = BindMarker {
            index: self.markers.len(),
            name,
            line: t.line,
            column: t.column,
        };
        self.markers.push(marker.clone());
        Ok(Some(marker))
    }

    /// How many bind markers have been recorded so far (to undo them when backtracking).
    pub(crate) fn marker_count(&self) -> usize {
        self.markers.len()
    }

    /// Forgets the markers recorded after the first `n` (backtracking).
    pub(crate) fn truncate_markers(&mut self, n: usize) {
        self.markers.truncate(n);
    }

    pub(crate) fn is_bind_marker(&self) -> bool {
        matches!(self.tok().kind, TokenKind::Question | TokenKind::Colon)
    }

    // --- statements -------------------------------------------------------------------

    /// One statement, with its own bind-marker numbering.
    fn statement(&mut self) -> Result<ParsedStatement> {
        self.markers.clear();
        let start = self.tok().start;
        let statement = self.statement_body()?;
        let end = self
            .pos
            .checked_sub(1)
            .and_then(|i| self.tokens.get(i))
            .map_or(start, |t| t.end);
        Ok(ParsedStatement {
            statement,
            bind_markers: std::mem::take(&mut self.markers),
            span: start..end,
        })
    }

    fn statement_body(&mut self) -> Result<Statement> {
        let t = self.tok();
        if t.kind != TokenKind::Ident {
            return Err(self.no_viable());
        }
        let kw = self.text_of(t).to_ascii_lowercase();
        match kw.as_str() {
            "select" => Ok(Statement::Select(self.select()?)),
            "insert" => Ok(Statement::Insert(self.insert()?)),
            "update" => Ok(Statement::Update(self.update()?)),
            "delete" => Ok(Statement::Delete(self.delete()?)),
            "begin" => Ok(Statement::Batch(self.batch()?)),
            "use" => {
                self.advance();
                Ok(Statement::Use(self.keyspace_name()?))
            }
            "truncate" => {
                self.advance();
                if !self.eat_kw("table") {
                    self.eat_kw("columnfamily");
                }
                Ok(Statement::Truncate(self.table_name()?))
            }
            "create" => self.create(),
            "alter" => self.alter(),
            "drop" => self.drop(),
            "grant" => self.grant(),
            "revoke" => self.revoke(),
            "list" => self.list(),
            _ => Err(self.no_viable()),
        }
    }
}

/// ANTLR's display name for a punctuation token kind.
fn token_name(kind: &TokenKind) -> String {
    use TokenKind as T;
    let s = match kind {
        T::Ident => "IDENT",
        T::QuotedName(_) => "QUOTED_NAME",
        T::Str(_) => "STRING_LITERAL",
        T::Integer => "INTEGER",
        T::Float => "FLOAT",
        T::Uuid => "UUID",
        T::Blob => "HEXNUMBER",
        T::Duration => "DURATION",
        T::LParen => "'('",
        T::RParen => "')'",
        T::LBracket => "'['",
        T::RBracket => "']'",
        T::LBrace => "'{'",
        T::RBrace => "'}'",
        T::Comma => "','",
        T::Semicolon => "';'",
        T::Dot => "'.'",
        T::Colon => "':'",
        T::Question => "QMARK",
        T::Star => "'*'",
        T::Eq => "'='",
        T::Neq => "'!='",
        T::Lt => "'<'",
        T::Lte => "'<='",
        T::Gt => "'>'",
        T::Gte => "'>='",
        T::Plus => "'+'",
        T::Minus => "'-'",
        T::Slash => "'/'",
        T::Percent => "'%'",
        T::Eof => "EOF",
    };
    s.to_string()
}
