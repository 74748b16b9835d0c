//! Events published after commit; the STOMP hub routes them to sessions.

use serde_json::Value;
use tokio::sync::broadcast;
use upstairs_domain::UserId;

/// Who receives an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// A per-user destination such as `/user/topic/notifications`: only that user's sessions.
    User { user_id: UserId, destination: String },
    /// A shared topic such as `/topic/instruments/{id}/book`.
    Topic(String),
    /// Not delivered: some sessions of this user ended (logout, deactivation, new password),
    /// so its open sockets re-check their session at once.
    SessionsEnded(UserId),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub to: Destination,
    pub body: Value,
}

impl Event {
    pub fn sessions_ended(user_id: UserId) -> Self {
        Self { to: Destination::SessionsEnded(user_id), body: Value::Null }
    }

    pub fn to_user(user_id: UserId, destination: &str, body: Value) -> Self {
        Self { to: Destination::User { user_id, destination: destination.to_owned() }, body }
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
