//! The FIX sessions screen's call (ADR 0025): every company with a FIX CompID, whether
//! its session is logged on, its sequence numbers both ways and its last message.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::Serialize;
use upstairs_engine::Store;
use upstairs_engine::model::FixSessionListed;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::AppState;
use crate::error::ApiResult;
use crate::error::responses::Forbidden;
use crate::extract::Auth;
use crate::openapi::ApiRouter;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new().route::<__path_fix_sessions, _, _>(fix_sessions::<S>)
}

/// Where a company's FIX session stands.
#[derive(Clone, Copy, Debug, Serialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FixSessionStateDto {
    /// Logged on now.
    LoggedOn,
    /// Logged on before, not now.
    LoggedOff,
    /// Never logged on.
    Never,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FixSessionDto {
    pub company_id: Uuid,
    pub company_name: String,
    pub fix_comp_id: String,
    pub state: FixSessionStateDto,
    /// The MsgSeqNum the venue sends next.
    pub next_sender_seq: i64,
    /// The MsgSeqNum the venue expects next.
    pub next_target_seq: i64,
    /// When the session last sent or received a message; null if never.
    #[schema(required = true)]
    pub last_message_at: Option<DateTime<Utc>>,
}

impl From<FixSessionListed> for FixSessionDto {
    fn from(l: FixSessionListed) -> Self {
        let state = match &l.session {
            Some(s) if s.logged_on => FixSessionStateDto::LoggedOn,
            Some(_) => FixSessionStateDto::LoggedOff,
            None => FixSessionStateDto::Never,
        };
        Self {
            company_id: l.company_id.0,
            company_name: l.company_name,
            fix_comp_id: l.fix_comp_id,
            state,
            next_sender_seq: l.session.as_ref().map_or(1, |s| s.next_sender_seq),
            next_target_seq: l.session.as_ref().map_or(1, |s| s.next_target_seq),
            last_message_at: l.session.and_then(|s| s.last_message_at),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FixSessionList {
    pub items: Vec<FixSessionDto>,
    /// Where the node that answered accepts FIX sessions; null when FIX is off on it
    /// (`UPSTAIRS_FIX_BIND` unset), so no session can log on there.
    #[schema(required = true)]
    pub acceptor: Option<FixAcceptorDto>,
}

/// A node's FIX 4.4 acceptor.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct FixAcceptorDto {
    /// The address it listens on, `host:port`.
    pub address: String,
    /// Whether the port speaks TLS.
    pub tls: bool,
    /// The venue's CompID: the TargetCompID every Logon names.
    pub comp_id: String,
}

/// Every company with a FIX CompID and its session, by company name (venue admins).
#[utoipa::path(get, path = "/api/admin/fix-sessions", tag = "admin",
    responses((status = 200, body = FixSessionList), Forbidden), security(("bearer" = [])))]
pub async fn fix_sessions<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
) -> ApiResult<Json<FixSessionList>> {
    let items = st.engine.fix.fix_sessions(&actor).await?.into_iter().map(Into::into).collect();
    Ok(Json(FixSessionList { items, acceptor: st.fix_acceptor.clone() }))
}
