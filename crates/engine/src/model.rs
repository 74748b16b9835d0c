//! Records the engine reads and writes through the store ports.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use upstairs_domain::{AutoAccept, CompanyId, Role, SessionId, UiMetadataEntry, UserId};
use uuid::Uuid;

#[derive(Clone, Debug, PartialEq)]
pub struct Company {
    pub company_id: CompanyId,
    pub name: String,
    pub full_name: String,
    /// Company types: `broker`, `liquidity-provider` (none for a trading firm).
    pub roles: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
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

/// One audit row: who did what to which entity.
#[derive(Clone, Debug, PartialEq)]
pub struct ActionLog {
    pub action_log_id: Uuid,
    pub entity: String,
    pub entity_id: Option<Uuid>,
    pub operation: String,
    pub user_id: Option<UserId>,
    pub created_at: DateTime<Utc>,
    pub details: Value,
}

/// What an e-mail says; the mail crate renders it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "template", rename_all = "snake_case")]
pub enum EmailTemplate {
    PasswordReset { first_name: String, link: String },
    AccountActivation { first_name: String, link: String },
}

impl EmailTemplate {
    /// The same message with its secret link removed, kept once the e-mail is sent.
    pub fn redacted(&self) -> Self {
        let r = || "[redacted after delivery]".to_owned();
        match self {
            EmailTemplate::PasswordReset { first_name, .. } => EmailTemplate::PasswordReset {
                first_name: first_name.clone(),
                link: r(),
            },
            EmailTemplate::AccountActivation { first_name, .. } => {
                EmailTemplate::AccountActivation {
                    first_name: first_name.clone(),
                    link: r(),
                }
            }
        }
    }
}

/// An e-mail ready to send. The Message-ID is fixed when it is queued, so a resend
/// after a crash carries the same one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutgoingEmail {
    pub message_id: String,
    pub to: String,
    pub template: EmailTemplate,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OutboxMessage {
    pub outbox_id: Uuid,
    pub email: OutgoingEmail,
    pub created_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
    pub attempts: i32,
    pub last_error: Option<String>,
}

/// A durable timer: a job of some kind that becomes due at a time.
#[derive(Clone, Debug, PartialEq)]
pub struct Timer {
    pub timer_id: Uuid,
    pub kind: String,
    pub payload: Value,
    pub due_at: DateTime<Utc>,
    /// At most one pending timer per key (e.g. the recurring clean-up).
    pub dedupe_key: Option<String>,
    pub attempts: i32,
}
