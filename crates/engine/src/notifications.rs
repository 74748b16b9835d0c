//! Notifications (spec sections 3 and 4; ADR 0016): written in the transaction of the
//! change they tell of, pushed to their user after commit.

use chrono::{DateTime, Utc};
use serde_json::json;
use upstairs_domain::NotificationId;
use upstairs_domain::match_request::{MatchRequestEvent, MatchRequestState};
use upstairs_domain::notification::{NotificationType, Party, told_of};

use crate::Store;
use crate::context::{Actor, MAX_PAGE, MAX_PAGE_SIZE, audit};
use crate::core::service;
use crate::error::EngineError;
use crate::events::Event;
use crate::model::*;
use crate::ports::*;

/// What a caller may change on one of their notifications.
#[derive(Clone, Copy, Debug, Default)]
pub struct NotificationChanges {
    pub read: Option<bool>,
    pub archived: Option<bool>,
}

service!(
    /// Each user's notifications: written in the change's transaction, listed, read, archived.
    Notifications {}
);

impl<S: Store> Notifications<S> {
    /// A match request ended by `event` (`m` in its new state): the responder's received
    /// notification takes the new state, and each party `told_of` the event gets one (in
    /// `rows`, for the caller to write). Answers them all, to publish after commit.
    pub(crate) async fn notify_ended(
        &self,
        tx: &mut S::Tx,
        rows: &mut NewRows,
        m: &MatchRequest,
        event: MatchRequestEvent,
        now: DateTime<Utc>,
    ) -> Result<Vec<Notification>, EngineError> {
        let mut out = tx
            .set_match_request_notifications_status(
                m.match_request_id,
                NotificationType::MatchRequestReceived,
                m.state,
                now,
            )
            .await?;
        for (party, t) in told_of(event) {
            let n = new(m, party, t, now);
            rows.notifications.push(n.clone());
            out.push(n);
        }
        Ok(out)
    }

    pub(crate) fn publish_notifications(&self, ns: Vec<Notification>) {
        for n in ns {
            self.publish(Event::NotificationChanged { user_id: n.user_id, notification: n });
        }
    }

    /// The caller's notifications (archived or not, when asked), newest first unless not.
    pub async fn list(
        &self,
        actor: &Actor,
        archived: Option<bool>,
        newest_first: bool,
        page: i64,
        size: i64,
    ) -> Result<Page<Notification>, EngineError> {
        let mut tx = self.store.read().await?;
        let (page, size) = (page.clamp(0, MAX_PAGE), size.clamp(1, MAX_PAGE_SIZE));
        Ok(tx.notifications_of_user(actor.user.user_id, archived, newest_first, page, size).await?)
    }

    /// Marks one of the caller's notifications read or archived (another's: not found).
    pub async fn change(
        &self,
        actor: &Actor,
        id: NotificationId,
        changes: NotificationChanges,
    ) -> Result<Notification, EngineError> {
        let mut tx = self.store.write().await?;
        let mut n = tx
            .notification(id)
            .await?
            .filter(|n| n.user_id == actor.user.user_id)
            .ok_or_else(|| EngineError::NotFound("Notification not found.".into()))?;
        let before = json!({"read": n.read, "archived": n.archived});
        n.read = changes.read.unwrap_or(n.read);
        n.archived = changes.archived.unwrap_or(n.archived);
        n.updated_at = self.clock.now();
        tx.update_notification_flags(&n).await?;
        let after = json!({"read": n.read, "archived": n.archived});
        audit(
            &mut tx,
            n.updated_at,
            Some(actor.user.user_id),
            "notification",
            Some(id.0),
            "update",
            json!({"before": before, "after": after}),
        )
        .await?;
        tx.commit().await?;
        self.publish_notifications(vec![n.clone()]);
        Ok(n)
    }
}

fn new(m: &MatchRequest, party: Party, t: NotificationType, now: DateTime<Utc>) -> Notification {
    Notification {
        notification_id: NotificationId::new(),
        user_id: match party {
            Party::Requester => m.requesting_user_id,
            Party::Responder => m.responding_user_id,
        },
        notification_type: t,
        status: m.state,
        instrument_id: m.instrument_id,
        subject: Subject::MatchRequest(m.match_request_id),
        role: party,
        terms: Some(terms(m, party)),
        read: false,
        archived: false,
        created_at: now,
        expired_at: m.expires_at,
        updated_at: now,
    }
}

/// A match request's terms as `party` sees them: the taker's side is the request's.
pub(crate) fn terms(m: &MatchRequest, party: Party) -> Terms {
    let direction = match party {
        Party::Requester => m.direction,
        Party::Responder => m.direction.opposite(),
    };
    Terms { direction, quantity: m.quantity, price: m.price }
}

/// Both traders' notifications of a trade a broker declined (`m` broken down), to write
/// with the decline.
pub(crate) fn broker_rejected(m: &MatchRequest, now: DateTime<Utc>) -> Vec<Notification> {
    told_of(MatchRequestEvent::BrokerReject).into_iter().map(|(p, t)| new(m, p, t, now)).collect()
}

/// The owner's notification of an operator's correction of their order's limit price, to
/// write with it. It asks nothing: it is read, never answered.
pub(crate) fn price_corrected(before: &ChildOrder, after: &ChildOrder, now: DateTime<Utc>) -> Notification {
    Notification {
        notification_id: NotificationId::new(),
        user_id: after.created_by,
        notification_type: NotificationType::OrderPriceCorrected,
        // Done, nothing to answer.
        status: MatchRequestState::Accepted,
        instrument_id: after.instrument_id,
        subject: Subject::PriceCorrection { order_id: after.order_id, old_price: before.price, new_price: after.price },
        role: Party::Responder,
        terms: None,
        read: false,
        archived: false,
        created_at: now,
        expired_at: now,
        updated_at: now,
    }
}

/// The owner's notification of their working order cancelled when their connection
/// dropped (ADR 0043), to write with it: the order's side, quantity and price. Done,
/// nothing to answer.
pub(crate) fn cancelled_on_disconnect(order: &ChildOrder, now: DateTime<Utc>) -> Notification {
    Notification {
        notification_id: NotificationId::new(),
        user_id: order.created_by,
        notification_type: NotificationType::OrderCancelledOnDisconnect,
        status: MatchRequestState::Cancelled,
        instrument_id: order.instrument_id,
        subject: Subject::Order(order.order_id),
        role: Party::Responder,
        terms: Some(Terms { direction: order.direction, quantity: order.quantity, price: order.price }),
        read: false,
        archived: false,
        created_at: now,
        expired_at: now,
        updated_at: now,
    }
}

/// The responder's notification of a new match request, to write with it.
pub(crate) fn received(m: &MatchRequest) -> Notification {
    new(m, Party::Responder, NotificationType::MatchRequestReceived, m.created_at)
}
