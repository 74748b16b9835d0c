//! Rows as both backends return them, and their conversion into the engine's records.
//! Columns that the backends store differently come through the adapters of
//! [`crate::adapt`], so each row type is declared once.

use rust_decimal::Decimal;
use serde_json::Value;
use sqlx::types::Json;
use std::str::FromStr;
use upstairs_domain::match_request::MatchRequestState;
use upstairs_domain::notification::{NotificationType, Party};
use upstairs_domain::order::{Direction, OrderState};
use upstairs_domain::rfq::{ResponseState, RfqState};
use upstairs_domain::{
    AutoAccept, CompanyId, InstrumentId, MatchRequestId, NotificationId, OrderId, ParentOrderId, RfqId, RfqResponseId,
    Role, SessionId, UiMetadataEntry, UserId,
};
use upstairs_engine::StoreError;
use upstairs_engine::model::*;
use upstairs_engine::ports::StoreResult;
use uuid::Uuid;

use crate::adapt::{Dec, Ts};

pub(crate) fn stored<T>(what: &str, text: &str, parsed: Option<T>) -> StoreResult<T> {
    parsed.ok_or_else(|| StoreError::Other(format!("stored {what} {text}")))
}

#[derive(sqlx::FromRow)]
pub struct CompanyRow {
    company_id: Uuid,
    name: String,
    full_name: String,
    roles: Json<Vec<String>>,
    ems_identifier: Option<String>,
    account: Option<String>,
    trade_confirmation_email: Option<String>,
    trade_confirmation_via_email_enabled: bool,
    fix_comp_id: Option<String>,
    fix_password_hash: Option<String>,
    fix_reset_on_logon: bool,
    fix_cancel_on_disconnect: bool,
    default_broker_id: Option<Uuid>,
    default_broker_name: Option<String>,
    trading_stopped_at: Option<Ts>,
    created_at: Ts,
    updated_at: Ts,
    /// Its brokers in their order, `[[id, name], …]`, aggregated in the same statement.
    brokers: Json<Vec<(String, String)>>,
}

impl CompanyRow {
    pub fn into_model(self) -> StoreResult<Company> {
        let brokers = convert(self.brokers.0, |(id, name)| {
            Ok(CompanyRef { company_id: CompanyId(stored("broker id", &id, Uuid::parse_str(&id).ok())?), name })
        })?;
        Ok(Company {
            company_id: CompanyId(self.company_id),
            name: self.name,
            full_name: self.full_name,
            roles: self.roles.0,
            ems_identifier: self.ems_identifier,
            account: self.account,
            trade_confirmation_email: self.trade_confirmation_email,
            trade_confirmation_via_email_enabled: self.trade_confirmation_via_email_enabled,
            fix_comp_id: self.fix_comp_id,
            fix_password_hash: self.fix_password_hash,
            fix_reset_on_logon: self.fix_reset_on_logon,
            fix_cancel_on_disconnect: self.fix_cancel_on_disconnect,
            default_broker: self
                .default_broker_id
                .zip(self.default_broker_name)
                .map(|(id, name)| CompanyRef { company_id: CompanyId(id), name }),
            brokers,
            trading_stopped_at: self.trading_stopped_at.map(|t| t.0),
            created_at: self.created_at.0,
            updated_at: self.updated_at.0,
        })
    }
}

#[derive(sqlx::FromRow)]
pub struct InstrumentRow {
    instrument_id: Uuid,
    name: String,
    term: String,
    description: String,
    min_quantity: i64,
    tick_size: Dec,
    exchange_tick_size: Option<Dec>,
    exchange_id: String,
    exchange: String,
    exchange_iso_code: String,
    exchange_instrument_id: Option<String>,
    bbg_code: Option<String>,
    country: String,
    currency: String,
    min_tick_price: Dec,
    max_tick_price: Dec,
    active: bool,
    is_sandbox: bool,
    reversed_spread: bool,
    band_seen_at: Ts,
    prices_stale_after: Option<i32>,
    prices_stale: bool,
    created_at: Ts,
    updated_at: Ts,
}

