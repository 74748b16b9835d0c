//! A user's notifications: listed, marked read or archived, and pushed on
//! `/user/topic/notifications` the moment they are created or changed (ADR 0016).

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use upstairs_domain::NotificationId;
use upstairs_domain::match_request::MatchRequestState;
use upstairs_domain::notification::{NotificationType, Party, Requestor, requestor};
use upstairs_domain::order::Direction;
use upstairs_engine::Store;
use upstairs_engine::model::{Notification, Subject};
use upstairs_engine::notifications::NotificationChanges;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::AppState;
use crate::dto::{Page, nullable_decimal_schema, whole};
use crate::error::ApiResult;
use crate::error::responses::NotFound;
use crate::extract::{ApiJson, ApiPath, ApiQuery, Auth};
use crate::openapi::ApiRouter;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new()
        .route::<__path_notifications, _, _>(notifications::<S>)
        .route::<__path_change_notification, _, _>(change_notification::<S>)
}

/// One notification; also the payload pushed on `/user/topic/notifications`.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct NotificationDto {
    pub notification_id: Uuid,
    #[serde(rename = "type")]
    pub notification_type: NotificationType,
    /// The state of the match request when the notification last changed; for an RFQ
    /// the same names: `PENDING` while open, then `ACCEPTED`, `REJECTED`, `TIMED_OUT`
    /// or `CANCELLED`; `ACCEPTED` for an `ORDER_PRICE_CORRECTED`, `CANCELLED` for an
    /// `ORDER_CANCELLED_ON_DISCONNECT` (done, nothing to answer).
    pub status: MatchRequestState,
    pub instrument_id: Uuid,
    /// The match request it tells of; null for an RFQ's.
    pub order_match_request_id: Option<Uuid>,
    /// The RFQ it tells of (`RFQ_*` types); null for a match request's.
    pub rfq_id: Option<Uuid>,
    /// The child order whose limit price an operator corrected (`ORDER_PRICE_CORRECTED`),
    /// or which the venue cancelled when its owner's connection dropped
    /// (`ORDER_CANCELLED_ON_DISCONNECT`); null otherwise.
    pub order_id: Option<Uuid>,
    /// The corrected order's limit price before the correction; null otherwise.
    #[serde(with = "rust_decimal::serde::arbitrary_precision_option")]
    #[schema(schema_with = nullable_decimal_schema, required = true)]
    pub old_price: Option<rust_decimal::Decimal>,
    /// Its limit price after the correction; null otherwise.
    #[serde(with = "rust_decimal::serde::arbitrary_precision_option")]
    #[schema(schema_with = nullable_decimal_schema, required = true)]
    pub new_price: Option<rust_decimal::Decimal>,
    /// The recipient's side of the match request or RFQ.
    pub role: Party,
    /// Who made what it tells of: the recipient (`YOU`), another firm, never named
    /// (`COUNTERPARTY`), or the venue itself (`VENUE`: a price correction, a cancel on
    /// disconnect). ADR 0046.
    pub requestor: RequestorDto,
    /// The recipient's own side of the match request (a `MATCH_REQUEST_*` notification):
    /// the taker's is the request's, the responder's the other; the order's side for an
    /// `ORDER_CANCELLED_ON_DISCONNECT`; null otherwise.
    pub direction: Option<Direction>,
    /// The match request's quantity (the cancelled order's); null otherwise.
    pub quantity: Option<i64>,
    /// The match request's price (the cancelled order's); null otherwise.
    #[serde(with = "rust_decimal::serde::arbitrary_precision_option")]
    #[schema(schema_with = nullable_decimal_schema, required = true)]
    pub price: Option<rust_decimal::Decimal>,
    pub read: bool,
    pub archived: bool,
    pub created_at: DateTime<Utc>,
    /// When the match request times out (or timed out).
    pub expired_at: DateTime<Utc>,
}

/// A notification's requestor, as its recipient may know it.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct RequestorDto {
    pub party: Requestor,
}

impl From<&Notification> for NotificationDto {
    fn from(n: &Notification) -> Self {
        Self {
            notification_id: n.notification_id.0,
            notification_type: n.notification_type,
            status: n.status,
            instrument_id: n.instrument_id.0,
            order_match_request_id: match n.subject {
                Subject::MatchRequest(m) => Some(m.0),
                _ => None,
            },
            rfq_id: match n.subject {
                Subject::Rfq(r) => Some(r.0),
                _ => None,
            },
            order_id: match n.subject {
                Subject::PriceCorrection { order_id, .. } | Subject::Order(order_id) => Some(order_id.0),
                _ => None,
            },
            old_price: match n.subject {
                Subject::PriceCorrection { old_price, .. } => Some(old_price.normalize()),
                _ => None,
            },
            new_price: match n.subject {
                Subject::PriceCorrection { new_price, .. } => Some(new_price.normalize()),
                _ => None,
            },
            role: match n.role {
                Party::Requester => Party::Requester,
                Party::Responder => Party::Responder,
            },
            requestor: RequestorDto { party: requestor(n.notification_type, n.role) },
            direction: n.terms.map(|t| t.direction),
            quantity: n.terms.map(|t| t.quantity),
            price: n.terms.map(|t| t.price.normalize()),
            read: n.read,
            archived: n.archived,
            created_at: n.created_at,
            expired_at: n.expired_at,
        }
    }
}

impl From<Notification> for NotificationDto {
    fn from(n: Notification) -> Self {
        Self::from(&n)
    }
}

#[derive(Clone, Copy, Debug, Deserialize, ToSchema)]
pub enum OrderByDto {
    #[serde(rename = "ASC")]
    Asc,
    #[serde(rename = "DESC")]
    Desc,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct NotificationQuery {
    /// Only archived (`true`) or only not (`false`); both when absent.
    pub archived: Option<bool>,
    /// By creation time; default `DESC`.
    #[param(inline)]
    pub order_by: Option<OrderByDto>,
    /// From 0.
    #[serde(default, deserialize_with = "whole::query")]
    pub page: Option<i64>,
    #[serde(default, deserialize_with = "whole::query")]
    pub size: Option<i64>,
}

/// The caller's notifications, newest first unless `order_by=ASC`.
#[utoipa::path(get, path = "/api/notifications", tag = "notifications", params(NotificationQuery),
    responses((status = 200, body = Page<NotificationDto>)), security(("bearer" = [])))]
pub async fn notifications<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<NotificationQuery>,
) -> ApiResult<Json<Page<NotificationDto>>> {
    let newest_first = !matches!(q.order_by, Some(OrderByDto::Asc));
    let page = st
        .engine
        .notifications
        .list(&actor, q.archived, newest_first, q.page.unwrap_or(0), q.size.unwrap_or(50))
        .await?;
    Ok(Json(page.into()))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NotificationChange {
    pub read: Option<bool>,
    pub archived: Option<bool>,
}

/// Marks one of the caller's notifications read or archived.
#[utoipa::path(patch, path = "/api/notifications/{id}", tag = "notifications", request_body = NotificationChange,
    params(("id" = Uuid, Path)), responses((status = 200, body = NotificationDto), NotFound),
    security(("bearer" = [])))]
pub async fn change_notification<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<NotificationId>,
    ApiJson(req): ApiJson<NotificationChange>,
) -> ApiResult<Json<NotificationDto>> {
    let changes = NotificationChanges { read: req.read, archived: req.archived };
    Ok(Json(st.engine.notifications.change(&actor, id, changes).await?.into()))
}
