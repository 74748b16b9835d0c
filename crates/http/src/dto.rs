//! Request and response bodies, in the spec's `snake_case` field names.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use upstairs_domain::order::Direction;
use upstairs_domain::quantity::Quantity;
use upstairs_domain::{AutoAccept, Role, UiMetadataEntry};
use upstairs_engine::model::ConfirmationStep;
use upstairs_engine::model::{LinkPurpose, UserView};
use utoipa::ToSchema;
use uuid::Uuid;

/// One entry of the user's UI state; `TOOLTIPS` holds a list of `{key, read}`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UiMetadataDto {
    pub key: String,
    pub value: serde_json::Value,
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
            ems_trader_id: u.ems_trader_id,
            reliability_score,
            created_at: u.created_at,
            updated_at: u.updated_at,
        }
    }
}

/// Changes to a user: its own preferences (`auto_accept`, `ui_metadata`) by the user,
/// the other fields by an admin (or a company admin for its company's users).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateUserRequest {
    pub auto_accept: Option<AutoAccept>,
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

/// Public settings the web app needs before sign-in.
#[derive(Debug, Serialize, ToSchema)]
pub struct PublicConfig {
    pub product_name: String,
    pub support_email: String,
    pub support_phone: String,
    /// The demo runs the venue always open.
    pub always_open: bool,
}

// ----- shared helpers ------------------------------------------------------------

/// Distinguishes a field that is absent (no change) from one sent as null (clear it).
pub fn double_option<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// Exact decimals travel as JSON numbers (`94.73`), parsed without floating point.
pub fn decimal_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Number)
        .description(Some("exact decimal"))
        .build()
}

/// Whole numbers in requests. JSON Schema counts `-132.0` and `1e2` as integers, so the
/// server accepts every whole number however it is written, and refuses fractions and
/// numbers outside the 64-bit range (ADR 0013).
pub mod whole {
    use rust_decimal::Decimal;
    use rust_decimal::prelude::ToPrimitive;
    use serde::de::Error;
    use serde::{Deserialize, Deserializer};

    fn parse(s: &str) -> Option<i64> {
        s.parse::<i64>().ok().or_else(|| {
            let d = Decimal::from_str_exact(s).or_else(|_| Decimal::from_scientific(s)).ok()?;
            if d.fract().is_zero() { d.to_i64() } else { None }
        })
    }

    fn checked<E: Error>(s: &str) -> Result<i64, E> {
        parse(s).ok_or_else(|| E::custom(format!("invalid value: {s}, expected a whole number")))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        checked(&serde_json::Number::deserialize(d)?.to_string())
    }

    pub fn option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        Option::<serde_json::Number>::deserialize(d)?.map(|n| checked(&n.to_string())).transpose()
    }

    /// Absent (no change) apart from null (clear it), as [`super::double_option`].
    pub fn double_option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<i64>>, D::Error> {
        option(d).map(Some)
    }

    /// A query parameter: text that must be a whole number.
    pub fn query<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        Option::<String>::deserialize(d)?.map(|s| checked(s.trim())).transpose()
    }
}

/// A quantity a request states (ADR 0027): a bounded [`Quantity`], else 400 naming `field`.
pub fn quantity(field: &str, n: i64) -> Result<Quantity, crate::error::ApiError> {
    Quantity::new(n).map_err(|e| upstairs_engine::EngineError::invalid(field, &e.to_string()).into())
}

/// [`quantity`] of an optional field.
pub fn quantity_option(field: &str, n: Option<i64>) -> Result<Option<Quantity>, crate::error::ApiError> {
    n.map(|n| quantity(field, n)).transpose()
}

/// Exact decimals in requests (prices, tick sizes), at most [`decimal::LIMIT`] in size. A
/// number with more digits than a decimal holds (28 places) cannot be any instrument's
/// price; it is read as a double (17 significant digits) and then meets the tick-size
/// rules like any other number, instead of being refused as malformed (ADR 0013).
pub mod decimal {
    use rust_decimal::Decimal;
    use rust_decimal::prelude::FromPrimitive;
    use serde::de::Error;
    use serde::{Deserialize, Deserializer};

