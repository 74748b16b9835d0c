//! The wire side of engine events: which STOMP destination each one goes to and the JSON
//! it carries. The payload types are in the OpenAPI components, so the web app's
//! realtime handlers use generated types too.

use rust_decimal::Decimal;
use serde::Serialize;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;
use upstairs_domain::{CompanyId, InstrumentId, UserId};
use upstairs_engine::Event;
use upstairs_engine::orders::Book;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::dto::{decimal_schema, nullable_decimal_schema};

/// Per-user destination of order and parent order changes.
pub const ORDERS: &str = "/user/topic/orders";

/// Per-user destination of RFQ changes (`RfqMessage`).
pub const RFQS: &str = "/user/topic/rfqs";

/// Per-user destination of notifications (`NotificationMessage`), new or changed.
pub const NOTIFICATIONS: &str = "/user/topic/notifications";

/// The shared topic of one instrument's anonymous book.
pub fn book_destination(instrument_id: InstrumentId) -> String {
    format!("/topic/instruments/{instrument_id}/book")
}

/// Per-user destination of the user's company's own share of the books it rests orders
/// in (`BookShareMessage`): what the REST book marks as own, which the shared topic never
/// carries.
pub const BOOK_SHARES: &str = "/user/topic/book-shares";

/// `/topic/instruments/{id}/book`: the anonymous book of one instrument, best price
/// first, without any company's own share, with the band and the best prices (what
/// `GET .../market-data` answers). Pushed at most about every 50 ms per instrument,
/// always ending on the latest state (ADR 0011); the client writes it into its cache
/// (ADR 0029).
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct BookMessage {
    /// 1, 2, 3 … per instrument on the node that sent it: a number skipped means a frame
    /// was missed, and the client reads the book again (ADR 0029).
    pub seq: u64,
    pub instrument_id: Uuid,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub tick_size: Decimal,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub min_tick_price: Decimal,
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub max_tick_price: Decimal,
    /// The highest price with a buy quantity; null while no one buys.
    #[serde(with = "rust_decimal::serde::arbitrary_precision_option")]
    #[schema(schema_with = nullable_decimal_schema, required = true)]
    pub best_buy_price: Option<Decimal>,
    /// The lowest price with a sell quantity; null while no one sells.
    #[serde(with = "rust_decimal::serde::arbitrary_precision_option")]
    #[schema(schema_with = nullable_decimal_schema, required = true)]
    pub best_sell_price: Option<Decimal>,
    /// No recent exchange price: takes and accepts on it are refused until one comes (ADR 0048).
    pub prices_stale: bool,
    pub levels: Vec<BookMessageLevel>,
}

/// One price level of the shared book.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct BookMessageLevel {
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub price: Decimal,
    pub buy_quantity: i64,
    pub sell_quantity: i64,
}

impl From<&Book> for BookMessage {
    /// The anonymous view (whatever `own` the book was read with); `seq` is set by the pusher.
    fn from(b: &Book) -> Self {
        Self {
            seq: 0,
            instrument_id: b.instrument.instrument_id.0,
            tick_size: b.instrument.tick_size.normalize(),
            min_tick_price: b.instrument.min_tick_price.normalize(),
            max_tick_price: b.instrument.max_tick_price.normalize(),
            best_buy_price: b.best_buy().map(|p| p.normalize()),
            best_sell_price: b.best_sell().map(|p| p.normalize()),
            prices_stale: b.instrument.prices_stale,
            levels: b
                .snapshot
                .seen_by(None)
                .iter()
                .map(|l| BookMessageLevel {
                    price: l.price.normalize(),
                    buy_quantity: l.buy_quantity,
                    sell_quantity: l.sell_quantity,
                })
                .collect(),
        }
    }
}

/// `/user/topic/book-shares`: the user's company's share of one instrument's book changed
/// (sent after the book frame of the same read). `levels` lists every price where the
/// company rests something, as the REST book's `own_*_quantity` shows it; an empty list
/// means nothing any more. Only that company's sessions receive it.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct BookShareMessage {
    /// 1, 2, 3 … per company on the node that sent it (across instruments): a number
    /// skipped means a frame was missed, and the client reads its books again.
    pub seq: u64,
    pub instrument_id: Uuid,
    pub levels: Vec<BookShareLevel>,
}

/// The company's own quantity at one price.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct BookShareLevel {
    #[serde(with = "rust_decimal::serde::arbitrary_precision")]
    #[schema(schema_with = decimal_schema)]
    pub price: Decimal,
    pub own_buy_quantity: i64,
    pub own_sell_quantity: i64,
}