impl InstrumentRow {
    pub fn into_model(self) -> Instrument {
        Instrument {
            instrument_id: InstrumentId(self.instrument_id),
            name: self.name,
            term: self.term,
            description: self.description,
            min_quantity: self.min_quantity,
            tick_size: self.tick_size.0,
            exchange_tick_size: self.exchange_tick_size.map(Decimal::from),
            exchange_id: self.exchange_id,
            exchange: self.exchange,
            exchange_iso_code: self.exchange_iso_code,
            exchange_instrument_id: self.exchange_instrument_id,
            bbg_code: self.bbg_code,
            country: self.country,
            currency: self.currency,
            min_tick_price: self.min_tick_price.0,
            max_tick_price: self.max_tick_price.0,
            active: self.active,
            is_sandbox: self.is_sandbox,
            reversed_spread: self.reversed_spread,
            band_seen_at: self.band_seen_at.0,
            prices_stale_after: self.prices_stale_after,
            prices_stale: self.prices_stale,
            created_at: self.created_at.0,
            updated_at: self.updated_at.0,
        }
    }
}

#[derive(sqlx::FromRow)]
pub struct UserRow {
    user_id: Uuid,
    company_id: Uuid,
    email: String,
    first_name: String,
    last_name: String,
    roles: Json<Vec<Role>>,
    password_hash: Option<String>,
    active: bool,
    verified: bool,
    auto_accept: Option<String>,
    parent_order_limit_multiplier: Option<i64>,
    ui_metadata: Json<Vec<UiMetadataEntry>>,
    fix_integration: bool,
    cancel_on_disconnect: bool,
    ems_trader_id: Option<String>,
    created_at: Ts,
    updated_at: Ts,
    company_name: String,
}

impl UserRow {
    pub fn into_model(self) -> StoreResult<UserView> {
        let auto_accept = self.auto_accept.map(|a| stored("auto_accept", &a, AutoAccept::parse(&a))).transpose()?;
        Ok(UserView {
            user: User {
                user_id: UserId(self.user_id),
                company_id: CompanyId(self.company_id),
                email: self.email,
                first_name: self.first_name,
                last_name: self.last_name,
                roles: self.roles.0,
                password_hash: self.password_hash,
                active: self.active,
                verified: self.verified,
                auto_accept,
                parent_order_limit_multiplier: self.parent_order_limit_multiplier,
                ui_metadata: self.ui_metadata.0,
                fix_integration: self.fix_integration,
                cancel_on_disconnect: self.cancel_on_disconnect,
                ems_trader_id: self.ems_trader_id,
                created_at: self.created_at.0,
                updated_at: self.updated_at.0,
            },
            company_name: self.company_name,
        })
    }
}

/// A session and its user (`s_`-prefixed session columns beside the user's).
#[derive(sqlx::FromRow)]
pub struct SessionUserRow {
    s_session_id: Uuid,
    s_token_hash: String,
    s_created_at: Ts,
    s_expires_at: Ts,
    #[sqlx(flatten)]
    user: UserRow,
}

impl SessionUserRow {
    pub fn into_model(self) -> StoreResult<(Session, UserView)> {
        let view = self.user.into_model()?;
        let session = Session {
            session_id: SessionId(self.s_session_id),
            user_id: view.user.user_id,
            token_hash: self.s_token_hash,
            created_at: self.s_created_at.0,
            expires_at: self.s_expires_at.0,
        };
        Ok((session, view))
    }
}

#[derive(sqlx::FromRow)]
pub struct LinkTokenRow {
    token_hash: String,
    user_id: Uuid,
    purpose: String,
    created_at: Ts,
    expires_at: Ts,
    used_at: Option<Ts>,
}

impl LinkTokenRow {
    pub fn into_model(self) -> StoreResult<LinkToken> {
        Ok(LinkToken {
            purpose: stored("purpose", &self.purpose, LinkPurpose::parse(&self.purpose))?,
            token_hash: self.token_hash,
            user_id: UserId(self.user_id),
            created_at: self.created_at.0,
            expires_at: self.expires_at.0,
            used_at: self.used_at.map(|t| t.0),
        })
    }
}

#[derive(sqlx::FromRow)]
pub struct ActionLogRow {
    action_log_id: Uuid,
    entity: String,
    entity_id: Option<Uuid>,
    operation: String,
    user_id: Option<Uuid>,
    created_at: Ts,
    details: Json<Value>,
}

impl ActionLogRow {
    pub fn into_model(self) -> ActionLog {
        ActionLog {
            action_log_id: self.action_log_id,
            entity: self.entity,
            entity_id: self.entity_id,
            operation: self.operation,
            user_id: self.user_id.map(UserId),
            created_at: self.created_at.0,
            details: self.details.0,
            keyed: None,
        }
    }
}

