//! Restrictions on clustering columns (Cassandra's `ClusteringColumnRestrictions`): the
//! `=` / `IN` prefix, the slice after it, and what is left to filter; and the engine slice
//! they select.
//!
//! A multi-column slice `(c1, c2, …) > (v1, v2, …)` compares tuples in CQL value order, so
//! over columns of mixed ASC/DESC order it is not one contiguous range of the byte-ordered
//! clustering keys: it is the union over `i` of "`c1..ci-1` equal to `v1..vi-1` and `ci`
//! beyond `vi`", each a contiguous range under its prefix (see [`side_ranges`]).

use super::restriction::Restriction;
use super::{is_desc, Context, Restrictions, StatementKind};
use crate::error::{Error, Result};
use bytes::Bytes;
use cairn_engine::model::clustering::ClusteringLayout;
use cairn_engine::model::key::{after_prefix, ClusteringRange, Slice};
use cairn_engine::schema::{ColumnDef, ColumnKind, TableSchema};

/// A restriction on one clustering column or on a tuple of consecutive ones.
#[derive(Debug, Clone)]
struct Entry {
    /// Positions of the clustering columns it covers (consecutive, ascending).
    positions: Vec<usize>,
    /// Written as a multi-column relation.
    multi: bool,
    r: Restriction,
}

impl Entry {
    fn first(&self) -> usize {
        self.positions.first().copied().unwrap_or(0)
    }

    fn last(&self) -> usize {
        self.positions.last().copied().unwrap_or(0)
    }
}

/// The clustering restrictions of a WHERE clause, as they are added.
pub struct ClusteringRestrictions {
    columns: Vec<ColumnDef>,
    allow_filtering: bool,
    /// Disjoint, sorted by first position.
    entries: Vec<Entry>,
}

impl ClusteringRestrictions {
    /// No restriction yet on `schema`'s clustering columns.
    pub fn new(schema: &TableSchema, allow_filtering: bool) -> Self {
        ClusteringRestrictions {
            columns: schema.columns_of(ColumnKind::Clustering).cloned().collect(),
            allow_filtering,
            entries: Vec::new(),
        }
    }

