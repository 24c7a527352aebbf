//! The CQL lexer: turns query text into tokens with positions.
//!
//! Token shapes follow Cassandra's `Lexer.g`:
//!
//! - identifiers `[a-zA-Z][a-zA-Z0-9_]*` — keywords are *not* separate token kinds here; the
//!   parser recognises them by (case-insensitive) text, which is what lets unreserved
//!   keywords double as identifiers without a second lexer mode;
//! - quoted names `"..."` with `""` for a quote (case kept), strings `'...'` with `''` for
//!   a quote, and `$$...$$` strings;
//! - integers, floats (`1.5`, `1e10`, `2.5E-3`), uuids (`8-4-4-4-12` hex digits), blobs
//!   (`0x...`), and durations (`1h30m`, `3mo2w`, `P1DT2H`, `P2W`, `P0001-02-03T04:05:06`);
//! - punctuation. A minus sign is always its own token: the parser folds `-` followed by a
//!   number into a negative literal, so that `c = c - 1` and `c = -1` both work without the
//!   lexer having to know the context (Cassandra's lexer glues `-1` together and then has
//!   to special-case counter updates).
//!
//! Comments (`-- ...`, `// ...`, `/* ... */`) and whitespace are skipped. Positions are a
//! byte offset plus a 1-based line and a 0-based character column, as Cassandra reports
//! them.

use crate::error::{Error, Result, SyntaxError};

/// What a token is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenKind {
    /// An unquoted word: identifier or keyword; its text is the source slice.
    Ident,
    /// A `"quoted"` identifier, unescaped, case kept.
    QuotedName(String),
    /// A string literal (`'...'` or `$$...$$`), unescaped.
    Str(String),
    /// Decimal digits.
    Integer,
    /// A floating-point literal with a fraction or an exponent.
    Float,
    /// A uuid literal.
    Uuid,
    /// A `0x...` blob literal.
    Blob,
    /// A duration literal.
    Duration,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Semicolon,
    Dot,
    Colon,
    Question,
    Star,
    Eq,
    Neq,
    Lt,
    Lte,
    Gt,
    Gte,
    Plus,
    Minus,
    Slash,
    Percent,
    /// End of input.
    Eof,
}

/// One token and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The token's kind (and unescaped value for names and strings).
    pub kind: TokenKind,
    /// Byte offset of the first character.
    pub start: usize,
    /// Byte offset just after the last character.
    pub end: usize,
    /// 1-based line.
    pub line: u32,
    /// 0-based character column.
    pub column: u32,
}

/// Splits `src` into tokens; the last token is always [`TokenKind::Eof`].
pub fn tokenize(src: &str) -> Result<Vec<Token>> {
    let mut lx = Lexer {
        src,
        pos: 0,
        line: 1,
        column: 0,
    };
    let mut out = Vec::new();
    loop {
        let tok = lx.next_token()?;
        let eof = tok.kind == TokenKind::Eof;
        out.push(tok);
        if eof {
            return Ok(out);
        }
    }
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: u32,
    column: u32,
}