    /// The largest magnitude accepted (and documented as `minimum`/`maximum`).
    pub const LIMIT: f64 = 1e15;

    fn parse(s: &str) -> Option<Decimal> {
        let exact = Decimal::from_str_exact(s).or_else(|_| Decimal::from_scientific(s)).ok();
        let d = match exact {
            Some(d) => d,
            None => {
                let f = s.parse::<f64>().ok()?;
                if f.abs() < 1e-28 { Decimal::ZERO } else { Decimal::from_f64(f)? }
            }
        };
        (d.abs() <= Decimal::from_f64(LIMIT)?).then_some(d)
    }

    fn checked<E: Error>(n: serde_json::Number) -> Result<Decimal, E> {
        parse(&n.to_string()).ok_or_else(|| E::custom(format!("invalid value: {n}, expected a number up to 1e15")))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Decimal, D::Error> {
        checked(serde_json::Number::deserialize(d)?)
    }

    pub fn option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Decimal>, D::Error> {
        Option::<serde_json::Number>::deserialize(d)?.map(checked).transpose()
    }

    /// Absent (no change) apart from null (clear it), as [`super::double_option`].
    pub fn double_option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<Decimal>>, D::Error> {
        option(d).map(Some)
    }
}

/// A decimal that may be null.
pub fn nullable_decimal_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
            utoipa::openapi::schema::Type::Number,
            utoipa::openapi::schema::Type::Null,
        ]))
        .description(Some("exact decimal"))
        .build()
}

/// A decimal a request sends, with the bounds the server accepts.
pub fn request_decimal_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Number)
        .description(Some("exact decimal"))
        .minimum(Some(-decimal::LIMIT))
        .maximum(Some(decimal::LIMIT))
        .build()
}

/// A decimal a request sends, or null to clear it.
pub fn nullable_request_decimal_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
            utoipa::openapi::schema::Type::Number,
            utoipa::openapi::schema::Type::Null,
        ]))
        .description(Some("exact decimal"))
        .minimum(Some(-decimal::LIMIT))
        .maximum(Some(decimal::LIMIT))
        .build()
}

// ----- companies -----------------------------------------------------------------

/// A company by id and name.
#[derive(Debug, Serialize, ToSchema)]
pub struct CompanyRefDto {
    pub company_id: Uuid,
    pub name: String,
}