/// `/user/topic/orders`: one of the user's child or parent orders changed; the frame
/// carries it as the user's lists show it (`GET /orders`, `GET /parent-orders`), and the
/// client writes it into the list it holds (ADR 0029).
#[derive(Debug, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OrderMessage {
    OrderUpdated(OrderUpdated),
    ParentOrderUpdated(ParentOrderUpdated),
    AllocationUpdated(AllocationUpdated),
}

/// A child order changed (created, edited, cancelled, expired, matched): as `GET /orders`
/// lists it.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrderUpdated {
    /// 1, 2, 3 … per user on the node that sent it, shared by `/user/topic/orders`'s
    /// frames: a number skipped means a frame was missed, and the client reads its lists
    /// again (ADR 0029).
    pub seq: u64,
    #[serde(flatten)]
    pub order: crate::routes::orders::OrderDto,
}

/// A parent order changed (created, cancelled, or its quantities moved): as
/// `GET /parent-orders` lists it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ParentOrderUpdated {
    /// As `OrderUpdated::seq` (one sequence for the destination).
    pub seq: u64,
    #[serde(flatten)]
    pub parent: crate::routes::orders::ParentOrderDto,
}

/// The allocation of one of the user's trades was written or answered by its broker: as
/// `GET /allocations` lists it (ADR 0045).
#[derive(Debug, Serialize, ToSchema)]
pub struct AllocationUpdated {
    /// As `OrderUpdated::seq` (one sequence for the destination).
    pub seq: u64,
    #[serde(flatten)]
    pub allocation: crate::routes::allocations::AllocationDto,
}

/// `/user/topic/rfqs`: an RFQ the user's company sent, or one addressed to it, was sent,
/// quoted, declined, accepted or ended; the frame carries it as the user's panel lists it
/// (`GET /rfqs`, `GET /rfqs/all/responses`), and the client writes it into that list.
#[derive(Debug, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RfqMessage {
    RfqUpdated(RfqUpdated),
    IncomingRfqUpdated(IncomingRfqUpdated),
}

/// An RFQ the user sent: as `GET /rfqs` lists it, with every response.
#[derive(Debug, Serialize, ToSchema)]
pub struct RfqUpdated {
    /// 1, 2, 3 … per user on the node that sent it, shared by `/user/topic/rfqs`'s frames: a
    /// number skipped means a frame was missed.
    pub seq: u64,
    #[serde(flatten)]
    pub rfq: crate::routes::rfqs::RfqDto,
}

/// An RFQ addressed to the user's company: as `GET /rfqs/all/responses` lists it, with
/// the company's own response.
#[derive(Debug, Serialize, ToSchema)]
pub struct IncomingRfqUpdated {
    /// As `RfqUpdated::seq` (one sequence for the destination).
    pub seq: u64,
    #[serde(flatten)]
    pub rfq: crate::routes::rfqs::IncomingRfqDto,
}

/// `/user/topic/notifications`: one of the user's notifications as `GET /notifications`
/// lists it, new or changed (its status, its flags); the client writes it into the list
/// it holds and reads the list again only when a number was skipped or on reconnect.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct NotificationMessage {
    /// 1, 2, 3 … per user on the node that sent it: a number skipped means a frame was missed.
    pub seq: u64,
    #[serde(flatten)]
    pub notification: crate::routes::notifications::NotificationDto,
}

/// Who receives a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Audience {
    /// Only this user's sessions (a `/user/...` destination).
    User(UserId),
    /// The sessions of this company's users (a `/user/...` destination: its own share).
    Company(CompanyId),
    /// Every session subscribed to the topic (subscribing checked the caller may see it).
    Subscribers,
}

/// What the hub hands every session: an encoded message, or a session check.
#[derive(Clone, Debug, PartialEq)]
pub enum Outgoing {
    /// One MESSAGE body for each subscription to `destination` of the audience's sessions,
    /// encoded once for all of them.
    Message { audience: Audience, destination: Arc<str>, body: Arc<[u8]> },
    /// This user's sessions re-check their token at once.
    SessionsEnded(UserId),
}

impl Outgoing {
    /// Encodes `payload` as JSON for `destination`; `None` (logged) if it cannot be.
    pub fn message(audience: Audience, destination: &str, payload: &impl Serialize) -> Option<Self> {
        match serde_json::to_vec(payload) {
            Ok(body) => Some(Self::Message { audience, destination: destination.into(), body: body.into() }),
            Err(e) => {
                tracing::error!(error = %e, destination, "could not encode a realtime message");
                None
            }
        }
    }

