//! Newsletters and the orders digest.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use upstairs_domain::{CompanyId, Role, UserId};
use uuid::Uuid;

/// A named list of recipients for the orders digest (admin spec sections 2 and 3).
#[derive(Clone, Debug, PartialEq)]
pub struct Newsletter {
    pub newsletter_id: Uuid,
    /// The company whose admins keep it; `None` for the venue's own (ADR 0021).
    pub company_id: Option<CompanyId>,
    pub name: String,
    pub description: String,
    /// What the digest covers: `{"instrument_ids": [...]}`, or `None` for every active
    /// instrument.
    pub filter_criteria: Option<serde_json::Value>,
    pub recipients: Vec<NewsletterRecipient>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub last_sent_at: Option<DateTime<Utc>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NewsletterRecipient {
    pub user_id: UserId,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub company_name: String,
    pub roles: Vec<Role>,
}

/// Resting interest on one instrument, as the orders digest shows it: per side, the
/// price levels and what each shows, with no firm named (an iceberg counts as its
/// minimum block, as in the book).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DigestInstrument {
    pub name: String,
    pub term: String,
    pub min_block: i64,
    /// The instrument's tick, to write prices with its decimals (absent in digests queued
    /// before it was kept).
    #[serde(default)]
    pub tick_size: Option<Decimal>,
    /// Best first: highest bid first, lowest offer first.
    pub bids: Vec<DigestLevel>,
    pub offers: Vec<DigestLevel>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DigestLevel {
    #[serde(with = "rust_decimal::serde::str")]
    pub price: Decimal,
    pub quantity: i64,
}

/// An e-mail as it will read, before it is sent.
#[derive(Clone, Debug, PartialEq)]
pub struct EmailPreview {
    pub subject: String,
    pub text: String,
    pub html: String,
}
