//! Sign-in and sign-out.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use upstairs_engine::Store;
use upstairs_engine::accounts::LoginInput;
use utoipa::ToSchema;

use crate::AppState;
use crate::error::ApiResult;
use crate::error::responses::{BadRequest, TooManyRequests};
use crate::extract::{ApiJson, Auth, Client};
use crate::openapi::ApiRouter;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new().route::<__path_login, _, _>(login::<S>).route::<__path_logout, _, _>(logout::<S>)
}

/// Signs in; the token goes in `Authorization: Bearer …`.
#[utoipa::path(post, path = "/api/auth/login", tag = "auth", request_body = LoginRequest,
    responses((status = 200, body = TokenResponse), BadRequest,
              (status = 401, description = "Wrong e-mail or password"), TooManyRequests))]
pub async fn login<S: Store>(
    State(st): State<AppState<S>>,
    Client(client): Client,
    ApiJson(req): ApiJson<LoginRequest>,
) -> ApiResult<Json<TokenResponse>> {
    let token = st
        .engine
        .accounts
        .login(LoginInput { email: req.email, password: req.password, remember_me: req.remember_me }, &client)
        .await?;
    Ok(Json(TokenResponse { token }))
}

/// Signs out: revokes the session of the token used.
#[utoipa::path(delete, path = "/api/auth/session", tag = "auth",
    responses((status = 204, description = "Signed out")), security(("bearer" = [])))]
pub async fn logout<S: Store>(State(st): State<AppState<S>>, Auth(actor): Auth) -> ApiResult<StatusCode> {
    st.engine.accounts.logout(&actor).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    pub email: String,
    pub password: String,
    /// Keeps the session for 30 days instead of 12 hours.
    #[serde(default, rename = "rememberMe")]
    pub remember_me: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TokenResponse {
    pub token: String,
}