/// An audit row with its user's e-mail and company (`ACTION_LOG_SELECT`).
#[derive(sqlx::FromRow)]
pub struct ActionLogEntryRow {
    #[sqlx(flatten)]
    log: ActionLogRow,
    email: Option<String>,
    company_name: Option<String>,
}

impl ActionLogEntryRow {
    pub fn into_model(self) -> ActionLogEntry {
        ActionLogEntry { log: self.log.into_model(), email: self.email, company_name: self.company_name }
    }
}

#[derive(sqlx::FromRow)]
pub struct OutboxRow {
    outbox_id: Uuid,
    payload: Json<OutgoingEmail>,
    created_at: Ts,
    sent_at: Option<Ts>,
    attempts: i32,
    last_error: Option<String>,
}

impl OutboxRow {
    pub fn into_model(self) -> OutboxMessage {
        OutboxMessage {
            outbox_id: self.outbox_id,
            email: self.payload.0,
            created_at: self.created_at.0,
            sent_at: self.sent_at.map(|t| t.0),
            attempts: self.attempts,
            last_error: self.last_error,
        }
    }
}

#[derive(sqlx::FromRow)]
pub struct TimerRow {
    timer_id: Uuid,
    kind: String,
    payload: Json<Value>,
    due_at: Ts,
    dedupe_key: Option<String>,
    attempts: i32,
}

impl TimerRow {
    pub fn into_model(self) -> Timer {
        Timer {
            timer_id: self.timer_id,
            kind: self.kind,
            payload: self.payload.0,
            due_at: self.due_at.0,
            dedupe_key: self.dedupe_key,
            attempts: self.attempts,
        }
    }
}

#[derive(sqlx::FromRow)]
pub struct ParentOrderRow {
    parent_order_id: Uuid,
    company_id: Uuid,
    created_by: Uuid,
    instrument_id: Uuid,
    direction: String,
    quantity: i64,
    broker_instructions: Option<String>,
    min_execution: Option<i64>,
    state: String,
    working_quantity: i64,
    matched_quantity: i64,
    created_at: Ts,
    updated_at: Ts,
}

impl ParentOrderRow {
    pub fn into_model(self) -> StoreResult<ParentOrderView> {
        Ok(ParentOrderView {
            parent: ParentOrder {
                parent_order_id: ParentOrderId(self.parent_order_id),
                company_id: CompanyId(self.company_id),
                created_by: UserId(self.created_by),
                instrument_id: InstrumentId(self.instrument_id),
                direction: stored("direction", &self.direction, Direction::parse(&self.direction))?,
                quantity: self.quantity,
                broker_instructions: self.broker_instructions,
                min_execution: self.min_execution,
                state: stored("parent state", &self.state, ParentState::parse(&self.state))?,
                created_at: self.created_at.0,
                updated_at: self.updated_at.0,
            },
            working: self.working_quantity,
            matched: self.matched_quantity,
        })
    }
}

#[derive(sqlx::FromRow)]
pub struct ChildOrderRow {
    order_id: Uuid,
    parent_order_id: Uuid,
    company_id: Uuid,
    created_by: Uuid,
    instrument_id: Uuid,
    direction: String,
    state: String,
    price: Dec,
    quantity: i64,
    iceberg: bool,
    residual: bool,
    min_execution: Option<i64>,
    broker_id: Uuid,
    created_at: Ts,
    updated_at: Ts,
}

impl ChildOrderRow {
    pub fn into_model(self) -> StoreResult<ChildOrder> {
        Ok(ChildOrder {
            order_id: OrderId(self.order_id),
            parent_order_id: ParentOrderId(self.parent_order_id),
            company_id: CompanyId(self.company_id),
            created_by: UserId(self.created_by),
            instrument_id: InstrumentId(self.instrument_id),
            direction: stored("direction", &self.direction, Direction::parse(&self.direction))?,
            state: stored("order state", &self.state, OrderState::parse(&self.state))?,
            price: self.price.0,
            quantity: self.quantity,
            iceberg: self.iceberg,
            residual: self.residual,
            min_execution: self.min_execution,
            broker_id: CompanyId(self.broker_id),
            created_at: self.created_at.0,
            updated_at: self.updated_at.0,
        })
    }
}

#[derive(sqlx::FromRow)]
pub struct FacingOrderRow {
    #[sqlx(flatten)]
    order: ChildOrderRow,
    creator_auto_accept: Option<String>,
    shown: i64,
}

