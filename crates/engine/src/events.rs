//! Typed events published after commit. The engine says what changed; the edge
//! (`upstairs-http`) alone decides destinations and wire payloads (ADRs 0005, 0011).

use tokio::sync::broadcast;
use upstairs_domain::notification::Party;
use upstairs_domain::rfq::RfqState;
use upstairs_domain::{CompanyId, InstrumentId, RfqId, UserId};

use crate::model::{ChildOrder, Instrument, Notification, ParentOrder, ParentState};

/// Something that changed and that connected clients may want to hear about.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A child order was created, edited, cancelled or expired; `user_id` hears of it.
    OrderChanged { user_id: UserId, order: ChildOrder },
    /// A parent order was created or cancelled, or its quantities moved; `user_id` hears of
    /// it. Its row is read by whoever shows it (its quantities are the database's);
    /// `active` says whether it still is.
    ParentOrderChanged { user_id: UserId, parent_order_id: upstairs_domain::ParentOrderId, active: bool },
    /// The resting orders or the band of an instrument changed. It carries no book: the
    /// edge reads the book back, conflated per instrument: a burst of writes costs one read per window.
    BookChanged { instrument_id: InstrumentId },
    /// An instrument's reference data or band changed.
    InstrumentChanged { instrument: Instrument },
    /// An RFQ was sent, quoted, declined, accepted or ended; `user_id` (its requester, or a
    /// trader of an addressed provider, by `role`) hears of it.
    RfqChanged { user_id: UserId, rfq_id: RfqId, state: RfqState, role: Party },
    /// The allocation of `user_id`'s trade `order_id` was written or answered by its broker
    /// (ADR 0045). Its row is read by whoever shows it.
    AllocationChanged { user_id: UserId, order_id: upstairs_domain::OrderId },
    /// A notification to `user_id` was created or changed.
    NotificationChanged { user_id: UserId, notification: Notification },
    /// Not delivered: a company's reference data (its brokers) changed.
    CompanyChanged { company_id: CompanyId },
    /// Not delivered: a firm's or a trader's counterparty filter changed (ADR 0042).
    CounterpartyFiltersChanged,
    /// Not delivered: an exchange's calendar was created, changed or removed (ADR 0052).
    ExchangesChanged,
    /// Not delivered: some sessions of this user ended (logout, deactivation, new password),
    /// so its open sockets re-check their session at once.
    SessionsEnded { user_id: UserId },
    /// Not delivered: a user's account changed (roles, preferences, deactivation), so what
    /// a session knows of it is read again.
    UserChanged { user_id: UserId },
}

impl Event {
    pub fn order_changed(order: &ChildOrder) -> Self {
        Self::OrderChanged { user_id: order.created_by, order: order.clone() }
    }

    pub fn parent_order_changed(parent: &ParentOrder) -> Self {
        Self::ParentOrderChanged {
            user_id: parent.created_by,
            parent_order_id: parent.parent_order_id,
            active: parent.state == ParentState::Active,
        }
    }

    pub fn book_changed(instrument_id: InstrumentId) -> Self {
        Self::BookChanged { instrument_id }
    }

    pub fn instrument_changed(instrument: &Instrument) -> Self {
        Self::InstrumentChanged { instrument: instrument.clone() }
    }

    pub fn sessions_ended(user_id: UserId) -> Self {
        Self::SessionsEnded { user_id }
    }
}

pub trait EventPublisher: Send + Sync + 'static {
    fn publish(&self, event: Event);
}

/// In-process fan-out through a tokio broadcast channel.
#[derive(Clone)]
pub struct BroadcastPublisher {
    tx: broadcast::Sender<Event>,
}

impl BroadcastPublisher {
    pub fn new(capacity: usize) -> Self {
        let (tx, _) = broadcast::channel(capacity);
        Self { tx }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.tx.subscribe()
    }
}

impl EventPublisher for BroadcastPublisher {
    fn publish(&self, event: Event) {
        // No receiver means nobody is connected: nothing to deliver.
        let _ = self.tx.send(event);
    }
}

/// An event as it travels between nodes on one database: kinds and ids only (PostgreSQL
/// NOTIFY carries at most 8,000 bytes), the rest read back by the receiving node (ADR 0026).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub enum Announced {
    // `user` (the one user who hears of it) and `active` let a node with no session of
    // that user skip the read back; a node of an earlier version sends neither.
    Order {
        id: upstairs_domain::OrderId,
        #[serde(default)]
        user: Option<UserId>,
    },
    Parent {
        id: upstairs_domain::ParentOrderId,
        #[serde(default)]
        user: Option<UserId>,
        #[serde(default)]
        active: Option<bool>,
    },
    Book {
        id: InstrumentId,
    },
    Instrument {
        id: InstrumentId,
    },
    Rfq {
        user: UserId,
        rfq: RfqId,
        state: RfqState,
        role: Party,
    },
    Allocation {
        id: upstairs_domain::OrderId,
        user: UserId,
    },
    Notification {
        id: upstairs_domain::NotificationId,
        #[serde(default)]
        user: Option<UserId>,
    },
    Company {
        id: CompanyId,
    },
    CounterpartyFilters,
    Exchanges,
    /// A commit put messages in a company's FIX outbox: its session, wherever it is held,
    /// sends them now.
    FixQueued {
        company: CompanyId,
    },
    SessionsEnded {
        user: UserId,
    },
    User {
        user: UserId,
    },
}