fn is_ident_continue(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        self.src.get(self.pos..).and_then(|s| s.chars().next())
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.src.get(self.pos..).and_then(|s| s.chars().nth(n))
    }

    fn rest(&self) -> &str {
        self.src.get(self.pos..).unwrap_or("")
    }

    /// Consumes one character, keeping line and column up to date.
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.column = 0;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    /// Consumes `n` bytes (which must end on a character boundary and hold no newline).
    fn bump_bytes(&mut self, n: usize) {
        let end = self.pos + n;
        while self.pos < end && self.bump().is_some() {}
    }

    fn error_here(&self, message: String) -> Error {
        Error::Syntax(SyntaxError {
            line: self.line,
            column: self.column,
            offset: self.pos,
            message,
        })
    }

    fn skip_trivia(&mut self) -> Result<()> {
        loop {
            let rest = self.rest();
            if rest.starts_with("--") || rest.starts_with("//") {
                while let Some(c) = self.peek() {
                    if c == '\n' {
                        break;
                    }
                    self.bump();
                }
            } else if rest.starts_with("/*") {
                self.bump_bytes(2);
                loop {
                    if self.rest().starts_with("*/") {
                        self.bump_bytes(2);
                        break;
                    }
                    if self.bump().is_none() {
                        return Err(
                            self.error_here("mismatched character '<EOF>' expecting '*'".into())
                        );
                    }
                }
            } else if self.peek().is_some_and(char::is_whitespace) {
                self.bump();
            } else {
                return Ok(());
            }
        }
    }

    fn next_token(&mut self) -> Result<Token> {
        self.skip_trivia()?;
        let (start, line, column) = (self.pos, self.line, self.column);
        let kind = self.scan()?;
        Ok(Token {
            kind,
            start,
            end: self.pos,
            line,
            column,
        })
    }

    fn scan(&mut self) -> Result<TokenKind> {
        use TokenKind as T;
        let Some(c) = self.peek() else {
            return Ok(T::Eof);
        };
        if c.is_ascii_hexdigit() {
            if let Some(len) = uuid_len(self.rest()) {
                self.bump_bytes(len);
                return Ok(T::Uuid);
            }
        }
        if c == '0' && matches!(self.peek_at(1), Some('x' | 'X')) {
            self.bump_bytes(2);
            while self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                self.bump();
            }
            return Ok(T::Blob);
        }
        if c.is_ascii_digit() {
            return Ok(self.number());
        }
        if c.is_ascii_alphabetic() {
            if c == 'P' {
                if let Some(len) = iso_alternative_duration_len(self.rest()) {
                    self.bump_bytes(len);
                    return Ok(T::Duration);
                }
            }
            let start = self.pos;
            while self.peek().is_some_and(is_ident_continue) {
                self.bump();
            }
            let word = self.src.get(start..self.pos).unwrap_or("");
            return Ok(if is_iso_duration(word) {
                T::Duration
            } else {
                T::Ident
            });
        }
        match c {
            '\'' => return self.quoted_string(),
            '"' => return self.quoted_name(),
            '$' if self.peek_at(1) == Some('$') => return self.dollar_string(),
            _ => {}
        }
        let two = |a: char, b: char| c == a && self.peek_at(1) == Some(b);
        let (kind, len) = if two('!', '=') {
            (T::Neq, 2)
        } else if two('<', '=') {
            (T::Lte, 2)
        } else if two('>', '=') {
            (T::Gte, 2)
        } else {
            let k = match c {
                '(' => T::LParen,
                ')' => T::RParen,
                '[' => T::LBracket,
                ']' => T::RBracket,
                '{' => T::LBrace,
                '}' => T::RBrace,
                ',' => T::Comma,
                ';' => T::Semicolon,
                '.' => T::Dot,
                ':' => T::Colon,
                '?' => T::Question,
                '*' => T::Star,
                '=' => T::Eq,
                '<' => T::Lt,
                '>' => T::Gt,
                '+' => T::Plus,
                '-' => T::Minus,
                '/' => T::Slash,
                '%' => T::Percent,
                other => {
                    return Err(self.error_here(format!(
                        "no viable alternative at character '{}'",
                        other.escape_default()
                    )))
                }
            };
            (k, 1)
        };
        self.bump_bytes(len);
        Ok(kind)
    }

    /// Integer, float or duration starting with a digit.
    fn number(&mut self) -> TokenKind {
        let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
        let int_len = digits(self.rest());
        let rest = self.rest();
        let after = rest.get(int_len..).unwrap_or("");
        // Fraction: Cassandra's FLOAT allows `1.` (no digits after the point).
        let mut len = int_len;
        let mut is_float = false;
        if after.starts_with('.') && !after.starts_with("..") {
            len += 1 + digits(after.get(1..).unwrap_or(""));
            is_float = true;
        }
        let tail = rest.get(len..).unwrap_or("");
        if let Some(exp) = exponent_len(tail) {
            len += exp;
            is_float = true;
        }
        if !is_float {
            if let Some(dlen) = duration_units_len(rest) {
                self.bump_bytes(dlen);
                return TokenKind::Duration;
            }
        }
        self.bump_bytes(len);
        if is_float {
            TokenKind::Float
        } else {
            TokenKind::Integer
        }
    }

    fn quoted_string(&mut self) -> Result<TokenKind> {
        self.bump();
        let mut value = String::new();
        loop {
            match self.bump() {
                None => {
                    return Err(self.error_here("mismatched character '<EOF>' expecting '''".into()))
                }
                Some('\'') => {
                    if self.peek() == Some('\'') {
                        self.bump();
                        value.push('\'');
                    } else {
                        return Ok(TokenKind::Str(value));
                    }
                }
                Some(c) => value.push(c),
            }
        }
    }

    fn dollar_string(&mut self) -> Result<TokenKind> {
        self.bump_bytes(2);
        let body_start = self.pos;
        loop {
            if self.rest().starts_with("$$") {
                let value = self.src.get(body_start..self.pos).unwrap_or("").to_string();
                self.bump_bytes(2);
                return Ok(TokenKind::Str(value));
            }
            if self.bump().is_none() {
                return Err(self.error_here("mismatched character '<EOF>' expecting '$'".into()));
            }
        }
    }

    fn quoted_name(&mut self) -> Result<TokenKind> {
        let (line, column, offset) = (self.line, self.column, self.pos);
        self.bump();
        let mut value = String::new();
        loop {
            match self.bump() {
                None => {
                    return Err(
                        self.error_here("mismatched character '<EOF>' expecting '\"'".into())
                    )
                }
                Some('"') => {
                    if self.peek() == Some('"') {
                        self.bump();
                        value.push('"');
                    } else if value.is_empty() {
                        // Cassandra's QUOTED_NAME needs at least one character.
                        return Err(Error::Syntax(SyntaxError {
                            line,
                            column,
                            offset,
                            message: "no viable alternative at character '\"'".into(),
                        }));
                    } else {
                        return Ok(TokenKind::QuotedName(value));
                    }
                }
                Some(c) => value.push(c),
            }
        }
    }
}

