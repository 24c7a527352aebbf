//! The shared pieces of the clustering encoding: tags and item markers (see the parent
//! module's docs) and the error constructor. Cassandra's order (which the encoding reproduces), UUID
//! timestamps and number helpers are the types room's ([`crate::model::types`]). The framing of serialized collections and tuples is the types room's
//! ([`crate::model::types::framing`]).

use crate::error::Error;

pub(super) const TAG_EMPTY: u8 = 0x00;
pub(super) const TAG_VALUE: u8 = 0x01;
pub(super) const TAG_NEG: u8 = 0x01;
pub(super) const TAG_ZERO: u8 = 0x02;
pub(super) const TAG_POS: u8 = 0x03;

/// Item markers of collection and tuple bodies (see the module docs).
pub(super) const ITEM_END: u8 = 0x01;
pub(super) const ITEM_NULL: u8 = 0x02;
pub(super) const ITEM_VALUE: u8 = 0x03;

/// Largest magnitude length written in a single length byte (see the varint body).
pub(super) const SHORT_LEN_MAX: usize = 0xF7;

pub(super) fn invalid(type_name: &'static str, reason: &'static str) -> Error {
    Error::InvalidValue { type_name, reason }
}
