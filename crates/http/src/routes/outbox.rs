//! The e-mail outbox as venue admins see it: every message, whether and when it went
//! out, its attempts and last error, and (in the demo, whose files keep copies) its
//! links; elsewhere that a link was sent, never the link.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::Serialize;
use upstairs_domain::price::priced;
use upstairs_domain::quantity::grouped;
use upstairs_engine::Store;
use upstairs_engine::model::{EmailTemplate, OutboxMessage};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::AppState;
use crate::dto::{Page, PageQuery};
use crate::error::ApiResult;
use crate::error::responses::Forbidden;
use crate::extract::{ApiQuery, Auth};
use crate::openapi::ApiRouter;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new().route::<__path_outbox, _, _>(outbox::<S>)
}

#[derive(Clone, Copy, Debug, Serialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EmailKindDto {
    PasswordReset,
    AccountActivation,
    EmailChanged,
    TradeAcceptance,
    TradeFill,
    /// To the other side's broker: a broker declined the trade.
    TradeDeclined,
    TradeAllocated,
    OrdersDigest,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OutboxMessageDto {
    pub outbox_id: Uuid,
    pub message_id: String,
    pub to: String,
    pub kind: EmailKindDto,
    /// What it is about, in a line.
    pub summary: String,
    pub created_at: DateTime<Utc>,
    /// Null until delivered.
    pub sent_at: Option<DateTime<Utc>>,
    pub attempts: i32,
    pub last_error: Option<String>,
    /// The message's links, main one first: the public ones (sign-in, dashboard), and its
    /// secret ones (password reset, activation, a broker's answer) in the demo only.
    pub links: Vec<String>,
    /// The message carried a secret link that is not shown (outside the demo, or removed
    /// after delivery).
    pub links_hidden: bool,
}

/// What each e-mail is about, its quantities and prices as the screens write them.
impl From<OutboxMessage> for OutboxMessageDto {
    fn from(m: OutboxMessage) -> Self {
        use upstairs_engine::model::ConfirmationStep;
        let (kind, summary) = match &m.email.template {
            EmailTemplate::PasswordReset { first_name, .. } => {
                (EmailKindDto::PasswordReset, format!("Password reset for {first_name}"))
            }
            EmailTemplate::AccountActivation { first_name, .. } => {
                (EmailKindDto::AccountActivation, format!("Account activation for {first_name}"))
            }
            EmailTemplate::EmailChanged { first_name, .. } => {
                (EmailKindDto::EmailChanged, format!("E-mail change notice to {first_name}'s old address"))
            }
            EmailTemplate::OrdersDigest { newsletter, instruments, .. } => (
                EmailKindDto::OrdersDigest,
                format!(
                    "Orders digest '{newsletter}': {} instrument{} with resting interest",
                    instruments.len(),
                    if instruments.len() == 1 { "" } else { "s" }
                ),
            ),
            EmailTemplate::TradeDeclined { trade, .. } => (
                EmailKindDto::TradeDeclined,
                format!(
                    "{}: {} {} {} {} declined by a broker",
                    trade.broker_name,
                    trade.client_name,
                    trade.direction.as_str(),
                    grouped(trade.quantity),
                    trade.instrument_name
                ),
            ),
            EmailTemplate::TradeAllocated { trade } => (
                EmailKindDto::TradeAllocated,
                format!(
                    "{}: {} {} {} {} allocated to {} account{}",
                    trade.broker_name,
                    trade.client_name,
                    trade.direction.as_str(),
                    grouped(trade.quantity),
                    trade.instrument_name,
                    trade.allocations.len(),
                    if trade.allocations.len() == 1 { "" } else { "s" }
                ),
            ),
            EmailTemplate::TradeConfirmation { step, trade, .. } => {
                let kind = match step {
                    ConfirmationStep::Accept => EmailKindDto::TradeAcceptance,
                    ConfirmationStep::Fill => EmailKindDto::TradeFill,
                };
                let side = trade.direction.as_str();
                let what = format!(
                    "{}: {} {side} {} {} at {}",
                    trade.broker_name,
                    trade.client_name,
                    grouped(trade.quantity),
                    trade.instrument_name,
                    priced(trade.price, trade.tick_size)
                );
                (kind, what)
            }
        };
        let links = m.email.template.links().into_iter().filter(|l| l.starts_with("http")).map(str::to_owned).collect();
        let links_hidden = m.email.template.has_hidden_links();
        Self {
            outbox_id: m.outbox_id,
            message_id: m.email.message_id,
            to: m.email.to,
            kind,
            summary,
            created_at: m.created_at,
            sent_at: m.sent_at,
            attempts: m.attempts,
            last_error: m.last_error,
            links,
            links_hidden,
        }
    }
}

/// Every e-mail the venue queued, newest first (venue admins).
#[utoipa::path(get, path = "/api/admin/outbox", tag = "admin", params(PageQuery),
    responses((status = 200, body = Page<OutboxMessageDto>), Forbidden), security(("bearer" = [])))]
pub async fn outbox<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> ApiResult<Json<Page<OutboxMessageDto>>> {
    Ok(Json(st.engine.scheduler.outbox(&actor, q.page.unwrap_or(0), q.size.unwrap_or(50)).await?.into()))
}
