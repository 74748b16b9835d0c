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
    /// The venue's market-data session (ADR 0049) as the node holding it last said; null
    /// when none ever ran.
    #[schema(required = true)]
    pub market_data: Option<MarketDataSessionDto>,
}

/// The market-data session: the provider it dials, whether it is logged on (only while
/// the node holding it lives) and since when, its last price and what it subscribed to.
#[derive(Debug, Serialize, ToSchema)]
pub struct MarketDataSessionDto {
    /// The provider's FIX acceptor, `host:port`.
    pub provider: String,
    pub sender_comp_id: String,
    pub target_comp_id: String,
    /// `LOGGED_ON` or `LOGGED_OFF`.
    pub state: FixSessionStateDto,
    /// The node that holds it, or held it last.
    pub node_id: String,
    /// When it last logged on or off.
    pub since: DateTime<Utc>,
    /// When the provider's last price came; null since it logged on.
    #[schema(required = true)]
    pub last_price_at: Option<DateTime<Utc>>,
    /// How many symbols it subscribed to.
    pub symbols: i32,
    /// Instruments whose prices are stale now (ADR 0048).
    pub stale_instruments: i64,
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
    let market_data = st.engine.fix.market_data_session(&actor).await?.map(|(s, stale)| MarketDataSessionDto {
        provider: s.provider,
        sender_comp_id: s.sender_comp_id,
        target_comp_id: s.target_comp_id,
        state: if s.logged_on { FixSessionStateDto::LoggedOn } else { FixSessionStateDto::LoggedOff },
        node_id: s.node_id,
        since: s.since,
        last_price_at: s.last_price_at,
        symbols: s.symbols,
        stale_instruments: stale,
    });
    Ok(Json(FixSessionList { items, acceptor: st.fix_acceptor.as_deref().cloned(), market_data }))
}
