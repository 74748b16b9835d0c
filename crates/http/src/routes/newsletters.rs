//! The orders newsletter (admin spec sections 2, 3 and 7): recipient lists, and the
//! digest of resting interest they receive (previewed, then sent through the outbox).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use upstairs_domain::{InstrumentId, UserId};
use upstairs_engine::Store;
use upstairs_engine::model::{DigestInstrument, Newsletter, NewsletterRecipient};
use upstairs_engine::newsletters::{DigestPreview, NewNewsletter};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::AppState;
use crate::dto::decimal_schema;
use crate::error::ApiResult;
use crate::error::responses::{BadRequest, Conflict, Forbidden, KeyReused, NotFound};
use crate::extract::{ApiJson, ApiPath, Auth};
use crate::idempotency::{IdempotencyKeyHeader, KeyedJson};
use crate::openapi::ApiRouter;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new()
        .route::<__path_newsletters, _, _>(newsletters::<S>)
        .route::<__path_create_newsletter, _, _>(create_newsletter::<S>)
        .route::<__path_add_recipients, _, _>(add_recipients::<S>)
        .route::<__path_remove_recipient, _, _>(remove_recipient::<S>)
        .route::<__path_preview_newsletter, _, _>(preview_newsletter::<S>)
        .route::<__path_send_newsletter, _, _>(send_newsletter::<S>)
}

#[derive(Debug, Serialize, ToSchema)]
pub struct NewsletterRecipientDto {
    pub user_id: Uuid,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub company_name: String,
    pub roles: Vec<String>,
}

impl From<NewsletterRecipient> for NewsletterRecipientDto {
    fn from(r: NewsletterRecipient) -> Self {
        Self {
            user_id: r.user_id.0,
            email: r.email,
            first_name: r.first_name,
            last_name: r.last_name,
            company_name: r.company_name,
            roles: r.roles.iter().map(|r| r.as_str().to_owned()).collect(),
        }
    }
}

/// What a newsletter's digest covers.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewsletterFilterDto {
    /// These instruments only; every active instrument when null.
    #[schema(required = true)]
    pub instrument_ids: Option<Vec<Uuid>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct NewsletterDto {
    pub newsletter_id: Uuid,
    pub name: String,
    pub description: String,
    /// Null: the digest covers every active instrument.
    #[schema(required = true)]
    pub filter_criteria: Option<NewsletterFilterDto>,
    /// By e-mail.
    pub recipients: Vec<NewsletterRecipientDto>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// When the digest last went out; null if never.
    #[schema(required = true)]
    pub last_sent_at: Option<DateTime<Utc>>,
}

impl From<Newsletter> for NewsletterDto {
    fn from(n: Newsletter) -> Self {
        Self {
            newsletter_id: n.newsletter_id,
            name: n.name,
            description: n.description,
            filter_criteria: n.filter_criteria.and_then(|v| serde_json::from_value(v).ok()),
            recipients: n.recipients.into_iter().map(Into::into).collect(),
            created_at: n.created_at,
            updated_at: n.updated_at,
            last_sent_at: n.last_sent_at,
        }
    }
}

/// Every newsletter with its recipients, newest first (everyone with the admin drawer).
#[utoipa::path(get, path = "/api/admin/newsletters", tag = "admin",
    responses((status = 200, body = Vec<NewsletterDto>), Forbidden), security(("bearer" = [])))]
pub async fn newsletters<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
) -> ApiResult<Json<Vec<NewsletterDto>>> {
    Ok(Json(st.engine.newsletters.list(&actor).await?.into_iter().map(Into::into).collect()))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateNewsletterRequest {
    /// At least 2 characters.
    pub name: String,
    /// At least 2 characters.
    pub description: String,
    /// Beyond the spec: the digest's instruments (every active one when absent).
    #[serde(default)]
    pub filter_criteria: Option<NewsletterFilterDto>,
}

#[utoipa::path(post, path = "/api/admin/newsletters", tag = "admin", request_body = CreateNewsletterRequest,
    params(IdempotencyKeyHeader),
    responses((status = 201, body = NewsletterDto), BadRequest, Forbidden, KeyReused), security(("bearer" = [])))]
