//! What a prepared statement works out once about its table, kept for its next executions.
//!
//! A prepared SELECT keeps its selection ([`super::select::Plan`]), a prepared INSERT where
//! each of its values goes ([`super::write::InsertPlan`]). Either is only valid for the
//! schema it was made from. A schema change gives the table a new `Arc<TableSchema>`, so the
//! cache keys its plan by that `Arc`'s identity: a plan made for an older schema is never
//! used, and because the cache holds the old `Arc`, its address cannot be reused meanwhile.

use crate::error::Result;
use cairn_engine::schema::TableSchema;
use parking_lot::RwLock;
use std::sync::Arc;

/// One plan of type `T`, tied to the schema it was made from.
pub struct PlanCache<T>(RwLock<Option<(Arc<TableSchema>, Arc<T>)>>);

impl<T> Default for PlanCache<T> {
    fn default() -> Self {
        PlanCache(RwLock::new(None))
    }
}

impl<T> PlanCache<T> {
    /// The plan for `schema`: the kept one if it was made from this very schema, else a new
    /// one from `make` (kept for next time when it succeeds; errors are not kept).
    pub fn get_or_plan(
        &self,
        schema: &Arc<TableSchema>,
        make: impl FnOnce() -> Result<T>,
    ) -> Result<Arc<T>> {
        if let Some((planned_for, plan)) = &*self.0.read() {
            if Arc::ptr_eq(planned_for, schema) {
                return Ok(Arc::clone(plan));
            }
        }
        let plan = Arc::new(make()?);
        *self.0.write() = Some((Arc::clone(schema), Arc::clone(&plan)));
        Ok(plan)
    }
}

impl<T> std::fmt::Debug for PlanCache<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PlanCache")
    }
}