impl FacingOrderRow {
    pub fn into_model(self) -> StoreResult<FacingOrder> {
        let auto_accept =
            self.creator_auto_accept.map(|a| stored("auto_accept", &a, AutoAccept::parse(&a))).transpose()?;
        Ok(FacingOrder { order: self.order.into_model()?, auto_accept, shown: self.shown })
    }
}

#[derive(sqlx::FromRow)]
pub struct AdminOrderRow {
    #[sqlx(flatten)]
    order: ChildOrderRow,
    created_by_email: String,
    company_name: String,
    instrument_name: String,
    instrument_tick_size: Dec,
    from_rfq: bool,
    broker_name: String,
}

impl AdminOrderRow {
    pub fn into_model(self) -> StoreResult<AdminOrder> {
        Ok(AdminOrder {
            order: self.order.into_model()?,
            created_by_email: self.created_by_email,
            company_name: self.company_name,
            instrument_name: self.instrument_name,
            instrument_tick_size: self.instrument_tick_size.0,
            from_rfq: self.from_rfq,
            broker_name: self.broker_name,
        })
    }
}

#[derive(sqlx::FromRow)]
pub struct BillingItemRow {
    company_name: String,
    first_name: String,
    last_name: String,
    user_id: Uuid,
    broker_name: String,
    broker_id: Uuid,
    match_request_id: Uuid,
    order_id: Uuid,
    parent_order_id: Uuid,
    match_request_created_at: Ts,
    instrument_name: String,
    bbg_code: Option<String>,
    exchange_instrument_id: Option<String>,
    exchange: String,
    exchange_iso_code: String,
    tick_size: Dec,
    term: String,
    direction: String,
    quantity: i64,
    price: Dec,
    allocation_lines: Option<String>,
    give_up_broker_name: Option<String>,
}

impl BillingItemRow {
    pub fn into_model(self) -> StoreResult<BillingItem> {
        Ok(BillingItem {
            company_name: self.company_name,
            first_name: self.first_name,
            last_name: self.last_name,
            user_id: UserId(self.user_id),
            broker_name: self.broker_name,
            broker_id: CompanyId(self.broker_id),
            match_request_id: MatchRequestId(self.match_request_id),
            order_id: OrderId(self.order_id),
            payment_order_id: ParentOrderId(self.parent_order_id),
            match_request_created_at: self.match_request_created_at.0,
            instrument_name: self.instrument_name,
            bbg_code: self.bbg_code,
            exchange_instrument_id: self.exchange_instrument_id,
            exchange: self.exchange,
            exchange_iso_code: self.exchange_iso_code,
            tick_size: self.tick_size.0,
            term: self.term,
            direction: stored("direction", &self.direction, Direction::parse(&self.direction))?,
            quantity: self.quantity,
            price: self.price.0,
            allocations: self.allocation_lines.as_deref().map(allocation_lines).transpose()?.unwrap_or_default(),
            give_up_broker_name: self.give_up_broker_name,
        })
    }
}

#[derive(sqlx::FromRow)]
pub struct NewsletterRow {
    newsletter_id: Uuid,
    company_id: Option<Uuid>,
    name: String,
    description: String,
    filter_criteria: Option<Json<Value>>,
    created_at: Ts,
    updated_at: Ts,
    last_sent_at: Option<Ts>,
}

impl NewsletterRow {
    /// The newsletter without its recipients (read separately).
    pub fn into_model(self) -> Newsletter {
        Newsletter {
            newsletter_id: self.newsletter_id,
            company_id: self.company_id.map(CompanyId),
            name: self.name,
            description: self.description,
            filter_criteria: self.filter_criteria.map(|j| j.0),
            recipients: vec![],
            created_at: self.created_at.0,
            updated_at: self.updated_at.0,
            last_sent_at: self.last_sent_at.map(|t| t.0),
        }
    }
}

#[derive(sqlx::FromRow)]
pub struct NewsletterRecipientRow {
    pub newsletter_id: Uuid,
    user_id: Uuid,
    email: String,
    first_name: String,
    last_name: String,
    company_name: String,
    roles: Json<Vec<Role>>,
}

impl NewsletterRecipientRow {
    pub fn into_model(self) -> NewsletterRecipient {
        NewsletterRecipient {
            user_id: UserId(self.user_id),
            email: self.email,
            first_name: self.first_name,
            last_name: self.last_name,
            company_name: self.company_name,
            roles: self.roles.0,
        }
    }
}

