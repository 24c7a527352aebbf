//! Element and slice selection in a SELECT — `m[k]`, `s[a..b]`, on their own or inside
//! `writetime(…)` / `ttl(…)` — as Cassandra's `ElementsSelector` does it.
//!
//! - `c[k]` is a map's value for key `k` or a set's element `k` (null when absent); `c[a..b]`
//!   the entries (elements) between the bounds, both inclusive, either one open. Lists and
//!   non-collections are refused with Cassandra's texts ([`collections::element_selection`]).
//! - The key and bounds are terms of the collection's key type (`key(m)`, `value(s)` in
//!   messages and PREPARE results); a literal is checked when the statement is planned, a
//!   bind marker when it is bound. A null key is refused, an unset bound means "open".
//! - The write times and TTLs of a selection follow the cells it reads: of a non-frozen
//!   collection's element, that element's cell; of a slice, the cells in the slice (one per
//!   element, a list); of a frozen collection, the collection's one cell when the element
//!   (or a non-empty slice) is there, else null.

use super::super::TermContext;
use crate::ast::BindMarker;
use crate::ast::{ElementRef, Term};
use crate::error::{Error, Result};
use crate::values::collections::{self, element_path};
use crate::values::term::{marker_types, term_display};
use crate::values::{term_to_bytes, BoundValue};
use bytes::Bytes;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::Cell;

/// A planned `[k]` or `[a..b]` on a selected collection.
#[derive(Debug, Clone)]
pub struct ElementSel {
    /// The key or the bounds.
    pub part: ElementRef,
    /// The type of the key (and bounds).
    key_type: CqlType,
    /// The receiver the key's term is evaluated for (`key(m)`, `value(s)`).
    receiver: String,
    /// The selected collection's text, for errors (`m`).
    selected: String,
}

/// An element selection's key or bounds, bound for one execution.
pub enum Bound {
    /// `[k]`.
    Key(Bytes),
    /// `[a..b]` (`None`: open).
    Slice(Option<Bytes>, Option<Bytes>),
}

impl ElementSel {
    /// Plans `selected[part]` on a selection of type `ty` shown as `selected`: the
    /// selection, its result column's name and type.
    pub fn plan(
        ty: &CqlType,
        selected: &str,
        part: &ElementRef,
    ) -> Result<(ElementSel, String, CqlType)> {
        let (checked, label) = match part {
            ElementRef::Key(k) => (
                collections::element_selection(ty, selected)?,
                format!("{selected}[{}]", term_display(k)),
            ),
            ElementRef::Slice(from, to) => {
                let show = |t: &Option<Term>| t.as_ref().map(term_display).unwrap_or_default();
                (
                    collections::slice_selection(ty, selected)?,
                    format!("{selected}[{}..{}]", show(from), show(to)),
                )
            }
        };
        let sel = ElementSel {
            part: part.clone(),
            key_type: checked.key_type,
            receiver: checked.key_receiver,
            selected: selected.to_string(),
        };
        // A literal key is checked now, as Cassandra checks it when preparing.
        for t in sel.terms() {
            if marker_types(t, &sel.receiver, &sel.key_type).is_empty() {
                term_to_bytes(t, &sel.key_type, &sel.receiver, &Literal)?;
            }
        }
        Ok((sel, label, checked.result_type))
    }

    /// The key or bounds as written.
    fn terms(&self) -> impl Iterator<Item = &Term> {
        let (a, b) = match &self.part {
            ElementRef::Key(k) => (Some(k), None),
            ElementRef::Slice(from, to) => (from.as_ref(), to.as_ref()),
        };
        a.into_iter().chain(b)
    }

    /// The bind markers of the key or bounds: index, name and type, as PREPARE shows them.
    pub fn markers(&self) -> Vec<(usize, String, CqlType)> {
        self.terms()
            .flat_map(|t| marker_types(t, &self.receiver, &self.key_type))
            .collect()
    }

    /// The key or bounds for this execution.
    pub fn bind(&self, ctx: &dyn TermContext) -> Result<Bound> {
        let value = |t: &Term| term_to_bytes(t, &self.key_type, &self.receiver, ctx);
        Ok(match &self.part {
            ElementRef::Key(k) => Bound::Key(collections::element_key(value(k)?, &self.selected)?),
            ElementRef::Slice(from, to) => {
                let bound = |t: &Option<Term>| -> Result<Option<Bytes>> {
                    match t {
                        Some(t) => Ok(collections::slice_bound(value(t)?, &self.selected)?),
                        None => Ok(None),
                    }
                };
                Bound::Slice(bound(from)?, bound(to)?)
            }
        })
    }

    /// The selection out of a serialized collection of type `ty`.
    pub fn select(&self, ty: &CqlType, collection: &[u8], b: &Bound) -> Result<Option<Bytes>> {
        Ok(match b {
            Bound::Key(k) => collections::select_element(ty, collection, k)?,
            Bound::Slice(from, to) => {
                collections::select_slice(ty, collection, from.as_deref(), to.as_deref())?
            }
        })
    }

    /// Whether this is a slice (a slice of a non-frozen collection has one time per
    /// element).
    pub fn is_slice(&self) -> bool {
        matches!(self.part, ElementRef::Slice(..))
    }

    /// The cells of a non-frozen collection of type `ty` (path, cell, in path order) that
    /// the selection reads.
    pub fn cells<'a>(
        &self,
        ty: &CqlType,
        cells: impl Iterator<Item = (&'a Bytes, &'a Cell)>,
        b: &Bound,
    ) -> Result<Vec<&'a Cell>> {
        // Paths are the elements' byte-comparable encodings: they sort as the elements.
        let path = |v: &Bytes| element_path(ty, v).map_err(Error::from);
        Ok(match b {
            Bound::Key(k) => {
                let p = path(k)?;
                cells.filter(|(q, _)| **q == p).map(|(_, c)| c).collect()
            }
            Bound::Slice(from, to) => {
                let from = from.as_ref().map(path).transpose()?;
                let to = to.as_ref().map(path).transpose()?;
                cells
                    .filter(|(q, _)| {
                        from.as_ref().is_none_or(|f| *q >= f) && to.as_ref().is_none_or(|t| *q <= t)
                    })
                    .map(|(_, c)| c)
                    .collect()
            }
        })
    }
}

/// Whether a serialized frozen collection holds no element (its count is 0).
pub fn is_empty_collection(v: &[u8]) -> bool {
    v.get(..4) == Some(&[0, 0, 0, 0][..])
}

/// The context a literal key is checked in when planning: it has no markers, and a
/// function of the clock in it is checked with the clock now.
struct Literal;

impl TermContext for Literal {
    fn bind(&self, _: &BindMarker) -> Option<BoundValue> {
        None
    }

    fn now_micros(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as i64)
    }
}