/// A company named by id in a request (a name, if sent, is ignored).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompanyIdDto {
    pub company_id: Uuid,
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CompanyDto {
    pub company_id: Uuid,
    pub name: String,
    pub full_name: String,
    #[schema(required = true)]
    pub ems_identifier: Option<String>,
    #[schema(required = true)]
    pub account: Option<String>,
    #[schema(required = true)]
    pub trade_confirmation_email: Option<String>,
    pub trade_confirmation_via_email_enabled: bool,
    /// The SenderCompID of the company's FIX session; null: no FIX.
    #[schema(required = true)]
    pub fix_comp_id: Option<String>,
    /// Whether a FIX password is set (it is never shown).
    pub fix_password_set: bool,
    /// Whether a FIX Logon may start both sequences again at 1 (ResetSeqNumFlag 141=Y);
    /// without it, such a Logon is refused.
    pub fix_reset_on_logon: bool,
    #[schema(required = true)]
    pub default_broker: Option<CompanyRefDto>,
    pub brokers: Vec<CompanyRefDto>,
    /// Company types: `broker`, `liquidity-provider`.
    pub roles: Vec<String>,
    /// The reliability score over every match request its users received (see `UserDto`).
    pub reliability_score: i64,
    /// Since when its trading is stopped by the kill switch; null while it trades.
    #[schema(required = true)]
    pub trading_stopped_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl CompanyDto {
    pub fn new(c: upstairs_engine::model::Company, reliability_score: i64) -> Self {
        let r = |b: upstairs_engine::model::CompanyRef| CompanyRefDto { company_id: b.company_id.0, name: b.name };
        Self {
            company_id: c.company_id.0,
            name: c.name,
            full_name: c.full_name,
            ems_identifier: c.ems_identifier,
            account: c.account,
            trade_confirmation_email: c.trade_confirmation_email,
            trade_confirmation_via_email_enabled: c.trade_confirmation_via_email_enabled,
            fix_comp_id: c.fix_comp_id,
            fix_password_set: c.fix_password_hash.is_some(),
            fix_reset_on_logon: c.fix_reset_on_logon,
            default_broker: c.default_broker.map(r),
            brokers: c.brokers.into_iter().map(r).collect(),
            roles: c.roles,
            reliability_score,
            trading_stopped_at: c.trading_stopped_at,
            created_at: c.created_at,
            updated_at: c.updated_at,
        }
    }
}

/// Company fields to create or change; absent fields are left as they are.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompanyRequest {
    pub name: Option<String>,
    pub full_name: Option<String>,
    #[serde(default, deserialize_with = "double_option")]
    pub ems_identifier: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    pub account: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    pub trade_confirmation_email: Option<Option<String>>,
    pub trade_confirmation_via_email_enabled: Option<bool>,
    /// 1 to 32 letters, digits, `.`, `_` or `-`; null removes it.
    #[serde(default, deserialize_with = "double_option")]
    pub fix_comp_id: Option<Option<String>>,
    /// At least 8 characters, stored hashed; null removes it.
    #[serde(default, deserialize_with = "double_option")]
    pub fix_password: Option<Option<String>>,
    pub fix_reset_on_logon: Option<bool>,
    #[serde(default, deserialize_with = "double_option")]
    pub default_broker: Option<Option<CompanyIdDto>>,
    pub brokers: Option<Vec<CompanyIdDto>>,
    pub roles: Option<Vec<String>>,
}

impl From<CompanyRequest> for upstairs_engine::reference::CompanyChanges {
    fn from(r: CompanyRequest) -> Self {
        use upstairs_domain::CompanyId;
        Self {
            name: r.name,
            full_name: r.full_name,
            ems_identifier: r.ems_identifier,
            account: r.account,
            trade_confirmation_email: r.trade_confirmation_email,
            trade_confirmation_via_email_enabled: r.trade_confirmation_via_email_enabled,
            fix_comp_id: r.fix_comp_id,
            fix_password: r.fix_password,
            fix_reset_on_logon: r.fix_reset_on_logon,
            default_broker_id: r.default_broker.map(|d| d.map(|c| CompanyId(c.company_id))),
            broker_ids: r.brokers.map(|v| v.into_iter().map(|c| CompanyId(c.company_id)).collect()),
            roles: r.roles,
        }
    }
}

/// One page of a list, and how many items the whole list has.
#[derive(Debug, Serialize, ToSchema)]
pub struct Page<T: ToSchema> {
    pub items: Vec<T>,
    pub total_items: i64,
}