/// Length of a uuid at the start of `s` (36), if one is there and is not glued to more
/// identifier characters.
fn uuid_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let head = b.get(..36)?;
    for (i, &c) in head.iter().enumerate() {
        let ok = if matches!(i, 8 | 13 | 18 | 23) {
            c == b'-'
        } else {
            c.is_ascii_hexdigit()
        };
        if !ok {
            return None;
        }
    }
    match b.get(36) {
        Some(&c) if is_ident_continue(c as char) => None,
        _ => Some(36),
    }
}

/// Length of an exponent (`e10`, `E-3`) at the start of `s`.
fn exponent_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    if !matches!(b.first(), Some(b'e' | b'E')) {
        return None;
    }
    let sign = usize::from(matches!(b.get(1), Some(b'+' | b'-')));
    let digits = b
        .get(1 + sign..)?
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    (digits > 0).then_some(1 + sign + digits)
}

/// Duration units, longest first where one is a prefix of another.
const DURATION_UNITS: &[&str] = &["mo", "ms", "us", "µs", "ns", "y", "w", "d", "h", "m", "s"];

/// Length of a `12h30m`-style duration at the start of `s` (which starts with a digit).
fn duration_units_len(s: &str) -> Option<usize> {
    let mut pos = 0;
    let mut groups = 0;
    loop {
        let rest = s.get(pos..)?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            break;
        }
        let after = rest.get(digits..)?;
        let unit = DURATION_UNITS.iter().find(|u| {
            after
                .get(..u.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(u))
        })?;
        pos += digits + unit.len();
        groups += 1;
    }
    let next = s.get(pos..).and_then(|r| r.chars().next());
    (groups > 0 && !next.is_some_and(is_ident_continue)).then_some(pos)
}

/// Whether an identifier-shaped word is an ISO 8601 duration (`P1Y2M3DT4H5M6S`, `P2W`).
fn is_iso_duration(word: &str) -> bool {
    let Some(body) = word.strip_prefix('P') else {
        return false;
    };
    let b = body.as_bytes();
    // `P<n>W`
    if let Some(n) = b.strip_suffix(b"W") {
        if !n.is_empty() && n.iter().all(u8::is_ascii_digit) {
            return true;
        }
    }
    // Designated components in order, each optional: `nY nM nD` then `T nH nM nS`.
    let mut i = 0;
    let mut components = 0;
    let mut designated = |i: &mut usize, designators: &[u8]| {
        for &des in designators {
            let rest = b.get(*i..).unwrap_or(&[]);
            let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
            if digits > 0 && rest.get(digits) == Some(&des) {
                *i += digits + 1;
                components += 1;
            }
        }
    };
    designated(&mut i, b"YMD");
    if b.get(i) == Some(&b'T') {
        i += 1;
        designated(&mut i, b"HMS");
    }
    i == b.len() && components > 0
}