    /// Whether nothing restricts a clustering column.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn name(&self, pos: usize) -> &str {
        self.columns.get(pos).map_or("?", |c| c.name.as_str())
    }

    /// Adds a restriction, merging it with any on the same columns, with Cassandra's checks
    /// of the order restrictions may come in without ALLOW FILTERING.
    pub fn add(&mut self, positions: Vec<usize>, multi: bool, r: Restriction) -> Result<()> {
        let new = Entry {
            positions,
            multi,
            r,
        };
        let overlapping: Vec<usize> = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.positions.iter().any(|p| new.positions.contains(p)))
            .map(|(i, _)| i)
            .collect();
        // Each restriction already on these columns merges with the new one (Cassandra's
        // `RestrictionSet.addRestriction`; the last merge covers the new columns).
        let mut merged = None;
        for &i in &overlapping {
            if let Some(existing) = self.entries.get(i) {
                merged = Some(self.merge(existing.clone(), new.clone())?);
            }
        }
        self.check_order(&new)?;
        match merged {
            None => self.entries.push(new),
            Some(m) => {
                let mut i = 0;
                self.entries.retain(|_| {
                    let keep = !overlapping.contains(&i);
                    i += 1;
                    keep
                });
                self.entries.push(m);
            }
        }
        self.entries.sort_by_key(Entry::first);
        Ok(())
    }

    fn merge(&self, existing: Entry, new: Entry) -> Result<Entry> {
        let common: Vec<&str> = existing
            .positions
            .iter()
            .filter(|p| new.positions.contains(p))
            .map(|p| self.name(*p))
            .collect();
        let names = common.join(" ,");
        if existing.r.is_slice()
            && new.r.is_slice()
            && (existing.multi || new.multi)
            && existing.first() != new.first()
        {
            let later = existing.first().max(new.first());
            return Err(Error::Invalid(format!(
                "Column \"{}\" cannot be restricted by two inequalities not starting with the same column",
                self.name(later)
            )));
        }
        let positions = if new.positions.len() > existing.positions.len() {
            new.positions.clone()
        } else {
            existing.positions.clone()
        };
        let first_name = self.name(existing.first()).to_string();
        Ok(Entry {
            positions,
            multi: existing.multi || new.multi,
            r: existing.r.merge(new.r, &names, &first_name)?,
        })
    }

    /// Cassandra's checks in `ClusteringColumnRestrictions.mergeWith`, against the
    /// restrictions known before `new`.
    fn check_order(&self, new: &Entry) -> Result<()> {
        if self.allow_filtering {
            return Ok(());
        }
        let Some(last) = self.entries.iter().max_by_key(|e| e.last()) else {
            return Ok(());
        };
        if last.r.is_slice() && new.first() > last.first() {
            return Err(Error::Invalid(format!(
                "Clustering column \"{}\" cannot be restricted (preceding column \"{}\" is restricted by a non-EQ relation)",
                self.name(new.first()),
                self.name(last.first())
            )));
        }
        if new.first() < last.first() && new.r.is_slice() {
            let next = self
                .entries
                .iter()
                .flat_map(|e| e.positions.iter().copied())
                .filter(|p| *p > new.first())
                .min()
                .unwrap_or(last.first());
            return Err(Error::Invalid(format!(
                "PRIMARY KEY column \"{}\" cannot be restricted (preceding column \"{}\" is restricted by a non-EQ relation)",
                self.name(next),
                self.name(new.first())
            )));
        }
        Ok(())
    }

    /// Works out the clustering prefixes, the slice and the filters, with Cassandra's rules
    /// for the statement kind.
    pub fn finish(self, _schema: &TableSchema, cx: Context, out: &mut Restrictions) -> Result<()> {
        out.has_clustering_restrictions = !self.entries.is_empty();
        out.ck_in = self
            .entries
            .iter()
            .any(|e| matches!(e.r, Restriction::In(_)));
        let has_slice = self.entries.iter().any(|e| e.r.is_slice());
        let has_contains = self
            .entries
            .iter()
            .any(|e| matches!(e.r, Restriction::Contains { .. }));
        // Which entries the read can use: `=` / `IN` from the first column on, then one slice.
        let mut position = 0;
        let mut needs_filtering = has_contains;
        for e in &self.entries {
            if matches!(e.r, Restriction::Contains { .. }) || e.first() != position {
                needs_filtering = true;
            } else if !e.r.is_slice() {
                position = e.last() + 1;
            }
        }
        if cx.kind == StatementKind::Update {
            if has_slice {
                return Err(Error::Invalid(
                    "Slice restrictions are not supported on the clustering columns in UPDATE statements".into(),
                ));
            }
            let restricted: usize = self.entries.iter().map(|e| e.positions.len()).sum();
            if !cx.static_only && restricted != self.columns.len() {
                let missing: Vec<&str> = (0..self.columns.len())
                    .filter(|p| !self.entries.iter().any(|e| e.positions.contains(p)))
                    .map(|p| self.name(p))
                    .collect();
                return Err(Error::Invalid(format!(
                    "Some clustering keys are missing: {}",
                    missing.join(", ")
                )));
            }
        } else {
            if has_contains && !cx.allow_filtering {
                return Err(Error::Invalid(
                    "Clustering columns can only be restricted with CONTAINS with a secondary index or filtering".into(),
                ));
            }
            if needs_filtering && !cx.allow_filtering {
                let restricted: Vec<usize> = self
                    .entries
                    .iter()
                    .flat_map(|e| e.positions.iter().copied())
                    .collect();
                for (i, p) in restricted.iter().enumerate() {
                    if *p != i {
                        return Err(Error::Invalid(format!(
                            "PRIMARY KEY column \"{}\" cannot be restricted as preceding column \"{}\" is not restricted",
                            self.name(*p),
                            self.name(i)
                        )));
                    }
                }
            }
        }

        let mut position = 0;
        let mut prefixes: Vec<Vec<Bytes>> = vec![Vec::new()];
        for e in self.entries {
            for p in &e.positions {
                if matches!(e.r, Restriction::Eq(_)) {
                    if let Some(c) = self.columns.get(*p) {
                        out.eq_columns.push(c.id);
                    }
                }
            }
            let usable = !matches!(e.r, Restriction::Contains { .. })
                && e.first() == position
                && out.slice_bounds.is_none();
            if !usable {
                into_filters(&self.columns, e, &mut out.filters)?;
                continue;
            }
            let (first, last) = (e.first(), e.last());
            match e.r {
                Restriction::Eq(values) => {
                    for p in &mut prefixes {
                        p.extend(values.iter().cloned());
                    }
                    position = last + 1;
                }
                Restriction::In(tuples) => {
                    if tuples.is_empty() {
                        out.empty = true;
                        out.no_clustering = true;
                    }
                    let mut next = Vec::with_capacity(prefixes.len() * tuples.len());
                    for p in &prefixes {
                        for t in &tuples {
                            let mut p2 = p.clone();
                            p2.extend(t.iter().cloned());
                            next.push(p2);
                        }
                    }
                    prefixes = next;
                    position = last + 1;
                }
                Restriction::Slice(b) => {
                    out.slice_bounds = Some(super::ClusteringSlice {
                        first,
                        start: b.start,
                        end: b.end,
                    });
                }
                Restriction::Contains { .. } => {}
            }
        }
        out.prefix_len = position;
        out.prefixes = if position == 0 { Vec::new() } else { prefixes };
        Ok(())
    }
}