impl Announced {
    pub fn of(event: &Event) -> Self {
        match event {
            Event::OrderChanged { user_id, order } => Self::Order { id: order.order_id, user: Some(*user_id) },
            Event::ParentOrderChanged { user_id, parent_order_id, active } => {
                Self::Parent { id: *parent_order_id, user: Some(*user_id), active: Some(*active) }
            }
            Event::BookChanged { instrument_id } => Self::Book { id: *instrument_id },
            Event::InstrumentChanged { instrument } => Self::Instrument { id: instrument.instrument_id },
            Event::RfqChanged { user_id, rfq_id, state, role } => {
                Self::Rfq { user: *user_id, rfq: *rfq_id, state: *state, role: *role }
            }
            Event::AllocationChanged { user_id, order_id } => Self::Allocation { id: *order_id, user: *user_id },
            Event::NotificationChanged { user_id, notification } => {
                Self::Notification { id: notification.notification_id, user: Some(*user_id) }
            }
            Event::CompanyChanged { company_id } => Self::Company { id: *company_id },
            Event::CounterpartyFiltersChanged => Self::CounterpartyFilters,
            Event::ExchangesChanged => Self::Exchanges,
            Event::SessionsEnded { user_id } => Self::SessionsEnded { user: *user_id },
            Event::UserChanged { user_id } => Self::User { user: *user_id },
        }
    }

    /// The one user a change is for, when it can be skipped without a read back: a node
    /// with no session of theirs has nothing to deliver, and no cache of its holds it (a
    /// parent still active; one that ended is dropped from the caches all the same).
    pub fn only_for(&self) -> Option<UserId> {
        match self {
            Self::Order { user, .. } | Self::Notification { user, .. } => *user,
            Self::Allocation { user, .. } => Some(*user),
            Self::Parent { user, active: Some(_), .. } => *user,
            _ => None,
        }
    }
}

/// One announcement on the wire: the node that published it (which skips its own) and
/// what changed.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Announcement {
    pub node: String,
    #[serde(flatten)]
    pub what: Announced,
}

impl Announcement {
    /// How every announcement of `node` begins on the wire (`node` is its first field):
    /// a node skips its own by these bytes, unread.
    pub fn prefix(node: &str) -> String {
        format!("{{\"node\":{}", serde_json::Value::from(node))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nodes_announcements_begin_with_its_prefix() {
        for node in ["n1", "node \"two\"\\"] {
            let a = Announcement { node: node.into(), what: Announced::Book { id: InstrumentId::new() } };
            let wire = serde_json::to_string(&a).unwrap();
            assert!(wire.starts_with(&Announcement::prefix(node)), "{wire}");
            assert!(!wire.contains('\n'), "one line each");
            assert!(!wire.starts_with(&Announcement::prefix("n")), "another node's prefix is not a prefix of it");
        }
    }

    #[test]
    fn an_announcement_names_its_one_user_unless_an_earlier_node_sent_it() {
        let (id, user) = (upstairs_domain::OrderId::new(), UserId::new());
        let a = Announcement { node: "n1".into(), what: Announced::Order { id, user: Some(user) } };
        let wire = serde_json::to_string(&a).unwrap();
        let back: Announcement = serde_json::from_str(&wire).unwrap();
        assert_eq!(back, a);
        assert_eq!(back.what.only_for(), Some(user));
        // As a node of the version before sends it: no user, so it is read back.
        let old: Announcement = serde_json::from_str(&format!(r#"{{"node":"n0","k":"order","id":"{id}"}}"#)).unwrap();
        assert_eq!(old.what, Announced::Order { id, user: None });
        assert_eq!(old.what.only_for(), None);
        let parent = upstairs_domain::ParentOrderId::new();
        let unsure = Announced::Parent { id: parent, user: Some(user), active: None };
        assert_eq!(unsure.only_for(), None, "a parent that may have ended is read back");
        assert_eq!(Announced::Book { id: InstrumentId::new() }.only_for(), None);
        // An allocation is its trader's alone: a node with no session of theirs skips it.
        let allocated = Event::AllocationChanged { user_id: user, order_id: id };
        let wire = serde_json::to_string(&Announcement { node: "n1".into(), what: Announced::of(&allocated) }).unwrap();
        assert_eq!(serde_json::from_str::<Announcement>(&wire).unwrap().what.only_for(), Some(user));
    }

    #[test]
    fn a_queued_fix_message_is_announced_by_its_company() {
        let company = CompanyId::new();
        let a = Announcement { node: "n1".into(), what: Announced::FixQueued { company } };
        let wire = serde_json::to_string(&a).unwrap();
        assert_eq!(wire, format!(r#"{{"node":"n1","k":"fix_queued","company":"{company}"}}"#));
        assert_eq!(serde_json::from_str::<Announcement>(&wire).unwrap(), a);
        assert_eq!(a.what.only_for(), None, "every node with the session may hold it");
    }
}
