//! The action log as venue admins read it (admin spec sections 2, 3 and 7): every audit
//! row the use cases write, paged, filtered by the acting user's e-mail and sorted.

use upstairs_domain::{FieldError, Permission};

use crate::context::{Actor, MAX_PAGE, MAX_PAGE_SIZE, blank_to_none, require};
use crate::error::EngineError;
use crate::model::*;
use crate::ports::*;
use crate::{Engine, Store};

impl<S: Store> Engine<S> {
    /// One page of the action log (the admin permission only). A page number below 0 or a
    /// size outside 1..=[`MAX_PAGE_SIZE`] is refused rather than read as another page.
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id))]
    pub async fn action_logs(
        &self,
        actor: &Actor,
        mut filter: ActionLogFilter,
    ) -> Result<Page<ActionLogEntry>, EngineError> {
        require(actor, Permission::Admin)?;
        let mut errors = Vec::new();
        if filter.page < 0 {
            errors.push(FieldError::new("page", "The page must be 0 or more"));
        }
        if !(1..=MAX_PAGE_SIZE).contains(&filter.size) {
            errors.push(FieldError::new("size", format!("The size must be from 1 to {MAX_PAGE_SIZE}")));
        }
        if !errors.is_empty() {
            return Err(EngineError::invalid_many(errors));
        }
        // Past the last page whose offset fits 64 bits there is nothing to read anyway.
        filter.page = filter.page.min(MAX_PAGE);
        filter.email = blank_to_none(filter.email).map(|e| e.to_lowercase());
        let mut tx = self.store.read().await?;
        Ok(tx.action_log_page(&filter).await?)
    }
}
