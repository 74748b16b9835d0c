//! The action log for venue admins (admin spec sections 2, 3 and 7): who did what to
//! which entity, paged, filtered by e-mail and sorted, each row with its details.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use upstairs_engine::Store;
use upstairs_engine::model::{ActionLogEntry, ActionLogFilter, ActionLogSort};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::AppState;
use crate::dto::{Page, SortOrder, whole};
use crate::error::ApiResult;
use crate::error::responses::{BadRequest, Forbidden};
use crate::extract::{ApiQuery, Auth};
use crate::openapi::ApiRouter;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new().route::<__path_action_logs, _, _>(action_logs::<S>)
}

/// Who acted: the user's e-mail and company.
#[derive(Debug, Serialize, ToSchema)]
pub struct ActionLogUserDto {
    pub user_id: Uuid,
    pub email: String,
    pub company_name: String,
}

/// One audit row.
#[derive(Debug, Serialize, ToSchema)]
pub struct ActionLogDto {
    pub action_log_id: Uuid,
    /// What kind of thing changed: `order`, `parent_order`, `user`, `company`, …
    pub entity: String,
    /// Which one, when the change is about one.
    #[schema(required = true)]
    pub entity_id: Option<Uuid>,
    /// What happened to it: `create`, `update`, `cancel`, `login`, …
    pub operation: String,
    /// Null for what the venue did by itself (the close, expiries, the demo's seed) and
    /// for requests made without a session (a password-reset request).
    #[schema(required = true)]
    pub user: Option<ActionLogUserDto>,
    pub created_at: DateTime<Utc>,
    /// What changed, as the use case recorded it (often `before` and `after`).
    pub details: serde_json::Value,
}

impl From<ActionLogEntry> for ActionLogDto {
    fn from(e: ActionLogEntry) -> Self {
        let user = match (e.log.user_id, e.email) {
            (Some(id), Some(email)) => {
                Some(ActionLogUserDto { user_id: id.0, email, company_name: e.company_name.unwrap_or_default() })
            }
            _ => None,
        };
        Self {
            action_log_id: e.log.action_log_id,
            entity: e.log.entity,
            entity_id: e.log.entity_id,
            operation: e.log.operation,
            user,
            created_at: e.log.created_at,
            details: e.log.details,
        }
    }
}

/// The columns the action log sorts by.
#[derive(Clone, Copy, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActionLogSortBy {
    CreatedAt,
    Entity,
    Operation,
    Email,
}

impl From<ActionLogSortBy> for ActionLogSort {
    fn from(s: ActionLogSortBy) -> Self {
        match s {
            ActionLogSortBy::CreatedAt => ActionLogSort::CreatedAt,
            ActionLogSortBy::Entity => ActionLogSort::Entity,
            ActionLogSortBy::Operation => ActionLogSort::Operation,
            ActionLogSortBy::Email => ActionLogSort::Email,
        }
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ActionLogListQuery {
    /// From 0 (default 0).
    #[serde(default, deserialize_with = "whole::query")]
    #[param(minimum = 0)]
    pub page: Option<i64>,
    /// Rows per page, 1 to 500 (default 50).
    #[serde(default, deserialize_with = "whole::query")]
    #[param(minimum = 1, maximum = 500)]
    pub size: Option<i64>,
    /// Part of the acting user's e-mail, in any case.
    pub email: Option<String>,
    /// What kind of thing changed (`order`, `parent_order`, `match_request`, `rfq`,
    /// `instrument`, `company`, `user`, `session`, …), exactly.
    pub entity: Option<String>,
    /// What happened to it (`create`, `cancel`, `band`, `login`, …), exactly.
    pub operation: Option<String>,
    /// The acting user's company.
    pub company_id: Option<Uuid>,
    /// Logged at or after this time.
    pub from: Option<DateTime<Utc>>,
    /// Logged before this time (after `from`).
    pub until: Option<DateTime<Utc>>,
    /// `false` leaves out the band moves the venue made by itself (a market-data feed,
    /// the demo's), so that people's actions stand out; an operator's stay. Default `true`.
    pub automatic_band_moves: Option<bool>,
    /// ASC or DESC; by default DESC (newest first) when sorting by created_at, ASC otherwise.
    #[param(inline)]
    pub order_by: Option<SortOrder>,
    /// The column to sort by (default created_at); ties are listed newest first.
    #[param(inline)]
    pub sort_by: Option<ActionLogSortBy>,
}

/// The action log: every change made on the venue, newest first unless sorted otherwise (venue admins).
#[utoipa::path(get, path = "/api/admin/action-logs", tag = "admin", params(ActionLogListQuery),
    responses((status = 200, body = Page<ActionLogDto>), BadRequest, Forbidden), security(("bearer" = [])))]
pub async fn action_logs<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<ActionLogListQuery>,
) -> ApiResult<Json<Page<ActionLogDto>>> {
    let sort: ActionLogSort = q.sort_by.map(Into::into).unwrap_or_default();
    let descending = match q.order_by {
        Some(o) => matches!(o, SortOrder::Desc),
        None => sort == ActionLogSort::CreatedAt,
    };
    let filter = ActionLogFilter {
        email: q.email,
        entity: q.entity,
        operation: q.operation,
        company_id: q.company_id.map(upstairs_domain::CompanyId),
        from: q.from,
        until: q.until,
        without_automatic_band_moves: q.automatic_band_moves == Some(false),
        sort,
        descending,
        page: q.page.unwrap_or(0),
        size: q.size.unwrap_or(50),
    };
    Ok(Json(st.engine.action_logs.list(&actor, filter).await?.into()))
}