#[derive(sqlx::FromRow)]
pub struct MatchRequestRow {
    match_request_id: Uuid,
    instrument_id: Uuid,
    direction: String,
    price: Dec,
    take_price: Option<Dec>,
    quantity: i64,
    requesting_order_id: Uuid,
    requesting_company_id: Uuid,
    requesting_user_id: Uuid,
    responding_order_id: Uuid,
    responding_company_id: Uuid,
    responding_user_id: Uuid,
    iceberg: bool,
    state: String,
    created_at: Ts,
    expires_at: Ts,
    updated_at: Ts,
    rfq_id: Option<Uuid>,
    auto_answer_at: Option<Ts>,
    auto_accept: Option<bool>,
    answered_automatically: bool,
    answered_at: Option<Ts>,
    tick_size: Option<Dec>,
    min_quantity: Option<i64>,
}

impl MatchRequestRow {
    pub fn into_model(self) -> StoreResult<MatchRequest> {
        Ok(MatchRequest {
            match_request_id: MatchRequestId(self.match_request_id),
            instrument_id: InstrumentId(self.instrument_id),
            direction: stored("direction", &self.direction, Direction::parse(&self.direction))?,
            price: self.price.0,
            take_price: self.take_price.unwrap_or(self.price).0,
            quantity: self.quantity,
            requesting_order_id: OrderId(self.requesting_order_id),
            requesting_company_id: CompanyId(self.requesting_company_id),
            requesting_user_id: UserId(self.requesting_user_id),
            responding_order_id: OrderId(self.responding_order_id),
            responding_company_id: CompanyId(self.responding_company_id),
            responding_user_id: UserId(self.responding_user_id),
            iceberg: self.iceberg,
            state: stored("match request state", &self.state, MatchRequestState::parse(&self.state))?,
            created_at: self.created_at.0,
            expires_at: self.expires_at.0,
            updated_at: self.updated_at.0,
            rfq_id: self.rfq_id.map(RfqId),
            auto_answer: self
                .auto_answer_at
                .zip(self.auto_accept)
                .map(|(at, accept)| upstairs_engine::model::AutoAnswer { at: at.0, accept }),
            answered_automatically: self.answered_automatically,
            answered_at: self.answered_at.map(|t| t.0),
            // Every request has them since PostgreSQL's 0035 and SQLite's 0032.
            tick_size: self.tick_size.map_or(Decimal::ZERO, |d| d.0),
            min_quantity: self.min_quantity.unwrap_or_default(),
        })
    }
}

#[derive(sqlx::FromRow)]
pub struct RfqRow {
    rfq_id: Uuid,
    parent_order_id: Uuid,
    order_id: Uuid,
    instrument_id: Uuid,
    direction: String,
    company_id: Uuid,
    user_id: Uuid,
    quantity: i64,
    two_way: bool,
    anonymous: bool,
    state: String,
    created_at: Ts,
    expires_at: Ts,
    updated_at: Ts,
}

impl RfqRow {
    pub fn into_model(self) -> StoreResult<Rfq> {
        Ok(Rfq {
            rfq_id: RfqId(self.rfq_id),
            parent_order_id: ParentOrderId(self.parent_order_id),
            order_id: OrderId(self.order_id),
            instrument_id: InstrumentId(self.instrument_id),
            direction: stored("direction", &self.direction, Direction::parse(&self.direction))?,
            company_id: CompanyId(self.company_id),
            user_id: UserId(self.user_id),
            quantity: self.quantity,
            two_way: self.two_way,
            anonymous: self.anonymous,
            state: stored("RFQ state", &self.state, RfqState::parse(&self.state))?,
            created_at: self.created_at.0,
            expires_at: self.expires_at.0,
            updated_at: self.updated_at.0,
        })
    }
}

#[derive(sqlx::FromRow)]
pub struct RfqResponseRow {
    rfq_response_id: Uuid,
    rfq_id: Uuid,
    company_id: Uuid,
    state: String,
    user_id: Option<Uuid>,
    broker_id: Option<Uuid>,
    buy_price: Option<Dec>,
    buy_quantity: Option<i64>,
    sell_price: Option<Dec>,
    sell_quantity: Option<i64>,
    match_request_id: Option<Uuid>,
    created_at: Ts,
    updated_at: Ts,
}

