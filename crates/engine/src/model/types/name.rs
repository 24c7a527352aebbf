//! Type names: [`CqlType::native`] (the one table of native names, with `varchar`) and
//! [`CqlType::parse`] for whole names such as `map<text, frozen<list<int>>>`.
//!
//! Invariant: `CqlType::parse(&t.full_name()) == Some(t)` for every type (and
//! `t.full_name() == t.name()` for types without user types); parsing is case-insensitive
//! and tolerates whitespace, as CQL does. User types are read only in their full spelling
//! (`udt<"ks"."name", "field" type, …>`, names double-quoted and kept as written).

use super::{CqlType, UserType, NATIVE_TYPES};

impl CqlType {
    /// The native type named `word` (lower case; `varchar` is `text`).
    pub fn native(word: &str) -> Option<CqlType> {
        if word == "varchar" {
            return Some(CqlType::Text);
        }
        NATIVE_TYPES
            .iter()
            .find(|t| t.static_name() == word)
            .cloned()
    }

    /// Parses a CQL type name (case-insensitive, whitespace tolerant).
    pub fn parse(s: &str) -> Option<CqlType> {
        let mut p = Parser {
            s: s.as_bytes(),
            pos: 0,
        };
        let t = p.parse_type()?;
        p.skip_ws();
        (p.pos == p.s.len()).then_some(t)
    }
}

/// Recursive-descent parser for type names.
struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self
            .s
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }

    fn ident(&mut self) -> Option<String> {
        self.skip_ws();
        let start = self.pos;
        while self
            .s
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            self.pos += 1;
        }
        let word = self.s.get(start..self.pos)?;
        if word.is_empty() {
            return None;
        }
        Some(String::from_utf8_lossy(word).to_ascii_lowercase())
    }

    fn expect(&mut self, c: u8) -> Option<()> {
        self.skip_ws();
        if self.s.get(self.pos) == Some(&c) {
            self.pos += 1;
            Some(())
        } else {
            None
        }
    }

    /// A double-quoted name (`""` stands for one quote), case kept.
    fn quoted(&mut self) -> Option<String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            let b = *self.s.get(self.pos)?;
            self.pos += 1;
            if b == b'"' {
                if self.s.get(self.pos) == Some(&b'"') {
                    self.pos += 1;
                } else {
                    break;
                }
            }
            out.push(b);
        }
        String::from_utf8(out).ok()
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }

    fn parse_type(&mut self) -> Option<CqlType> {
        let word = self.ident()?;
        match word.as_str() {
            "list" | "set" | "frozen" => {
                self.expect(b'<')?;
                let inner = Box::new(self.parse_type()?);
                self.expect(b'>')?;
                Some(match word.as_str() {
                    "list" => CqlType::List(inner),
                    "set" => CqlType::Set(inner),
                    _ => CqlType::Frozen(inner),
                })
            }
            "map" => {
                self.expect(b'<')?;
                let k = self.parse_type()?;
                self.expect(b',')?;
                let v = self.parse_type()?;
                self.expect(b'>')?;
                Some(CqlType::Map(Box::new(k), Box::new(v)))
            }
            "tuple" => {
                self.expect(b'<')?;
                let mut items = vec![self.parse_type()?];
                while self.peek() == Some(b',') {
                    self.expect(b',')?;
                    items.push(self.parse_type()?);
                }
                self.expect(b'>')?;
                Some(CqlType::Tuple(items))
            }
            "udt" => {
                self.expect(b'<')?;
                let keyspace = self.quoted()?;
                self.expect(b'.')?;
                let name = self.quoted()?;
                let (mut field_names, mut field_types) = (Vec::new(), Vec::new());
                while self.peek() == Some(b',') {
                    self.expect(b',')?;
                    field_names.push(self.quoted()?);
                    field_types.push(self.parse_type()?);
                }
                self.expect(b'>')?;
                Some(CqlType::Udt(Box::new(UserType {
                    keyspace,
                    name,
                    field_names,
                    field_types,
                })))
            }
            other => CqlType::native(other),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in [
            "int",
            "text",
            "frozen<list<int>>",
            "map<text, int>",
            "tuple<int, text>",
            "set<frozen<tuple<uuid, timeuuid, varint>>>",
            "map<frozen<map<int, blob>>, list<decimal>>",
        ] {
            let t = CqlType::parse(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(t.name(), name);
        }
        for t in NATIVE_TYPES {
            assert_eq!(CqlType::parse(&t.name()), Some(t.clone()));
            assert_eq!(CqlType::native(&t.name()), Some(t.clone()));
        }
    }

    #[test]
    fn parse_is_lenient_about_case_and_space() {
        assert_eq!(CqlType::parse(" VARCHAR "), Some(CqlType::Text));
        assert_eq!(
            CqlType::parse("Map < Text ,Frozen<List<INT>> >"),
            Some(CqlType::Map(
                Box::new(CqlType::Text),
                Box::new(CqlType::Frozen(Box::new(CqlType::List(Box::new(
                    CqlType::Int
                )))))
            ))
        );
        for bad in [
            "",
            "integer",
            "list<int",
            "map<int>",
            "list<int>>",
            "tuple<>",
            "int int",
        ] {
            assert_eq!(CqlType::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn user_types_round_trip_in_their_full_spelling() {
        let inner = CqlType::Udt(Box::new(UserType {
            keyspace: "ks".into(),
            name: "Phone \"x\"".into(),
            field_names: vec!["n".into()],
            field_types: vec![CqlType::Int],
        }));
        let t = CqlType::Frozen(Box::new(CqlType::Udt(Box::new(UserType {
            keyspace: "ks".into(),
            name: "addr".into(),
            field_names: vec!["street".into(), "Phones".into()],
            field_types: vec![
                CqlType::Text,
                CqlType::List(Box::new(CqlType::Frozen(Box::new(inner)))),
            ],
        }))));
        assert_eq!(t.name(), "frozen<addr>");
        assert_eq!(
            t.full_name(),
            r#"frozen<udt<"ks"."addr", "street" text, "Phones" list<frozen<udt<"ks"."Phone ""x""", "n" int>>>>>"#
        );
        assert_eq!(CqlType::parse(&t.full_name()), Some(t.clone()));
        // The short name alone cannot be read back: it does not say what the fields are.
        assert_eq!(CqlType::parse("frozen<addr>"), None);
        for bad in [
            r#"udt<"ks">"#,
            r#"udt<"ks"."a", "f">"#,
            r#"udt<"ks"."a", "f" int"#,
        ] {
            assert_eq!(CqlType::parse(bad), None, "{bad:?}");
        }
    }
}
