//! Users, their sessions and their links.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use upstairs_domain::{AutoAccept, CompanyId, Role, SessionId, UiMetadataEntry, UserId};

#[derive(Clone, Debug, Default)]
pub struct UserFilter {
    /// Case-insensitive part of the e-mail.
    pub email: Option<String>,
    pub company_id: Option<CompanyId>,
    pub active: Option<bool>,
    pub page: i64,
    pub size: i64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct User {
    pub user_id: UserId,
    pub company_id: CompanyId,
    /// Stored lower-cased; unique.
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub roles: Vec<Role>,
    /// PHC string of the argon2id hash; none until the account is activated.
    pub password_hash: Option<String>,
    pub active: bool,
    pub verified: bool,
    pub auto_accept: Option<AutoAccept>,
    pub parent_order_limit_multiplier: Option<i64>,
    pub ui_metadata: Vec<UiMetadataEntry>,
    pub fix_integration: bool,
    /// Their working orders are cancelled when their last connection drops (ADR 0043).
    pub cancel_on_disconnect: bool,
    pub ems_trader_id: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A user with the name of its company, as lists and the profile show it.
#[derive(Clone, Debug, PartialEq)]
pub struct UserView {
    pub user: User,
    pub company_name: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Session {
    pub session_id: SessionId,
    pub user_id: UserId,
    /// SHA-256 of the bearer token, hex.
    pub token_hash: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum LinkPurpose {
    Reset,
    Activation,
}

impl LinkPurpose {
    pub fn as_str(self) -> &'static str {
        match self {
            LinkPurpose::Reset => "RESET",
            LinkPurpose::Activation => "ACTIVATION",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "RESET" => Some(LinkPurpose::Reset),
            "ACTIVATION" => Some(LinkPurpose::Activation),
            _ => None,
        }
    }
}

/// A single-use e-mail link token (password reset or account activation).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkToken {
    /// SHA-256 of the token, hex.
    pub token_hash: String,
    pub user_id: UserId,
    pub purpose: LinkPurpose,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub used_at: Option<DateTime<Utc>>,
}

/// Who a presence lease (ADR 0043) keeps connected: a user's realtime sessions, or a
/// company's FIX session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Holder {
    User(UserId),
    Fix(CompanyId),
}

impl Holder {
    /// Its kind and id as the `presence` table keeps them.
    pub fn parts(self) -> (&'static str, uuid::Uuid) {
        match self {
            Holder::User(u) => ("USER", u.0),
            Holder::Fix(c) => ("FIX", c.0),
        }
    }

    pub fn from_parts(kind: &str, id: uuid::Uuid) -> Option<Self> {
        match kind {
            "USER" => Some(Holder::User(UserId(id))),
            "FIX" => Some(Holder::Fix(CompanyId(id))),
            _ => None,
        }
    }
}