impl RfqResponseRow {
    pub fn into_model(self) -> StoreResult<RfqResponse> {
        let side = |p: Option<Dec>, q: Option<i64>| p.zip(q).map(|(p, q)| QuoteSide { price: p.0, quantity: q });
        Ok(RfqResponse {
            rfq_response_id: RfqResponseId(self.rfq_response_id),
            rfq_id: RfqId(self.rfq_id),
            company_id: CompanyId(self.company_id),
            state: stored("RFQ response state", &self.state, ResponseState::parse(&self.state))?,
            user_id: self.user_id.map(UserId),
            broker_id: self.broker_id.map(CompanyId),
            buy: side(self.buy_price, self.buy_quantity),
            sell: side(self.sell_price, self.sell_quantity),
            match_request_id: self.match_request_id.map(MatchRequestId),
            created_at: self.created_at.0,
            updated_at: self.updated_at.0,
        })
    }
}

#[derive(sqlx::FromRow)]
pub struct BrokerConfirmationRow {
    token_hash: String,
    order_id: Uuid,
    match_request_id: Uuid,
    broker_id: Uuid,
    step: String,
    created_at: Ts,
    expires_at: Ts,
    answered_at: Option<Ts>,
    answer: Option<bool>,
}

impl BrokerConfirmationRow {
    pub fn into_model(self) -> StoreResult<BrokerConfirmation> {
        Ok(BrokerConfirmation {
            step: stored("confirmation step", &self.step, ConfirmationStep::parse(&self.step))?,
            token_hash: self.token_hash,
            order_id: OrderId(self.order_id),
            match_request_id: MatchRequestId(self.match_request_id),
            broker_id: CompanyId(self.broker_id),
            created_at: self.created_at.0,
            expires_at: self.expires_at.0,
            answered: self.answered_at.zip(self.answer).map(|(at, a)| (at.0, a)),
        })
    }
}

#[derive(sqlx::FromRow)]
pub struct NotificationRow {
    notification_id: Uuid,
    user_id: Uuid,
    #[sqlx(rename = "type")]
    notification_type: String,
    status: String,
    instrument_id: Uuid,
    match_request_id: Option<Uuid>,
    rfq_id: Option<Uuid>,
    order_id: Option<Uuid>,
    old_price: Option<Dec>,
    new_price: Option<Dec>,
    role: String,
    direction: Option<String>,
    quantity: Option<i64>,
    price: Option<Dec>,
    read: bool,
    archived: bool,
    created_at: Ts,
    expired_at: Ts,
    updated_at: Ts,
}

impl NotificationRow {
    pub fn into_model(self) -> StoreResult<Notification> {
        Ok(Notification {
            notification_id: NotificationId(self.notification_id),
            user_id: UserId(self.user_id),
            notification_type: stored(
                "notification type",
                &self.notification_type,
                NotificationType::parse(&self.notification_type),
            )?,
            status: stored("notification status", &self.status, MatchRequestState::parse(&self.status))?,
            instrument_id: InstrumentId(self.instrument_id),
            subject: match (self.match_request_id, self.rfq_id, self.order_id, self.old_price, self.new_price) {
                (Some(m), None, None, _, _) => Subject::MatchRequest(MatchRequestId(m)),
                (None, Some(r), None, _, _) => Subject::Rfq(RfqId(r)),
                (None, None, Some(o), Some(old), Some(new)) => {
                    Subject::PriceCorrection { order_id: OrderId(o), old_price: old.0, new_price: new.0 }
                }
                (None, None, Some(o), None, None) => Subject::Order(OrderId(o)),
                _ => return Err(StoreError::Other(format!("notification {} tells of nothing", self.notification_id))),
            },
            role: stored("notification role", &self.role, Party::parse(&self.role))?,
            terms: match (self.direction, self.quantity, self.price) {
                (Some(d), Some(quantity), Some(price)) => Some(Terms {
                    direction: stored("notification direction", &d, Direction::parse(&d))?,
                    quantity,
                    price: price.0,
                }),
                _ => None,
            },
            read: self.read,
            archived: self.archived,
            created_at: self.created_at.0,
            expired_at: self.expired_at.0,
            updated_at: self.updated_at.0,
        })
    }
}

/// One book level as the backend's JSON aggregate carries it: side, price as text,
/// company id as text, shown quantity. The levels of a book come back as one row (a
/// JSON array) instead of one row each, because SQLite's driver hands every row over
/// from its worker thread separately, and that hand-over dominated a book read.
#[derive(serde::Deserialize)]
pub struct BookLevelJson(String, String, String, i64);

impl BookLevelJson {
    pub fn into_model(self) -> StoreResult<BookRow> {
        let BookLevelJson(direction, price, company_id, shown) = self;
        Ok(BookRow {
            price: stored("price", &price, Decimal::from_str(&price).ok())?,
            direction: stored("direction", &direction, Direction::parse(&direction))?,
            company_id: CompanyId(stored("company_id", &company_id, Uuid::parse_str(&company_id).ok())?),
            shown,
        })
    }
}