/// Length of an ISO 8601 "alternative format" duration `P0001-02-03T04:05:06`.
fn iso_alternative_duration_len(s: &str) -> Option<usize> {
    const SHAPE: &[u8] = b"P0000-00-00T00:00:00";
    let b = s.as_bytes();
    let head = b.get(..SHAPE.len())?;
    for (&c, &want) in head.iter().zip(SHAPE) {
        let ok = if want == b'0' {
            c.is_ascii_digit()
        } else {
            c == want
        };
        if !ok {
            return None;
        }
    }
    match b.get(SHAPE.len()) {
        Some(&c) if is_ident_continue(c as char) => None,
        _ => Some(SHAPE.len()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(TokenKind, String)> {
        tokenize(src)
            .unwrap()
            .into_iter()
            .map(|t| (t.kind, src[t.start..t.end].to_string()))
            .collect()
    }

    #[test]
    fn literals() {
        use TokenKind as T;
        let cases: &[(&str, T)] = &[
            ("123", T::Integer),
            ("1.5", T::Float),
            ("1.", T::Float),
            ("1e10", T::Float),
            ("2.5E-3", T::Float),
            ("0xCAFE", T::Blob),
            ("0x", T::Blob),
            ("550e8400-e29b-41d4-a716-446655440000", T::Uuid),
            ("ABCDEF00-0000-1000-8000-000000000000", T::Uuid),
            ("1h30m", T::Duration),
            ("3mo2w", T::Duration),
            ("10ms", T::Duration),
            ("7µs", T::Duration),
            ("1h2µs", T::Duration),
            ("1Y2MO", T::Duration),
            ("P1DT2H", T::Duration),
            ("P2W", T::Duration),
            ("P0001-02-03T04:05:06", T::Duration),
            ("P", T::Ident),
            ("PT", T::Ident),
            ("P1H", T::Ident), // hours need the `T`
            ("p1d", T::Ident),
            ("abc_1", T::Ident),
        ];
        for (src, kind) in cases {
            let got = kinds(src);
            assert_eq!(got.len(), 2, "{src}: {got:?}");
            assert_eq!(&got[0].0, kind, "{src}");
            assert_eq!(got[0].1, *src);
        }
    }

    #[test]
    fn strings_names_and_comments() {
        let toks = kinds("'it''s' $$a$b$$ \"Quoted\"\"x\" -- c\n/* block\n */ x // end");
        assert_eq!(toks[0].0, TokenKind::Str("it's".into()));
        assert_eq!(toks[1].0, TokenKind::Str("a$b".into()));
        assert_eq!(toks[2].0, TokenKind::QuotedName("Quoted\"x".into()));
        assert_eq!(toks[3], (TokenKind::Ident, "x".into()));
        assert_eq!(toks[4].0, TokenKind::Eof);
    }

    #[test]
    fn positions() {
        let toks = tokenize("SELECT\n  'é', x").unwrap();
        let x = &toks[3];
        assert_eq!((x.line, x.column), (2, 7));
        let e = tokenize("a 'unterminated").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1:15 mismatched character '<EOF>' expecting '''"
        );
        let e = tokenize("a\n  #").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2:2 no viable alternative at character '#'"
        );
    }

    #[test]
    fn multibyte_duration_unit_ends_where_it_should() {
        let toks = kinds("7µs x");
        assert_eq!(toks[0], (TokenKind::Duration, "7µs".into()));
        assert_eq!(toks[1], (TokenKind::Ident, "x".into()));
    }

    #[test]
    fn operators_and_minus() {
        let ks: Vec<TokenKind> = kinds("a<=b>=c!=d-1").into_iter().map(|t| t.0).collect();
        use TokenKind as T;
        assert_eq!(
            ks,
            vec![
                T::Ident,
                T::Lte,
                T::Ident,
                T::Gte,
                T::Ident,
                T::Neq,
                T::Ident,
                T::Minus,
                T::Integer,
                T::Eof
            ]
        );
    }
}
