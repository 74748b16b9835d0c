//! The session user, own preferences, user creation, and the password links.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use upstairs_domain::{AutoAccept, Role, UiMetadataEntry};
use upstairs_domain::{CompanyId, UserId};
use upstairs_engine::Store;
use upstairs_engine::model::{LinkPurpose, UserView};
use upstairs_engine::users::NewUser;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::AppState;
use crate::dto::*;
use crate::error::ApiResult;
use crate::error::responses::{BadRequest, Conflict, Forbidden, Gone, KeyReused, NotFound, TooManyRequests};
use crate::extract::{ApiJson, ApiPath, ApiQuery, Auth, Client};
use crate::idempotency::{IdempotencyKeyHeader, KeyedJson};
use crate::openapi::ApiRouter;

pub fn router<S: Store>() -> ApiRouter<S> {
    ApiRouter::new()
        .route::<__path_me, _, _>(me::<S>)
        .route::<__path_update, _, _>(update::<S>)
        .route::<__path_create, _, _>(create::<S>)
        .route::<__path_request_link, _, _>(request_link::<S>)
        .route::<__path_check_link, _, _>(check_link::<S>)
        .route::<__path_set_password, _, _>(set_password::<S>)
        .route::<__path_admin_list, _, _>(admin_list::<S>)
}

/// The signed-in user (the session check).
#[utoipa::path(get, path = "/api/users/me", tag = "users",
    responses((status = 200, body = UserDto)), security(("bearer" = [])))]
pub async fn me<S: Store>(State(st): State<AppState<S>>, Auth(actor): Auth) -> ApiResult<Json<UserDto>> {
    Ok(Json(with_score(&st, actor.view()).await?))
}

/// A user's DTO with its reliability score.
async fn with_score<S: Store>(st: &AppState<S>, view: upstairs_engine::model::UserView) -> ApiResult<UserDto> {
    let id = view.user.user_id;
    let score = st.engine.counterparties.reliability_scores(&[id]).await?.get(&id).copied().unwrap_or(100);
    Ok(UserDto::new(view, score))
}

/// Changes a user: one's own preferences, or (admins, company admins) the user's fields.
#[utoipa::path(patch, path = "/api/users/{id}", tag = "users", request_body = UpdateUserRequest,
    params(("id" = Uuid, Path, description = "user id")),
    responses((status = 200, body = UserDto), BadRequest, Forbidden, NotFound, Conflict), security(("bearer" = [])))]
pub async fn update<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiPath(id): ApiPath<UserId>,
    ApiJson(req): ApiJson<UpdateUserRequest>,
) -> ApiResult<Json<UserDto>> {
    let view = st.engine.users.update_user(&actor, id, req.into()).await?;
    Ok(Json(with_score(&st, view).await?))
}

/// Creates a user without a password and e-mails an activation link.
#[utoipa::path(post, path = "/api/users", tag = "users", request_body = CreateUserRequest,
    params(IdempotencyKeyHeader),
    responses((status = 201, body = UserDto), BadRequest, Forbidden, NotFound, Conflict, KeyReused),
    security(("bearer" = [])))]
pub async fn create<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    KeyedJson { body: req, key }: KeyedJson<CreateUserRequest>,
) -> ApiResult<(StatusCode, Json<UserDto>)> {
    let input = NewUser {
        email: req.email,
        first_name: req.first_name,
        last_name: req.last_name,
        company_id: CompanyId(req.company_id),
        roles: req.roles.into_iter().collect(),
        ems_trader_id: req.ems_trader_id,
        // The admin form sends -1 for an empty multiplier.
        parent_order_limit_multiplier: req.parent_order_limit_multiplier.filter(|m| *m != -1),
        fix_integration: req.fix_integration.unwrap_or(false),
        active: req.active.unwrap_or(true),
    };
    let user = st.engine.users.create_user(&actor, input, key.as_ref()).await?;
    Ok((StatusCode::CREATED, Json(with_score(&st, user).await?)))
}

/// Asks for a password-reset link (or, with `new_account_email=true`, a new activation
/// link). Answers the same whether or not the e-mail has an account.
#[utoipa::path(post, path = "/api/users/password-reset", tag = "users", request_body = EmailRequest,
    params(PasswordResetQuery),
    responses((status = 204, description = "Sent if the e-mail has an account"), BadRequest, TooManyRequests))]
