//! Request and response bodies, in the spec's `snake_case` field names.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use upstairs_domain::{AutoAccept, Role, UiMetadataEntry};
use upstairs_engine::model::{LinkPurpose, UserView};
use utoipa::ToSchema;
use uuid::Uuid;

/// A user's role.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum RoleDto {
    Trader,
    UpstairsAdmin,
    CompanyAdmin,
    UpstairsSales,
    Sandbox,
}

impl From<RoleDto> for Role {
    fn from(r: RoleDto) -> Self {
        match r {
            RoleDto::Trader => Role::Trader,
            RoleDto::UpstairsAdmin => Role::UpstairsAdmin,
            RoleDto::CompanyAdmin => Role::CompanyAdmin,
            RoleDto::UpstairsSales => Role::UpstairsSales,
            RoleDto::Sandbox => Role::Sandbox,
        }
    }
}

impl From<Role> for RoleDto {
    fn from(r: Role) -> Self {
        match r {
            Role::Trader => RoleDto::Trader,
            Role::UpstairsAdmin => RoleDto::UpstairsAdmin,
            Role::CompanyAdmin => RoleDto::CompanyAdmin,
            Role::UpstairsSales => RoleDto::UpstairsSales,
            Role::Sandbox => RoleDto::Sandbox,
        }
    }
}

/// How match requests addressed to the user are answered when they do not act.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AutoAcceptDto {
    Instant,
    AcceptWithDelay,
    RejectWithDelay,
}

impl From<AutoAcceptDto> for AutoAccept {
    fn from(a: AutoAcceptDto) -> Self {
        match a {
            AutoAcceptDto::Instant => AutoAccept::Instant,
            AutoAcceptDto::AcceptWithDelay => AutoAccept::AcceptWithDelay,
            AutoAcceptDto::RejectWithDelay => AutoAccept::RejectWithDelay,
        }
    }
}

impl From<AutoAccept> for AutoAcceptDto {
    fn from(a: AutoAccept) -> Self {
        match a {
            AutoAccept::Instant => AutoAcceptDto::Instant,
            AutoAccept::AcceptWithDelay => AutoAcceptDto::AcceptWithDelay,
            AutoAccept::RejectWithDelay => AutoAcceptDto::RejectWithDelay,
        }
    }
}

/// One entry of the user's UI state; `TOOLTIPS` holds a list of `{key, read}`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UiMetadataDto {
    pub key: String,
    #[schema(value_type = Object)]
    pub value: serde_json::Value,
}

#[derive(Debug, Deserialize, ToSchema)]
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

/// A user as the profile, the session check and the admin lists show it.
#[derive(Debug, Serialize, ToSchema)]
pub struct UserDto {
    pub user_id: Uuid,
    pub company_id: Uuid,
    pub company_name: String,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub roles: Vec<RoleDto>,
    /// Null until the user has chosen a preference.
    pub auto_accept: Option<AutoAcceptDto>,
    pub parent_order_limit_multiplier: Option<i64>,
    pub ui_metadata: Vec<UiMetadataDto>,
    pub active: bool,
    pub verified: bool,
    pub fix_integration: bool,
    pub ems_trader_id: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<UserView> for UserDto {
    fn from(v: UserView) -> Self {
        let u = v.user;
        Self {
            user_id: u.user_id.0,
            company_id: u.company_id.0,
            company_name: v.company_name,
            email: u.email,
            first_name: u.first_name,
            last_name: u.last_name,
            roles: u.roles.into_iter().map(Into::into).collect(),
            auto_accept: u.auto_accept.map(Into::into),
            parent_order_limit_multiplier: u.parent_order_limit_multiplier,
            ui_metadata: u
                .ui_metadata
                .into_iter()
                .map(|e| UiMetadataDto {
                    key: e.key,
                    value: e.value,
                })
                .collect(),
            active: u.active,
            verified: u.verified,
            fix_integration: u.fix_integration,
            ems_trader_id: u.ems_trader_id,
            created_at: u.created_at,
            updated_at: u.updated_at,
        }
    }
}

/// What a user may change about themselves.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateUserRequest {
    pub auto_accept: Option<AutoAcceptDto>,
    /// Entries replace stored entries of the same key; other keys are kept.
    pub ui_metadata: Option<Vec<UiMetadataDto>>,
}

impl UpdateUserRequest {
    pub fn ui_metadata_entries(&self) -> Option<Vec<UiMetadataEntry>> {
        self.ui_metadata.as_ref().map(|v| {
            v.iter()
                .map(|e| UiMetadataEntry {
                    key: e.key.clone(),
                    value: e.value.clone(),
                })
                .collect()
        })
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateUserRequest {
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub company_id: Uuid,
    pub roles: Vec<RoleDto>,
    pub ems_trader_id: Option<String>,
    /// Greater than 0; -1 or null for none.
    pub parent_order_limit_multiplier: Option<i64>,
    pub fix_integration: Option<bool>,
    pub active: Option<bool>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct EmailRequest {
    pub email: String,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub struct PasswordResetQuery {
    /// Ask for a new account-activation link instead of a reset link.
    pub new_account_email: Option<bool>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct PasswordRequest {
    pub password: String,
}

#[derive(Clone, Copy, Debug, Serialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum LinkPurposeDto {
    Reset,
    Activation,
}

/// A link that can still be used.
#[derive(Debug, Serialize, ToSchema)]
pub struct LinkStatus {
    pub purpose: LinkPurposeDto,
}

impl From<LinkPurpose> for LinkStatus {
    fn from(p: LinkPurpose) -> Self {
        Self {
            purpose: match p {
                LinkPurpose::Reset => LinkPurposeDto::Reset,
                LinkPurpose::Activation => LinkPurposeDto::Activation,
            },
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
}
