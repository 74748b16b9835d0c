//! Companies and instruments.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use upstairs_domain::{CompanyId, InstrumentId, UserId};

/// A company named by id, with its name for display.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompanyRef {
    pub company_id: CompanyId,
    pub name: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Company {
    pub company_id: CompanyId,
    pub name: String,
    pub full_name: String,
    /// Company types: `broker`, `liquidity-provider` (none for a trading firm).
    pub roles: Vec<String>,
    pub ems_identifier: Option<String>,
    pub account: Option<String>,
    /// Where trade confirmations for this broker go.
    pub trade_confirmation_email: Option<String>,
    pub trade_confirmation_via_email_enabled: bool,
    /// The SenderCompID of the company's FIX session (ADR 0025); none: no FIX.
    pub fix_comp_id: Option<String>,
    /// The argon2 hash of the Password (554) its Logon must carry; none: no Logon.
    pub fix_password_hash: Option<String>,
    /// Whether a FIX Logon may start both sequences again at 1 (ResetSeqNumFlag 141=Y);
    /// without it, such a Logon is refused.
    pub fix_reset_on_logon: bool,
    /// Whether the working orders of the parents its FIX session sent are pulled when the
    /// session is gone for the grace period (ADR 0043); on unless turned off.
    pub fix_cancel_on_disconnect: bool,
    /// One of `brokers`.
    pub default_broker: Option<CompanyRef>,
    /// The brokers the company may use, in the order chosen.
    pub brokers: Vec<CompanyRef>,
    /// Since when its trading is stopped (the kill switch, ADR 0021); written only by
    /// the switch, never by an edit of the company.
    pub trading_stopped_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Company {
    /// A company with only a name (the bootstrap's and the tests' shape).
    pub fn named(name: &str, now: DateTime<Utc>) -> Self {
        Self {
            company_id: CompanyId::new(),
            name: name.to_owned(),
            full_name: name.to_owned(),
            roles: vec![],
            ems_identifier: None,
            account: None,
            trade_confirmation_email: None,
            trade_confirmation_via_email_enabled: false,
            fix_comp_id: None,
            fix_password_hash: None,
            fix_reset_on_logon: false,
            fix_cancel_on_disconnect: true,
            default_broker: None,
            brokers: vec![],
            trading_stopped_at: None,
            created_at: now,
            updated_at: now,
        }
    }

    pub fn is_type(&self, t: &str) -> bool {
        self.roles.iter().any(|r| r == t)
    }
}

pub const COMPANY_BROKER: &str = "broker";

pub const COMPANY_LIQUIDITY_PROVIDER: &str = "liquidity-provider";

/// An instrument tradable on the venue. Prices are exact decimals.
#[derive(Clone, Debug, PartialEq)]
pub struct Instrument {
    pub instrument_id: InstrumentId,
    pub name: String,
    /// e.g. `Dec26-Mar27`: the first 5 characters and the rest are the two leg labels.
    pub term: String,
    pub description: String,
    /// The minimum block size.
    pub min_quantity: i64,
    pub tick_size: Decimal,
    pub exchange_tick_size: Option<Decimal>,
    pub exchange_id: String,
    pub exchange: String,
    pub exchange_iso_code: String,
    pub exchange_instrument_id: Option<String>,
    pub bbg_code: Option<String>,
    pub country: String,
    pub currency: String,
    /// The exchange's best bid.
    pub min_tick_price: Decimal,
    /// The exchange's best offer.
    pub max_tick_price: Decimal,
    pub active: bool,
    pub is_sandbox: bool,
    pub reversed_spread: bool,
    /// When the venue last received a price (a band) for it, from the feed or the operator.
    pub band_seen_at: DateTime<Utc>,
    /// The stale-price guard (ADR 0048): past this many seconds without a price the
    /// instrument is stale and nothing trades on it. None: no guard (a band set by hand).
    pub prices_stale_after: Option<i32>,
    /// The venue's sweep found it stale (for screens, the metric and the action log).
    pub prices_stale: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Instrument {
    /// When its prices go stale without another price; None without a guard.
    pub fn stale_at(&self) -> Option<DateTime<Utc>> {
        self.prices_stale_after.map(|s| self.band_seen_at + chrono::Duration::seconds(s.into()))
    }

    /// Whether nothing may trade on it at `now` for want of a recent price: the sweep said
    /// so, or its limit has passed since the last price (before the sweep ran).
    pub fn is_stale(&self, now: DateTime<Utc>) -> bool {
        self.prices_stale || self.stale_at().is_some_and(|at| now >= at)
    }

    /// Whether `price` is inside the electronic band (both ends included).
    pub fn in_band(&self, price: Decimal) -> bool {
        self.min_tick_price <= price && price <= self.max_tick_price
    }
}

/// Sortable instrument columns (a closed set: it becomes SQL).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum InstrumentSort {
    #[default]
    Name,
    Term,
    ExchangeId,
    CreatedAt,
    UpdatedAt,
}

impl InstrumentSort {
    pub fn column(self) -> &'static str {
        match self {
            InstrumentSort::Name => "name",
            InstrumentSort::Term => "term",
            InstrumentSort::ExchangeId => "exchange_id",
            InstrumentSort::CreatedAt => "created_at",
            InstrumentSort::UpdatedAt => "updated_at",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Name, Self::Term, Self::ExchangeId, Self::CreatedAt, Self::UpdatedAt]
            .into_iter()
            .find(|c| c.column() == s)
    }
}

#[derive(Clone, Debug, Default)]
pub struct InstrumentFilter {
    /// Case-insensitive part of the name.
    pub name: Option<String>,
    pub exchange_id: Option<String>,
    pub active: Option<bool>,
    pub is_sandbox: Option<bool>,
    pub sort: InstrumentSort,
    pub descending: bool,
    pub page: i64,
    pub size: i64,
}

/// A version of an instrument's tick size, exchange tick size and minimum block (ADR
/// 0051): in force from `applied_at`, or scheduled for `effective_from` while that is
/// none.
#[derive(Clone, Debug, PartialEq)]
pub struct InstrumentSetting {
    pub setting_id: uuid::Uuid,
    pub instrument_id: InstrumentId,
    pub effective_from: DateTime<Utc>,
    pub tick_size: Decimal,
    pub exchange_tick_size: Option<Decimal>,
    pub min_quantity: i64,
    /// The operator who set it; none for the venue's own (the instrument's first).
    pub created_by: Option<UserId>,
    /// Their e-mail, as the history reads it.
    pub created_by_email: Option<String>,
    pub created_at: DateTime<Utc>,
    pub applied_at: Option<DateTime<Utc>>,
}

/// An exchange's calendar (ADR 0052): its instruments are those whose
/// `exchange_iso_code` is its MIC.
#[derive(Clone, Debug, PartialEq)]
pub struct Exchange {
    /// ISO 10383 market identifier, e.g. `IFEU`: four capitals or digits.
    pub mic: String,
    pub name: String,
    /// Hours, days, time zone and holidays (`always_open` as the venue's).
    pub calendar: upstairs_domain::calendar::Calendar,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}