pub async fn request_link<S: Store>(
    State(st): State<AppState<S>>,
    Client(client): Client,
    ApiQuery(q): ApiQuery<PasswordResetQuery>,
    ApiJson(req): ApiJson<EmailRequest>,
) -> ApiResult<StatusCode> {
    st.engine.accounts.request_password_link(&req.email, q.new_account_email.unwrap_or(false), &client).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Whether a reset or activation link can still be used.
#[utoipa::path(get, path = "/api/users/password-reset/{hash}", tag = "users",
    params(("hash" = String, Path, description = "the token from the e-mail link"), LinkPurposeQuery),
    responses((status = 200, body = LinkStatus), Gone))]
pub async fn check_link<S: Store>(
    State(st): State<AppState<S>>,
    ApiPath(hash): ApiPath<String>,
    ApiQuery(q): ApiQuery<LinkPurposeQuery>,
) -> ApiResult<Json<LinkStatus>> {
    Ok(Json(st.engine.accounts.check_link(&hash, q.purpose).await?.into()))
}

/// Sets a new password through a link; signs the user out everywhere.
#[utoipa::path(post, path = "/api/users/password-reset/{hash}", tag = "users", request_body = PasswordRequest,
    params(("hash" = String, Path, description = "the token from the e-mail link")),
    responses((status = 204, description = "Password set"), BadRequest, Gone))]
pub async fn set_password<S: Store>(
    State(st): State<AppState<S>>,
    ApiPath(hash): ApiPath<String>,
    ApiJson(req): ApiJson<PasswordRequest>,
) -> ApiResult<StatusCode> {
    st.engine.accounts.set_password_with_link(&hash, &req.password, req.purpose).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Users for the admin panel (venue staff see all; a company admin its own company's).
#[utoipa::path(get, path = "/api/admin/users", tag = "admin", params(UserListQuery),
    responses((status = 200, body = Page<UserDto>), BadRequest, Forbidden),
    security(("bearer" = [])))]
pub async fn admin_list<S: Store>(
    State(st): State<AppState<S>>,
    Auth(actor): Auth,
    ApiQuery(q): ApiQuery<UserListQuery>,
) -> ApiResult<Json<Page<UserDto>>> {
    let filter = upstairs_engine::model::UserFilter {
        email: q.email.filter(|e| !e.trim().is_empty()),
        company_id: q.company_id.map(CompanyId),
        active: q.active,
        page: q.page.unwrap_or(0),
        size: q.size.unwrap_or(200),
    };
    let page = st.engine.users.admin_users(&actor, filter).await?;
    let ids: Vec<UserId> = page.items.iter().map(|v| v.user.user_id).collect();
    let scores = st.engine.counterparties.reliability_scores(&ids).await?;
    let items = page.items.into_iter().map(|v| {
        let score = scores.get(&v.user.user_id).copied().unwrap_or(100);
        UserDto::new(v, score)
    });
    Ok(Json(Page { items: items.collect(), total_items: page.total_items }))
}

/// One entry of the user's UI state; `TOOLTIPS` holds a list of `{key, read}`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UiMetadataDto {
    pub key: String,
    pub value: serde_json::Value,
}