/// Converts every row, stopping at the first that does not convert.
pub fn convert<R, M>(rows: Vec<R>, f: impl FnMut(R) -> StoreResult<M>) -> StoreResult<Vec<M>> {
    rows.into_iter().map(f).collect()
}

#[derive(sqlx::FromRow)]
pub struct FixSessionRow {
    company_id: Uuid,
    next_sender_seq: i64,
    next_target_seq: i64,
    app_watermark: i64,
    reset_owed: bool,
    logged_on: bool,
    last_message_at: Option<Ts>,
    created_at: Ts,
    owner_node: Option<String>,
    owner_until: Option<Ts>,
}

impl FixSessionRow {
    pub fn into_model(self) -> FixSession {
        FixSession {
            company_id: CompanyId(self.company_id),
            next_sender_seq: self.next_sender_seq,
            next_target_seq: self.next_target_seq,
            app_watermark: self.app_watermark,
            reset_owed: self.reset_owed,
            logged_on: self.logged_on,
            last_message_at: self.last_message_at.map(|t| t.0),
            created_at: self.created_at.0,
            owner_node: self.owner_node,
            owner_until: self.owner_until.map(|t| t.0),
        }
    }
}

/// A company with a CompID, left-joined to its session (whose columns are null without one).
#[derive(sqlx::FromRow)]
pub struct FixSessionListedRow {
    company_id: Uuid,
    company_name: String,
    fix_comp_id: String,
    next_sender_seq: Option<i64>,
    next_target_seq: Option<i64>,
    app_watermark: Option<i64>,
    reset_owed: Option<bool>,
    logged_on: Option<bool>,
    last_message_at: Option<Ts>,
    created_at: Option<Ts>,
    owner_node: Option<String>,
    owner_until: Option<Ts>,
}

impl FixSessionListedRow {
    pub fn into_model(self) -> FixSessionListed {
        let company_id = CompanyId(self.company_id);
        let session = self.created_at.map(|created_at| FixSession {
            company_id,
            next_sender_seq: self.next_sender_seq.unwrap_or(1),
            next_target_seq: self.next_target_seq.unwrap_or(1),
            app_watermark: self.app_watermark.unwrap_or(0),
            reset_owed: self.reset_owed.unwrap_or(false),
            logged_on: self.logged_on.unwrap_or(false),
            last_message_at: self.last_message_at.map(|t| t.0),
            created_at: created_at.0,
            owner_node: self.owner_node,
            owner_until: self.owner_until.map(|t| t.0),
        });
        FixSessionListed { company_id, company_name: self.company_name, fix_comp_id: self.fix_comp_id, session }
    }
}

#[derive(sqlx::FromRow)]
pub struct FixOutboxRow {
    fix_outbox_id: String,
    company_id: Uuid,
    report: Json<upstairs_engine::fix::FixReport>,
    created_at: Ts,
    sent_seq: Option<i64>,
}

impl FixOutboxRow {
    pub fn into_model(self) -> FixOutboxMessage {
        FixOutboxMessage {
            fix_outbox_id: self.fix_outbox_id,
            company_id: CompanyId(self.company_id),
            report: self.report.0,
            created_at: self.created_at.0,
            sent_seq: self.sent_seq,
        }
    }
}

#[derive(sqlx::FromRow)]
pub struct StoredFixRow {
    seq: i64,
    msg_type: String,
    frame: Vec<u8>,
}

impl StoredFixRow {
    pub fn into_model(self) -> StoredFixMessage {
        StoredFixMessage { seq: self.seq, msg_type: self.msg_type, frame: self.frame }
    }
}

#[derive(sqlx::FromRow)]
pub struct BacklogRow {
    emails: i64,
    oldest_email: Option<Ts>,
    fix_messages: i64,
    oldest_fix_message: Option<Ts>,
    timers_due: i64,
    oldest_due: Option<Ts>,
    stale_instruments: i64,
}

impl BacklogRow {
    pub fn into_model(self) -> Backlog {
        Backlog {
            emails: self.emails,
            oldest_email: self.oldest_email.map(|t| t.0),
            fix_messages: self.fix_messages,
            oldest_fix_message: self.oldest_fix_message.map(|t| t.0),
            timers_due: self.timers_due,
            oldest_due: self.oldest_due.map(|t| t.0),
            stale_instruments: self.stale_instruments,
        }
    }
}