    /// The message an engine event becomes, numbered from `seqs`; `None` for a book or
    /// instrument change, whose book is read back by the conflating pusher, and for an
    /// order or RFQ change, whose rows the per-user pushers read.
    pub fn of(event: &Event, seqs: &mut Sequences<UserId>) -> Option<Self> {
        match event {
            Event::NotificationChanged { user_id, notification } => Self::message(
                Audience::User(*user_id),
                NOTIFICATIONS,
                &NotificationMessage {
                    seq: seqs.next(*user_id, NOTIFICATIONS),
                    notification: crate::routes::notifications::NotificationDto::from(notification),
                },
            ),
            // A changed account is checked again like an ended session: its roles may have moved.
            Event::SessionsEnded { user_id } | Event::UserChanged { user_id } => Some(Self::SessionsEnded(*user_id)),
            // An instrument's band and tick reach subscribers in its book frame: a change of
            // them also says its book changed (`Engine::move_band`), so none is pushed twice.
            Event::BookChanged { .. }
            | Event::CompanyChanged { .. }
            | Event::CounterpartyFiltersChanged
            | Event::ExchangesChanged
            | Event::InstrumentChanged { .. } => None,
            // Their rows are read for the frame by the per-user pushers (`user_push`).
            Event::OrderChanged { .. }
            | Event::ParentOrderChanged { .. }
            | Event::AllocationChanged { .. }
            | Event::RfqChanged { .. } => None,
        }
    }
}

/// The next sequence number of each (owner, destination) on this node: 1, 2, 3 … with no
/// gap, so a client that sees one skipped knows it missed a frame (ADR 0029).
#[derive(Debug)]
pub struct Sequences<K> {
    last: HashMap<(K, &'static str), u64>,
}

impl<K> Default for Sequences<K> {
    fn default() -> Self {
        Self { last: HashMap::new() }
    }
}

impl<K: Hash + Eq> Sequences<K> {
    pub fn next(&mut self, owner: K, destination: &'static str) -> u64 {
        let n = self.last.entry((owner, destination)).or_insert(0);
        *n += 1;
        *n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn body(o: &Outgoing) -> serde_json::Value {
        match o {
            Outgoing::Message { body, .. } => serde_json::from_slice(body).unwrap(),
            Outgoing::SessionsEnded(_) => panic!("not a message"),
        }
    }

    #[test]
    fn decimals_are_json_numbers() {
        let level = BookMessageLevel {
            price: Decimal::from_str("94.7500").unwrap().normalize(),
            buy_quantity: 1,
            sell_quantity: 0,
        };
        assert_eq!(serde_json::to_value(&level).unwrap()["price"].to_string(), "94.75");
        let level = BookMessageLevel { price: Decimal::from_str("-0.035").unwrap(), buy_quantity: 1, sell_quantity: 0 };
        assert_eq!(serde_json::to_value(&level).unwrap()["price"].to_string(), "-0.035");
    }

    /// A notification of `user` as the engine publishes it (it carries its row).
    pub fn notification_of(user: UserId) -> Event {
        let now = chrono::Utc::now();
        Event::NotificationChanged {
            user_id: user,
            notification: upstairs_engine::model::Notification {
                notification_id: upstairs_domain::NotificationId::new(),
                user_id: user,
                notification_type: upstairs_domain::notification::NotificationType::MatchRequestReceived,
                status: upstairs_domain::match_request::MatchRequestState::Pending,
                instrument_id: upstairs_domain::InstrumentId::new(),
                subject: upstairs_engine::model::Subject::MatchRequest(upstairs_domain::MatchRequestId::new()),
                role: upstairs_domain::notification::Party::Responder,
                terms: None,
                read: false,
                archived: false,
                created_at: now,
                expired_at: now,
                updated_at: now,
            },
        }
    }

    #[test]
    fn frames_are_numbered_per_user_and_destination() {
        let user = UserId::new();
        let mut seqs = Sequences::default();
        let out = Outgoing::of(&notification_of(user), &mut seqs).unwrap();
        let Outgoing::Message { audience, destination, .. } = &out else { panic!("{out:?}") };
        assert_eq!((*audience, &**destination), (Audience::User(user), NOTIFICATIONS));
        assert_eq!(body(&out)["seq"], 1);
        assert_eq!(Outgoing::of(&Event::sessions_ended(user), &mut seqs), Some(Outgoing::SessionsEnded(user)));
        assert_eq!(Outgoing::of(&Event::book_changed(upstairs_domain::InstrumentId::new()), &mut seqs), None);
        // The next frame of this user is 2, another user's first is 1.
        assert_eq!(body(&Outgoing::of(&notification_of(user), &mut seqs).unwrap())["seq"], 2);
        assert_eq!(body(&Outgoing::of(&notification_of(UserId::new()), &mut seqs).unwrap())["seq"], 1);
    }
}
