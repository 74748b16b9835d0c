//! E-mails: what they say and the outbox that sends them.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use upstairs_domain::order::Direction;
use uuid::Uuid;

use super::*;

/// What an e-mail says; the mail crate renders it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "template", rename_all = "snake_case")]
pub enum EmailTemplate {
    PasswordReset {
        first_name: String,
        link: String,
    },
    AccountActivation {
        first_name: String,
        link: String,
    },
    /// To the old address: the account's e-mail address was changed (`link`: sign in).
    EmailChanged {
        first_name: String,
        link: String,
    },
    /// A broker is asked to accept (then to confirm the fill of) a trade of its client.
    TradeConfirmation {
        step: ConfirmationStep,
        trade: TradeDetails,
        confirm_link: String,
        decline_link: String,
    },
    /// The other side's broker: a broker declined this trade at `step`, so it does not go
    /// ahead, and the links sent for it no longer work. It carries no link.
    TradeDeclined {
        step: ConfirmationStep,
        trade: TradeDetails,
    },
    /// The client's trader allocated the trade (again): the accounts and the give-up.
    TradeAllocated {
        trade: TradeDetails,
    },
    /// The orders digest of a newsletter: resting interest per instrument, no firm named.
    OrdersDigest {
        first_name: String,
        newsletter: String,
        description: String,
        instruments: Vec<DigestInstrument>,
        dashboard_link: String,
    },
}

/// What a broker's e-mail tells about a trade: its client's side only, and the broker
/// of the other side (brokers cross the trade between them); never the other firm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TradeDetails {
    pub broker_name: String,
    pub client_name: String,
    pub trader_name: String,
    pub instrument_name: String,
    pub direction: Direction,
    pub quantity: i64,
    pub price: Decimal,
    /// The instrument's tick, to write the price with its decimals (absent in e-mails
    /// queued before it was kept).
    #[serde(default)]
    pub tick_size: Option<Decimal>,
    pub counterparty_broker_name: String,
    pub matched_at: DateTime<Utc>,
    /// How the client's trader split it across the client's accounts, when they had
    /// (ADR 0045; absent in e-mails queued before allocations were kept).
    #[serde(default)]
    pub allocations: Vec<AllocationLine>,
    /// The broker it is given up to for clearing.
    #[serde(default)]
    pub give_up_broker_name: Option<String>,
}

/// What replaces a secret link in the copy kept after delivery.
pub const REDACTED_LINK: &str = "[redacted after delivery]";

/// What replaces a secret link where the outbox is shown outside the demo.
pub const HIDDEN_LINK: &str = "[link hidden]";

impl EmailTemplate {
    /// The links the e-mail carries, the main one first.
    pub fn links(&self) -> Vec<&str> {
        match self {
            EmailTemplate::PasswordReset { link, .. }
            | EmailTemplate::AccountActivation { link, .. }
            | EmailTemplate::EmailChanged { link, .. } => vec![link],
            EmailTemplate::TradeConfirmation { confirm_link, decline_link, .. } => vec![confirm_link, decline_link],
            EmailTemplate::OrdersDigest { dashboard_link, .. } => vec![dashboard_link],
            EmailTemplate::TradeDeclined { .. } | EmailTemplate::TradeAllocated { .. } => vec![],
        }
    }

    /// The same message with its secret link removed, kept once the e-mail is sent.
    pub fn redacted(&self) -> Self {
        self.with_secret_links(REDACTED_LINK)
    }

    /// The same message with its secret links replaced by [`HIDDEN_LINK`], as the outbox
    /// shows it outside the demo: that a link was sent, never the link.
    pub fn links_hidden(&self) -> Self {
        self.with_secret_links(HIDDEN_LINK)
    }

    /// Whether a link of the message was removed or hidden (it is not a URL any more).
    pub fn has_hidden_links(&self) -> bool {
        self.links().iter().any(|l| !l.starts_with("http"))
    }

    fn with_secret_links(&self, placeholder: &str) -> Self {
        let r = || placeholder.to_owned();
        match self {
            EmailTemplate::PasswordReset { first_name, .. } => {
                EmailTemplate::PasswordReset { first_name: first_name.clone(), link: r() }
            }
            EmailTemplate::AccountActivation { first_name, .. } => {
                EmailTemplate::AccountActivation { first_name: first_name.clone(), link: r() }
            }
            EmailTemplate::TradeConfirmation { step, trade, .. } => EmailTemplate::TradeConfirmation {
                step: *step,
                trade: trade.clone(),
                confirm_link: r(),
                decline_link: r(),
            },
            // Their links are public pages (the dashboard, sign-in): nothing secret to remove.
            EmailTemplate::OrdersDigest { .. }
            | EmailTemplate::EmailChanged { .. }
            | EmailTemplate::TradeDeclined { .. }
            | EmailTemplate::TradeAllocated { .. } => self.clone(),
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