/// A user as the profile, the session check and the admin lists show it.
#[derive(Debug, Serialize, ToSchema)]
pub struct UserDto {
    pub user_id: Uuid,
    pub company_id: Uuid,
    pub company_name: String,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub roles: Vec<Role>,
    /// Null until the user has chosen a preference.
    #[schema(required = true)]
    pub auto_accept: Option<AutoAccept>,
    #[schema(required = true)]
    pub parent_order_limit_multiplier: Option<i64>,
    pub ui_metadata: Vec<UiMetadataDto>,
    pub active: bool,
    pub verified: bool,
    pub fix_integration: bool,
    /// The user's choice: their working child orders are cancelled, and their pending
    /// match requests ended, when their last realtime connection has been gone for the
    /// venue's grace period. Off unless chosen.
    pub cancel_on_disconnect: bool,
    #[schema(required = true)]
    pub ems_trader_id: Option<String>,
    /// Accepted ÷ (accepted + rejected + timed out) of the match requests received in the
    /// last 30 days, in percent; 100 with no history.
    pub reliability_score: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl UserDto {
    pub fn new(v: UserView, reliability_score: i64) -> Self {
        let u = v.user;
        Self {
            user_id: u.user_id.0,
            company_id: u.company_id.0,
            company_name: v.company_name,
            email: u.email,
            first_name: u.first_name,
            last_name: u.last_name,
            roles: u.roles,
            auto_accept: u.auto_accept,
            parent_order_limit_multiplier: u.parent_order_limit_multiplier,
            ui_metadata: u.ui_metadata.into_iter().map(|e| UiMetadataDto { key: e.key, value: e.value }).collect(),
            active: u.active,
            verified: u.verified,
            fix_integration: u.fix_integration,
            cancel_on_disconnect: u.cancel_on_disconnect,
            ems_trader_id: u.ems_trader_id,
            reliability_score,
            created_at: u.created_at,
            updated_at: u.updated_at,
        }
    }
}

/// Changes to a user: its own preferences (`auto_accept`, `cancel_on_disconnect`,
/// `ui_metadata`) by the user,
/// the other fields by an admin (or a company admin for its company's users).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateUserRequest {
    pub auto_accept: Option<AutoAccept>,
    /// The user's own: pull their working orders when their connection drops.
    pub cancel_on_disconnect: Option<bool>,
    /// Entries replace stored entries of the same key; other keys are kept.
    pub ui_metadata: Option<Vec<UiMetadataDto>>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub email: Option<String>,
    pub roles: Option<Vec<Role>>,
    pub active: Option<bool>,
    pub fix_integration: Option<bool>,
    #[serde(default, deserialize_with = "double_option")]
    pub ems_trader_id: Option<Option<String>>,
    /// Greater than 0; -1 or null for none.
    #[serde(default, deserialize_with = "whole::double_option")]
    pub parent_order_limit_multiplier: Option<Option<i64>>,
    /// May be sent, but must be the user's current company.
    pub company_id: Option<Uuid>,
}

impl From<UpdateUserRequest> for upstairs_engine::users::UserChanges {
    fn from(r: UpdateUserRequest) -> Self {
        Self {
            first_name: r.first_name,
            last_name: r.last_name,
            email: r.email,
            roles: r.roles,
            active: r.active,
            fix_integration: r.fix_integration,
            ems_trader_id: r.ems_trader_id,
            parent_order_limit_multiplier: r.parent_order_limit_multiplier,
            company_id: r.company_id.map(upstairs_domain::CompanyId),
            auto_accept: r.auto_accept,
            cancel_on_disconnect: r.cancel_on_disconnect,
            ui_metadata: r
                .ui_metadata
                .map(|v| v.into_iter().map(|e| UiMetadataEntry { key: e.key, value: e.value }).collect()),
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateUserRequest {
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub company_id: Uuid,
    pub roles: Vec<Role>,
    pub ems_trader_id: Option<String>,
    /// Greater than 0; -1 or null for none.
    #[serde(default, deserialize_with = "whole::option")]
    pub parent_order_limit_multiplier: Option<i64>,
    pub fix_integration: Option<bool>,
    pub active: Option<bool>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EmailRequest {
    pub email: String,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PasswordResetQuery {
    /// Ask for a new account-activation link instead of a reset link.
    pub new_account_email: Option<bool>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordRequest {
    pub password: String,
    /// The page's kind of link: a link made for the other purpose is refused (410).
    #[serde(default)]
    pub purpose: Option<LinkPurpose>,
}

/// `?purpose=`: the page's kind of link.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct LinkPurposeQuery {
    /// A link made for the other purpose answers 410.
    pub purpose: Option<LinkPurpose>,
}

/// A link that can still be used.
#[derive(Debug, Serialize, ToSchema)]
pub struct LinkStatus {
    pub purpose: LinkPurpose,
}

impl From<LinkPurpose> for LinkStatus {
    fn from(p: LinkPurpose) -> Self {
        Self { purpose: p }
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct UserListQuery {
    #[serde(default, deserialize_with = "whole::query")]
    pub page: Option<i64>,
    #[serde(default, deserialize_with = "whole::query")]
    pub size: Option<i64>,
    /// Part of the e-mail.
    pub email: Option<String>,
    pub company_id: Option<Uuid>,
    pub active: Option<bool>,
}
