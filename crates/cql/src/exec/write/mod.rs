//! INSERT, UPDATE, DELETE and BATCH: statements into engine mutations.
//!
//! One statement (or a whole BATCH) becomes one `Database::apply` call, so it is one
//! commitlog record: after a crash it is either wholly there or not at all. The write
//! timestamp is `USING TIMESTAMP`, else the request's default timestamp, else the node's
//! clock in microseconds; TTL is `USING TTL`, else the table's `default_time_to_live`.
//!
//! From the top down:
//! - [`statement`]: one INSERT / UPDATE / DELETE, planned, checked (conditional ones under
//!   the partition's lock) and applied; PREPARE's check of its shape;
//! - [`batch`](mod@batch): BATCH, logged or not, conditional on one partition or not;
//! - `insert`, `update`, `delete`: one statement kind each, into a `planned::Planned` write;
//! - `apply`: planned writes completed (list edits that need the current list) and applied;
//! - `condition`: IF clauses into the checks of [`super::lwt`];
//! - `assignment`: SET operations and deletions of columns and elements into cells;
//! - `keys`: partition and clustering keys from the restrictions or the INSERT's values;
//! - `using`: `USING TIMESTAMP` and `USING TTL`;
//! - `planned`: what a statement becomes before it is applied.

mod apply;
mod assignment;
pub mod batch;
mod condition;
mod delete;
mod insert;
mod keys;
mod planned;
pub mod statement;
mod update;
mod using;

pub use assignment::{check_element_deletion, check_set_element};
pub use batch::{batch, batch_statement};
pub use insert::InsertPlan;
pub use statement::{check_shape, insert, is_validation_error, modify};
