//! Public settings, health and readiness.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use upstairs_engine::Store;
use utoipa::ToSchema;

use crate::AppState;
use crate::openapi::ApiRouter;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new().route::<__path_config, _, _>(config::<S>)
}

/// Settings the web app shows before sign-in (product name, support contacts).
#[utoipa::path(get, path = "/api/config", tag = "meta", responses((status = 200, body = PublicConfig)))]
pub async fn config<S: Store>(State(st): State<AppState<S>>) -> Json<PublicConfig> {
    let c = st.engine.config();
    Json(PublicConfig {
        product_name: c.product_name.clone(),
        support_email: c.support_email.clone(),
        support_phone: c.support_phone.clone(),
        always_open: c.calendar.always_open,
        disconnect_grace_seconds: c.disconnect_grace.as_secs(),
    })
}

/// The process is up.
pub async fn healthz() -> &'static str {
    "ok"
}

/// The database answers, the scheduler's lanes beat, the other nodes are heard.
pub async fn readyz<S: Store>(State(st): State<AppState<S>>) -> (StatusCode, String) {
    // A lane loop that has not shown life for longer than its longest job and some: dead or stuck.
    let limit = upstairs_engine::scheduler::JOB_LIMIT + std::time::Duration::from_secs(30);
    if let Some(lane) = st.engine.scheduler.stalled_lane(limit) {
        tracing::warn!(lane, "not ready: a scheduler lane stalled");
        return (StatusCode::SERVICE_UNAVAILABLE, format!("scheduler stalled ({lane} timers)"));
    }
    if !st.engine.hears_peers() {
        tracing::warn!("not ready: not hearing the other nodes");
        return (StatusCode::SERVICE_UNAVAILABLE, "not hearing the other nodes".into());
    }
    // A database that is gone makes the pool retry for its whole acquire timeout: the
    // probe answers within 2 s instead.
    match tokio::time::timeout(std::time::Duration::from_secs(2), st.engine.store().read()).await {
        Ok(Ok(_)) => (StatusCode::OK, "ready".into()),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "not ready");
            (StatusCode::SERVICE_UNAVAILABLE, "database unavailable".into())
        }
        Err(_) => {
            tracing::warn!("not ready: the database did not answer within 2 s");
            (StatusCode::SERVICE_UNAVAILABLE, "database unavailable".into())
        }
    }
}

/// Public settings the web app needs before sign-in.
#[derive(Debug, Serialize, ToSchema)]
pub struct PublicConfig {
    pub product_name: String,
    pub support_email: String,
    pub support_phone: String,
    /// The demo runs the venue always open.
    pub always_open: bool,
    /// How long a trader's connections may all be gone before a cancel on disconnect.
    pub disconnect_grace_seconds: u64,
}