/// One blocked firm of a counterparty filter (none: the filter alone), as
/// `counterparty_filters` reads them.
#[derive(sqlx::FromRow)]
pub struct CounterpartyRow {
    pub owner_id: Uuid,
    pub company_id: Uuid,
    pub min_reliability_score: Option<i64>,
    pub updated_at: Ts,
    pub blocked_company_id: Option<Uuid>,
}

/// A company's account (ADR 0045).
#[derive(sqlx::FromRow)]
pub struct AccountRow {
    pub account_id: Uuid,
    pub company_id: Uuid,
    pub code: String,
    pub name: String,
    pub active: bool,
    pub created_at: Ts,
    pub updated_at: Ts,
}

impl AccountRow {
    pub fn into_model(self) -> CompanyAccount {
        CompanyAccount {
            account_id: self.account_id,
            company_id: CompanyId(self.company_id),
            code: self.code,
            name: self.name,
            active: self.active,
            created_at: self.created_at.0,
            updated_at: self.updated_at.0,
        }
    }
}

/// A trade's allocation (ADR 0045), its lines as JSON.
#[derive(sqlx::FromRow)]
pub struct AllocationRow {
    pub order_id: Uuid,
    pub version: i64,
    pub give_up_broker_id: Option<Uuid>,
    pub lines: String,
    pub ack: String,
    pub ack_text: Option<String>,
    pub updated_by: Uuid,
    pub updated_at: Ts,
}

impl AllocationRow {
    pub fn into_model(self) -> StoreResult<Allocation> {
        Ok(Allocation {
            order_id: OrderId(self.order_id),
            version: self.version,
            give_up_broker_id: self.give_up_broker_id.map(CompanyId),
            lines: allocation_lines(&self.lines)?,
            ack: AllocationAck::parse(&self.ack)
                .ok_or_else(|| StoreError::Other(format!("unknown ack {}", self.ack)))?,
            ack_text: self.ack_text,
            updated_by: UserId(self.updated_by),
            updated_at: self.updated_at.0,
        })
    }
}

/// An allocation's lines as stored.
pub fn allocation_lines(json: &str) -> StoreResult<Vec<AllocationLine>> {
    serde_json::from_str(json).map_err(|e| StoreError::Other(format!("allocation lines: {e}")))
}

/// An instrument setting as `repos::SETTINGS` reads it.
pub type SettingRow = (Uuid, Uuid, Ts, Dec, Option<Dec>, i64, Option<Uuid>, Option<String>, Ts, Option<Ts>);

pub fn setting(r: SettingRow) -> InstrumentSetting {
    InstrumentSetting {
        setting_id: r.0,
        instrument_id: InstrumentId(r.1),
        effective_from: r.2.0,
        tick_size: r.3.0,
        exchange_tick_size: r.4.map(|d| d.0),
        min_quantity: r.5,
        created_by: r.6.map(UserId),
        created_by_email: r.7,
        created_at: r.8.0,
        applied_at: r.9.map(|t| t.0),
    }
}

/// The market-data session as `market_data_session` reads it: the row, whether its node
/// holds the lease, and the stale instruments.
pub type MarketDataRow = (String, String, String, String, bool, Ts, Option<Ts>, i32, Ts, bool, i64);

pub fn market_data_row(r: MarketDataRow) -> (MarketDataSession, bool, i64) {
    let s = MarketDataSession {
        node_id: r.0,
        provider: r.1,
        sender_comp_id: r.2,
        target_comp_id: r.3,
        logged_on: r.4,
        since: r.5.0,
        last_price_at: r.6.map(|t| t.0),
        symbols: r.7,
        updated_at: r.8.0,
    };
    (s, r.9, r.10)
}

/// An exchange as `repos::EXCHANGES` reads it, with its count of instruments.
pub type ExchangeRow = (String, String, String, String, String, String, String, String, Ts, Ts, i64);

pub fn exchange_row(r: ExchangeRow) -> StoreResult<(Exchange, i64)> {
    let calendar = upstairs_domain::calendar::Calendar::from_stored(&r.2, &r.3, &r.4, &r.5, &r.6, &r.7)
        .map_err(|e| StoreError::Other(format!("exchange {}: stored {e}", r.0)))?;
    Ok((Exchange { mic: r.0, name: r.1, calendar, created_at: r.8.0, updated_at: r.9.0 }, r.10))
}