pub async fn create_newsletter<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    KeyedJson { body: req, key }: KeyedJson<CreateNewsletterRequest>,
) -> ApiResult<(StatusCode, Json<NewsletterDto>)> {
    let input = NewNewsletter {
        name: req.name,
        description: req.description,
        instrument_ids: req
            .filter_criteria
            .and_then(|f| f.instrument_ids)
            .map(|ids| ids.into_iter().map(InstrumentId).collect()),
    };
    let n = st.engine.newsletters.create_newsletter(&actor, input, key.as_ref()).await?;
    Ok((StatusCode::CREATED, Json(n.into())))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddRecipientsRequest {
    /// Users to add, 1 to 200; those already on the list stay as they are.
    pub recipient_ids: Vec<Uuid>,
}

/// Adds users to a newsletter's recipients.
#[utoipa::path(post, path = "/api/admin/newsletters/{newsletterId}/recipients", tag = "admin",
    request_body = AddRecipientsRequest, params(("newsletterId" = Uuid, Path)),
    responses((status = 200, body = NewsletterDto), BadRequest, Forbidden, NotFound), security(("bearer" = [])))]
pub async fn add_recipients<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(req): ApiJson<AddRecipientsRequest>,
) -> ApiResult<Json<NewsletterDto>> {
    let users = req.recipient_ids.into_iter().map(UserId).collect();
    Ok(Json(st.engine.newsletters.add_newsletter_recipients(&actor, id, users).await?.into()))
}

/// Removes one recipient.
#[utoipa::path(delete, path = "/api/admin/newsletters/{newsletterId}/recipients/{recipientId}", tag = "admin",
    params(("newsletterId" = Uuid, Path), ("recipientId" = Uuid, Path)),
    responses((status = 200, body = NewsletterDto), BadRequest, Forbidden, NotFound), security(("bearer" = [])))]
pub async fn remove_recipient<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath((id, user)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<Json<NewsletterDto>> {
    Ok(Json(st.engine.newsletters.remove_newsletter_recipient(&actor, id, UserId(user)).await?.into()))
}

/// A price level of the digest: the size shown at a price, no firm.
#[derive(Debug, Serialize, ToSchema)]
pub struct DigestLevelDto {
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub price: rust_decimal::Decimal,
    pub quantity: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DigestInstrumentDto {
    pub name: String,
    pub term: String,
    pub min_block: i64,
    /// Best (highest) first.
    pub bids: Vec<DigestLevelDto>,
    /// Best (lowest) first.
    pub offers: Vec<DigestLevelDto>,
}

impl From<DigestInstrument> for DigestInstrumentDto {
    fn from(i: DigestInstrument) -> Self {
        let side = |levels: Vec<upstairs_engine::model::DigestLevel>| {
            levels.into_iter().map(|l| DigestLevelDto { price: l.price.normalize(), quantity: l.quantity }).collect()
        };
        Self { name: i.name, term: i.term, min_block: i.min_block, bids: side(i.bids), offers: side(i.offers) }
    }
}

/// The digest e-mail as it would go out now.
#[derive(Debug, Serialize, ToSchema)]
pub struct NewsletterPreviewDto {
    pub subject: String,
    pub text: String,
    /// A whole HTML document (show it in a sandboxed frame).
    pub html: String,
    pub instruments: Vec<DigestInstrumentDto>,
    /// How many would receive it.
    pub recipients: usize,
}

impl From<DigestPreview> for NewsletterPreviewDto {
    fn from(p: DigestPreview) -> Self {
        Self {
            subject: p.preview.subject,
            text: p.preview.text,
            html: p.preview.html,
            instruments: p.instruments.into_iter().map(Into::into).collect(),
            recipients: p.recipients,
        }
    }
}

/// Previews the digest of resting interest (no firm named) as the recipients would get it.
#[utoipa::path(get, path = "/api/admin/newsletters/{newsletterId}/preview", tag = "admin",
    params(("newsletterId" = Uuid, Path)),
    responses((status = 200, body = NewsletterPreviewDto), BadRequest, Forbidden, NotFound),
    security(("bearer" = [])))]
pub async fn preview_newsletter<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<Uuid>,
) -> ApiResult<Json<NewsletterPreviewDto>> {
    Ok(Json(st.engine.newsletters.preview_newsletter(&actor, id).await?.into()))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct NewsletterSentDto {
    /// E-mails queued in the outbox, one per recipient.
    pub queued: usize,
}

/// Sends the digest to every recipient through the e-mail outbox.
#[utoipa::path(post, path = "/api/admin/newsletters/{newsletterId}/send", tag = "admin",
    params(("newsletterId" = Uuid, Path)),
    responses((status = 202, body = NewsletterSentDto), BadRequest, Forbidden, NotFound, Conflict),
    security(("bearer" = [])))]
pub async fn send_newsletter<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<Uuid>,
) -> ApiResult<(StatusCode, Json<NewsletterSentDto>)> {
    let queued = st.engine.newsletters.send_newsletter(&actor, id).await?;
    Ok((StatusCode::ACCEPTED, Json(NewsletterSentDto { queued })))
}
