//! Sign-in and sign-out.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use upstairs_engine::Store;
use upstairs_engine::accounts::LoginInput;

use crate::AppState;
use crate::dto::{LoginRequest, TokenResponse};
use crate::error::{ApiResult, Problem};
use crate::extract::{ApiJson, Auth, Client};

/// Signs in; the token goes in `Authorization: Bearer …`.
#[utoipa::path(post, path = "/api/auth/login", tag = "auth", request_body = LoginRequest,
    responses((status = 200, body = TokenResponse), (status = 400, body = Problem),
              (status = 401, body = Problem), (status = 429, body = Problem)))]
pub async fn login<S: Store>(
    State(st): State<AppState<S>>,
    Client(client): Client,
    ApiJson(req): ApiJson<LoginRequest>,
) -> ApiResult<Json<TokenResponse>> {
    let token = st
        .engine
        .login(LoginInput { email: req.email, password: req.password, remember_me: req.remember_me }, &client)
        .await?;
    Ok(Json(TokenResponse { token }))
}

/// Signs out: revokes the session of the token used.
#[utoipa::path(delete, path = "/api/auth/session", tag = "auth",
    responses((status = 204), (status = 401, body = Problem)), security(("bearer" = [])))]
pub async fn logout<S: Store>(State(st): State<AppState<S>>, Auth(actor): Auth) -> ApiResult<StatusCode> {
    st.engine.logout(&actor).await?;
    Ok(StatusCode::NO_CONTENT)
}