impl<T: ToSchema, U: Into<T>> From<upstairs_engine::model::Page<U>> for Page<T> {
    fn from(p: upstairs_engine::model::Page<U>) -> Self {
        Self { items: p.items.into_iter().map(Into::into).collect(), total_items: p.total_items }
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PageQuery {
    /// From 0.
    #[serde(default, deserialize_with = "whole::query")]
    pub page: Option<i64>,
    #[serde(default, deserialize_with = "whole::query")]
    pub size: Option<i64>,
}

// ----- users (admin) -------------------------------------------------------------

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

// ----- instruments ---------------------------------------------------------------

#[derive(Debug, Serialize, ToSchema)]
pub struct InstrumentDto {
    pub instrument_id: Uuid,
    pub name: String,
    pub term: String,
    pub description: String,
    /// The minimum block size.
    pub min_quantity: i64,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub tick_size: rust_decimal::Decimal,
    #[serde(with = "rust_decimal::serde::arbitrary_precision_option")]
    #[schema(required = true, schema_with = nullable_decimal_schema)]
    pub exchange_tick_size: Option<rust_decimal::Decimal>,
    pub exchange_id: String,
    pub exchange: String,
    pub exchange_iso_code: String,
    #[schema(required = true)]
    pub exchange_instrument_id: Option<String>,
    #[schema(required = true)]
    pub bbg_code: Option<String>,
    pub country: String,
    pub currency: String,
    /// The exchange's best bid.
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub min_tick_price: rust_decimal::Decimal,
    /// The exchange's best offer.
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub max_tick_price: rust_decimal::Decimal,
    pub active: bool,
    pub is_sandbox: bool,
    pub reversed_spread: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<upstairs_engine::model::Instrument> for InstrumentDto {
    fn from(i: upstairs_engine::model::Instrument) -> Self {
        Self {
            instrument_id: i.instrument_id.0,
            name: i.name,
            term: i.term,
            description: i.description,
            min_quantity: i.min_quantity,
            tick_size: i.tick_size.normalize(),
            exchange_tick_size: i.exchange_tick_size.map(|d| d.normalize()),
            exchange_id: i.exchange_id,
            exchange: i.exchange,
            exchange_iso_code: i.exchange_iso_code,
            exchange_instrument_id: i.exchange_instrument_id,
            bbg_code: i.bbg_code,
            country: i.country,
            currency: i.currency,
            min_tick_price: i.min_tick_price.normalize(),
            max_tick_price: i.max_tick_price.normalize(),
            active: i.active,
            is_sandbox: i.is_sandbox,
            reversed_spread: i.reversed_spread,
            created_at: i.created_at,
            updated_at: i.updated_at,
        }
    }
}

/// Instrument fields to create or change; absent fields are left as they are.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InstrumentRequest {
    pub name: Option<String>,
    pub term: Option<String>,
    pub description: Option<String>,
    #[serde(default, deserialize_with = "whole::option")]
    pub min_quantity: Option<i64>,
    #[serde(default, deserialize_with = "decimal::option")]
    #[schema(schema_with = request_decimal_schema)]
    pub tick_size: Option<rust_decimal::Decimal>,
    #[serde(default, deserialize_with = "decimal::double_option")]
    #[schema(schema_with = nullable_request_decimal_schema)]
    pub exchange_tick_size: Option<Option<rust_decimal::Decimal>>,
    pub exchange_id: Option<String>,
    pub exchange: Option<String>,
    pub exchange_iso_code: Option<String>,
    #[serde(default, deserialize_with = "double_option")]
    pub exchange_instrument_id: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    pub bbg_code: Option<Option<String>>,
    pub country: Option<String>,
    pub currency: Option<String>,
    #[serde(default, deserialize_with = "decimal::option")]
    #[schema(schema_with = request_decimal_schema)]
    pub min_tick_price: Option<rust_decimal::Decimal>,
    #[serde(default, deserialize_with = "decimal::option")]
    #[schema(schema_with = request_decimal_schema)]
    pub max_tick_price: Option<rust_decimal::Decimal>,
    pub active: Option<bool>,
    pub is_sandbox: Option<bool>,
    pub reversed_spread: Option<bool>,
}

impl From<InstrumentRequest> for upstairs_engine::reference::InstrumentChanges {
    fn from(r: InstrumentRequest) -> Self {
        Self {
            name: r.name,
            term: r.term,
            description: r.description,
            min_quantity: r.min_quantity,
            tick_size: r.tick_size,
            exchange_tick_size: r.exchange_tick_size,
            exchange_id: r.exchange_id,
            exchange: r.exchange,
            exchange_iso_code: r.exchange_iso_code,
            exchange_instrument_id: r.exchange_instrument_id,
            bbg_code: r.bbg_code,
            country: r.country,
            currency: r.currency,
            min_tick_price: r.min_tick_price,
            max_tick_price: r.max_tick_price,
            active: r.active,
            is_sandbox: r.is_sandbox,
            reversed_spread: r.reversed_spread,
        }
    }
}

/// A new electronic band: the exchange's best bid and best offer.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BandRequest {
    #[serde(deserialize_with = "decimal::deserialize")]
    #[schema(schema_with = request_decimal_schema)]
    pub min_tick_price: rust_decimal::Decimal,
    #[serde(deserialize_with = "decimal::deserialize")]
    #[schema(schema_with = request_decimal_schema)]
    pub max_tick_price: rust_decimal::Decimal,
}

/// Sort direction.
#[derive(Clone, Copy, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum SortOrder {
    Asc,
    Desc,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct InstrumentListQuery {
    #[serde(default, deserialize_with = "whole::query")]
    pub page: Option<i64>,
    #[serde(default, deserialize_with = "whole::query")]
    pub size: Option<i64>,
    /// Part of the name.
    pub name: Option<String>,
    pub exchange_id: Option<String>,
    pub active: Option<bool>,
    /// ASC or DESC.
    #[param(inline)]
    pub order_by: Option<SortOrder>,
    /// name, term, exchange_id, created_at or updated_at.
    pub sort_by: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct NameQuery {
    /// Part of the name.
    pub name: Option<String>,
}

// ----- orders --------------------------------------------------------------------

/// `tradable = quantity − working − matched`.
#[derive(Debug, Serialize, ToSchema)]
pub struct QuantitiesDto {
    pub tradable: i64,
    pub working: i64,
    pub matched: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ParentOrderDto {
    pub parent_order_id: Uuid,
    pub instrument_id: Uuid,
    pub direction: Direction,
    pub quantity: i64,
    pub quantities: QuantitiesDto,
    /// ACTIVE, FILLED or CANCELLED.
    pub state: String,
    #[schema(required = true)]
    pub broker_instructions: Option<String>,
    /// The brokers the child orders may name.
    pub eligible_brokers: Vec<CompanyRefDto>,
    pub created_by: Uuid,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<upstairs_engine::orders::ParentOrderDetail> for ParentOrderDto {
    fn from(d: upstairs_engine::orders::ParentOrderDetail) -> Self {
        let p = d.view.parent;
        Self {
            parent_order_id: p.parent_order_id.0,
            instrument_id: p.instrument_id.0,
            direction: p.direction,
            quantity: p.quantity,
            quantities: QuantitiesDto {
                tradable: d.quantities.tradable,
                working: d.quantities.working,
                matched: d.quantities.matched,
            },
            state: p.state.as_str().into(),
            broker_instructions: p.broker_instructions,
            eligible_brokers: d
                .eligible_brokers
                .into_iter()
                .map(|b| CompanyRefDto { company_id: b.company_id.0, name: b.name })
                .collect(),
            created_by: p.created_by.0,
            created_at: p.created_at,
            updated_at: p.updated_at,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateParentOrderRequest {
    /// Required ('Direction is required').
    pub direction: Option<Direction>,
    pub instrument_id: Uuid,
    #[serde(deserialize_with = "whole::deserialize")]
    #[schema(minimum = 0, maximum = 1_000_000_000_000_i64)]
    pub quantity: i64,
    pub broker_instructions: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct StateQuery {
    /// Comma-separated states, e.g. `ACTIVE,FILLED`.
    pub state: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OrderDto {
    pub order_id: Uuid,
    pub parent_order_id: Uuid,
    pub instrument_id: Uuid,
    pub state: String,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub price: rust_decimal::Decimal,
    pub quantity: i64,
    pub direction: Direction,
    pub iceberg: bool,
    pub residual: bool,
    pub broker_id: Uuid,
    pub created_by: Uuid,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// False while the price is outside the instrument's current band, or before the open.
    pub matchable: bool,
    /// Worked before the open (from 05:30): it goes live at 09:00 by itself.
    pub waiting_for_open: bool,
}

impl From<upstairs_engine::orders::OrderDetail> for OrderDto {
    fn from(d: upstairs_engine::orders::OrderDetail) -> Self {
        let o = d.order;
        Self {
            order_id: o.order_id.0,
            parent_order_id: o.parent_order_id.0,
            instrument_id: o.instrument_id.0,
            state: o.state.as_str().into(),
            price: o.price.normalize(),
            quantity: o.quantity,
            direction: o.direction,
            iceberg: o.iceberg,
            residual: o.residual,
            broker_id: o.broker_id.0,
            created_by: o.created_by.0,
            created_at: o.created_at,
            updated_at: o.updated_at,
            matchable: d.matchable && o.state == upstairs_domain::order::OrderState::Working,
            waiting_for_open: d.waiting_for_open,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateOrderRequest {
    pub parent_order_id: Uuid,
    #[serde(deserialize_with = "whole::deserialize")]
    #[schema(minimum = 0, maximum = 1_000_000_000_000_i64)]
    pub quantity: i64,
    #[serde(default, deserialize_with = "decimal::option")]
    #[schema(schema_with = request_decimal_schema)]
    pub limit_price: Option<rust_decimal::Decimal>,
    /// Same as `limit_price` (the client sends one of the two).
    #[serde(default, deserialize_with = "decimal::option")]
    #[schema(schema_with = request_decimal_schema)]
    pub initial_price: Option<rust_decimal::Decimal>,
    #[serde(default)]
    pub residual: bool,
    #[serde(default)]
    pub iceberg: bool,
    pub broker_id: Uuid,
    pub instrument_id: Option<Uuid>,
    pub direction: Option<Direction>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EditOrderRequest {
    #[serde(default, deserialize_with = "whole::option")]
    #[schema(minimum = 0, maximum = 1_000_000_000_000_i64)]
    pub quantity: Option<i64>,
    #[serde(default, deserialize_with = "decimal::option")]
    #[schema(schema_with = request_decimal_schema)]
    pub limit_price: Option<rust_decimal::Decimal>,
    pub residual: Option<bool>,
    pub iceberg: Option<bool>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct OrdersQuery {
    pub instrument_id: Option<Uuid>,
    pub created_by: Option<Uuid>,
    pub parent_order_id: Option<Uuid>,
    /// Comma-separated child order states.
    pub state: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LevelDto {
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub price: rust_decimal::Decimal,
    pub buy_quantity: i64,
    pub sell_quantity: i64,
    /// The caller's company's part of the level.
    pub own_buy_quantity: i64,
    pub own_sell_quantity: i64,
}

/// The anonymous book: working quantity per price, best price first.
#[derive(Debug, Serialize, ToSchema)]
pub struct BookDto {
    pub instrument_id: Uuid,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub min_tick_price: rust_decimal::Decimal,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub max_tick_price: rust_decimal::Decimal,
    pub levels: Vec<LevelDto>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MarketDataDto {
    #[serde(with = "rust_decimal::serde::arbitrary_precision_option")]
    #[schema(required = true, schema_with = nullable_decimal_schema)]
    pub best_buy_price: Option<rust_decimal::Decimal>,
    #[serde(with = "rust_decimal::serde::arbitrary_precision_option")]
    #[schema(required = true, schema_with = nullable_decimal_schema)]
    pub best_sell_price: Option<rust_decimal::Decimal>,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub max_tick_price: rust_decimal::Decimal,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub min_tick_price: rust_decimal::Decimal,
}

/// Whether the venue is open, and its hours.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlatformStatusDto {
    /// Child orders, editing and matching.
    pub open: bool,
    /// Creating parent orders (the client's canCreateParentOrders).
    pub parent_orders_open: bool,
    /// At most 15 minutes to the close.
    pub closing_soon: bool,
    pub always_open: bool,
    #[schema(required = true)]
    pub next_open: Option<DateTime<Utc>>,
    #[schema(required = true)]
    pub next_close: Option<DateTime<Utc>>,
    pub time_zone: String,
    /// Local times, `HH:MM`.
    pub open_time: String,
    pub close_time: String,
    pub parent_orders_from: String,
    /// Since when the caller's company is stopped by the kill switch (new orders are
    /// refused); null while it trades.
    #[schema(required = true)]
    pub trading_stopped_at: Option<DateTime<Utc>>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Body {
        #[serde(deserialize_with = "whole::deserialize")]
        n: i64,
        #[serde(default, deserialize_with = "decimal::option")]
        price: Option<rust_decimal::Decimal>,
    }

    fn body(json: &str) -> Result<Body, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn integers_are_whole_numbers_however_written() {
        assert_eq!(body(r#"{"n": -132.0}"#).unwrap().n, -132);
        assert_eq!(body(r#"{"n": 1e2}"#).unwrap().n, 100);
        assert_eq!(body(r#"{"n": 7}"#).unwrap().n, 7);
        assert!(body(r#"{"n": 1.5}"#).is_err());
        assert!(body(r#"{"n": 1e30}"#).is_err());
        assert!(body(r#"{"n": "7"}"#).is_err());
    }

    #[test]
    fn decimals_are_exact_and_bounded() {
        let p = |json: &str| body(&format!(r#"{{"n": 1, "price": {json}}}"#)).map(|b| b.price.unwrap());
        assert_eq!(p("94.73").unwrap().to_string(), "94.73");
        assert_eq!(p("1e-216").unwrap(), rust_decimal::Decimal::ZERO);
        assert!(p("1e16").is_err());
        assert!(p("\"94.73\"").is_err());
    }

    #[test]
    fn query_integers_accept_whole_numbers() {
        let q: PageQuery = serde_urlencoded_like("page=-132.0&size=5");
        assert_eq!((q.page, q.size), (Some(-132), Some(5)));
    }

    fn serde_urlencoded_like(q: &str) -> PageQuery {
        let uri: axum::http::Uri = format!("/x?{q}").parse().unwrap();
        axum::extract::Query::<PageQuery>::try_from_uri(&uri).unwrap().0
    }
}

/// A broker's answer through its e-mail link: exactly one of the two.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfirmOrderRequest {
    /// The accept link's answer.
    pub accepted: Option<bool>,
    /// The fill link's answer.
    pub filled: Option<bool>,
}

/// `PATCH /api/orders/{id}`: a trader's edit (signed in), or a broker's answer (`?token=`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum PatchOrderRequest {
    Edit(EditOrderRequest),
    Confirm(ConfirmOrderRequest),
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum PatchOrderResponse {
    Order(OrderDto),
    Confirmation(OrderConfirmationDto),
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct LinkTokenQuery {
    /// The token of a broker's e-mail link.
    pub token: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ConfirmationQuery {
    /// The token of a broker's e-mail link.
    pub token: String,
    /// Which link: `ACCEPT` (`/accept-order`) or `FILL` (`/fill-order`).
    pub step: ConfirmationStep,
}

/// A trade as its broker's link shows it: the client's side, and the other side's broker.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrderConfirmationDto {
    pub order_id: Uuid,
    pub step: ConfirmationStep,
    /// The order's state now.
    pub state: String,
    /// The broker's answer to this step; null while open.
    pub answer: Option<bool>,
    pub broker_name: String,
    pub client_name: String,
    pub trader_name: String,
    pub instrument_name: String,
    pub direction: Direction,
    pub quantity: i64,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub price: rust_decimal::Decimal,
    pub counterparty_broker_name: String,
    pub matched_at: DateTime<Utc>,
}

impl From<upstairs_engine::confirmations::TradeConfirmation> for OrderConfirmationDto {
    fn from(c: upstairs_engine::confirmations::TradeConfirmation) -> Self {
        let t = c.trade;
        Self {
            order_id: c.order_id.0,
            step: c.step,
            state: c.state.as_str().into(),
            answer: c.answer,
            broker_name: t.broker_name,
            client_name: t.client_name,
            trader_name: t.trader_name,
            instrument_name: t.instrument_name,
            direction: t.direction,
            quantity: t.quantity,
            price: t.price.normalize(),
            counterparty_broker_name: t.counterparty_broker_name,
            matched_at: t.matched_at,
        }
    }
}