/// A clustering restriction the read cannot use, as row filters (multi-column `IN` and
/// slices cannot be filtered, as in Cassandra).
fn into_filters(columns: &[ColumnDef], e: Entry, out: &mut Vec<super::Filter>) -> Result<()> {
    if e.multi {
        match e.r {
            Restriction::Eq(values) => {
                for (p, v) in e.positions.iter().zip(values) {
                    if let Some(c) = columns.get(*p) {
                        Restriction::Eq(vec![v]).into_filters(c, out)?;
                    }
                }
                return Ok(());
            }
            Restriction::In(_) => {
                return Err(Error::Invalid(
                    "Multicolumn IN filters are not supported".into(),
                ))
            }
            Restriction::Slice(_) => {
                return Err(Error::Invalid(
                    "Multi-column slice restrictions cannot be used for filtering.".into(),
                ))
            }
            Restriction::Contains { .. } => return Ok(()),
        }
    }
    match columns.get(e.first()) {
        Some(c) => e.r.into_filters(c, out),
        None => Ok(()),
    }
}

/// The engine slice selected by clustering `prefixes` (values of the leading columns; none
/// means no prefix) and an optional slice on the columns after them.
pub fn slice(
    layout: &ClusteringLayout,
    prefixes: &[Vec<Bytes>],
    bounds: Option<&super::ClusteringSlice>,
) -> Result<Slice> {
    let none = [Vec::new()];
    let prefixes: &[Vec<Bytes>] = if prefixes.is_empty() { &none } else { prefixes };
    let mut ranges = Vec::with_capacity(prefixes.len());
    for p in prefixes {
        let base = encode(layout, p, &[])?;
        let whole = if p.is_empty() {
            ClusteringRange::all()
        } else {
            ClusteringRange::prefix(&base)
        };
        let Some(b) = bounds else {
            ranges.push(whole);
            continue;
        };
        let starts = match &b.start {
            Some((vals, inc)) => side_ranges(layout, p, b.first, vals, *inc, true)?,
            None => vec![whole.clone()],
        };
        let ends = match &b.end {
            Some((vals, inc)) => side_ranges(layout, p, b.first, vals, *inc, false)?,
            None => vec![whole.clone()],
        };
        for s in &starts {
            for e in &ends {
                let r = ClusteringRange {
                    start: s.start.clone().max(e.start.clone()),
                    end: s.end.clone().min(e.end.clone()),
                };
                if !r.is_empty() {
                    ranges.push(r);
                }
            }
        }
    }
    Ok(Slice::new(ranges))
}

fn encode(layout: &ClusteringLayout, prefix: &[Bytes], more: &[Bytes]) -> Result<Vec<u8>> {
    let refs: Vec<&[u8]> = prefix.iter().chain(more).map(|b| b.as_ref()).collect();
    layout
        .encode_prefix(&refs)
        .map_err(|e| Error::Invalid(e.to_string()))
}

/// The ranges (under `prefix`) where the tuple of columns `first…` is beyond `vals`: greater
/// for a start bound, smaller for an end bound, the last component inclusive if asked.
fn side_ranges(
    layout: &ClusteringLayout,
    prefix: &[Bytes],
    first: usize,
    vals: &[Bytes],
    inclusive: bool,
    start: bool,
) -> Result<Vec<ClusteringRange>> {
    let mut out = Vec::with_capacity(vals.len());
    let mut parent: Vec<Bytes> = prefix.to_vec();
    for (i, v) in vals.iter().enumerate() {
        let p = encode(layout, &parent, &[])?;
        let q = encode(layout, &parent, std::slice::from_ref(v))?;
        let last = i + 1 == vals.len();
        let incl = last && inclusive;
        // A DESC column stores greater values at smaller byte positions.
        let greater = start != is_desc(layout, first + i);
        let parent_end = after_prefix(&p);
        let range = if greater {
            ClusteringRange {
                start: if incl {
                    Bytes::from(q)
                } else {
                    after_prefix(&q)
                },
                end: parent_end,
            }
        } else {
            ClusteringRange {
                start: Bytes::from(p),
                end: if incl {
                    after_prefix(&q)
                } else {
                    Bytes::from(q)
                },
            }
        };
        out.push(range);
        parent.push(v.clone());
    }
    Ok(out)
}
