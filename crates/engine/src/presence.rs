//! Who has a realtime session on this node. The hub counts the sessions here, and the
//! fan-out reads another node's change back only when a session here will hear of it
//! (ADR 0026). The node's presence leases follow it: a user who arrives or whose last
//! session here closes wakes the loop that writes them (ADR 0043).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::Notify;
use upstairs_domain::{CompanyId, UserId};

use crate::model::Holder;

/// Open sessions on this node: users' realtime sessions and companies' FIX sessions.
#[derive(Default)]
pub struct Presence {
    open: Mutex<HashMap<Holder, usize>>,
    /// Holders whose last session here closed since the loop last looked.
    left: Mutex<Vec<Holder>>,
    /// Holders whose first session here opened since the loop last looked.
    arrived: Mutex<Vec<Holder>>,
    /// When the loop last renewed every lease of this node (the engine's clock).
    renewed_all: Mutex<Option<chrono::DateTime<chrono::Utc>>>,
    changed: Notify,
    /// One presence pass at a time on this node: a pass that read who is here must not
    /// renew a lease after a later pass ended it.
    pub(crate) passes: tokio::sync::Mutex<()>,
}

/// One open session, counted while it lives.
pub struct PresenceSlot {
    holder: Holder,
    presence: Arc<Presence>,
}

impl Presence {
    /// Counts a session of `user`; `None` when the user already has `max` open here.
    pub fn open(self: &Arc<Self>, user: UserId, max: usize) -> Option<PresenceSlot> {
        self.count(Holder::User(user), max)
    }

    /// Counts the company's FIX session held here while the slot lives; `None` when it is
    /// counted already (a company has one session).
    pub fn open_fix(self: &Arc<Self>, company: CompanyId) -> Option<PresenceSlot> {
        self.count(Holder::Fix(company), 1)
    }

    fn count(self: &Arc<Self>, holder: Holder, max: usize) -> Option<PresenceSlot> {
        let mut s = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let n = s.entry(holder).or_insert(0);
        if *n >= max {
            return None;
        }
        *n += 1;
        if *n == 1 {
            self.arrived.lock().unwrap_or_else(PoisonError::into_inner).push(holder);
            self.changed.notify_one();
        }
        Some(PresenceSlot { holder, presence: self.clone() })
    }

    /// The holders with a session here now.
    pub fn here(&self) -> Vec<Holder> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner).keys().copied().collect()
    }

    /// The holders whose last session here closed since the last call, and who have not
    /// come back since.
    pub fn take_left(&self) -> Vec<Holder> {
        let left = std::mem::take(&mut *self.left.lock().unwrap_or_else(PoisonError::into_inner));
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let mut left: Vec<Holder> = left.into_iter().filter(|u| !open.contains_key(u)).collect();
        left.sort();
        left.dedup();
        left
    }

    /// The holders whose first session here opened since the last call, and who are
    /// still here.
    pub fn take_arrived(&self) -> Vec<Holder> {
        let arrived = std::mem::take(&mut *self.arrived.lock().unwrap_or_else(PoisonError::into_inner));
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let mut arrived: Vec<Holder> = arrived.into_iter().filter(|h| open.contains_key(h)).collect();
        arrived.sort();
        arrived.dedup();
        arrived
    }

    /// Whether every lease of this node is due to be renewed at `now`: never renewed, or
    /// last renewed `every` ago.
    pub(crate) fn all_due(&self, now: chrono::DateTime<chrono::Utc>, every: chrono::Duration) -> bool {
        self.renewed_all.lock().unwrap_or_else(PoisonError::into_inner).is_none_or(|at| at + every <= now)
    }

    /// Every lease of this node was renewed at `at`.
    pub(crate) fn renewed_all(&self, at: chrono::DateTime<chrono::Utc>) {
        *self.renewed_all.lock().unwrap_or_else(PoisonError::into_inner) = Some(at);
    }

    /// Resolves when a user arrived here or left since the last wake-up.
    pub async fn changed(&self) {
        self.changed.notified().await;
    }

    /// Open realtime sessions on this node.
    pub fn total(&self) -> usize {
        let s = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        s.iter().filter(|(h, _)| matches!(h, Holder::User(_))).map(|(_, n)| n).sum()
    }

    /// Whether `user` has a realtime session open here.
    pub fn has(&self, user: UserId) -> bool {
        self.open.lock().unwrap_or_else(PoisonError::into_inner).contains_key(&Holder::User(user))
    }
}

impl Drop for PresenceSlot {
    fn drop(&mut self) {
        let mut s = self.presence.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = s.get_mut(&self.holder) {
            *n -= 1;
            if *n == 0 {
                s.remove(&self.holder);
                self.presence.left.lock().unwrap_or_else(PoisonError::into_inner).push(self.holder);
                self.presence.changed.notify_one();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_sessions_by_user_up_to_the_limit() {
        let p = Arc::new(Presence::default());
        let (a, b) = (UserId::new(), UserId::new());
        let first = p.open(a, 2).unwrap();
        let second = p.open(a, 2).unwrap();
        assert!(p.open(a, 2).is_none(), "a third over the limit of 2");
        let other = p.open(b, 2).unwrap();
        assert_eq!(p.total(), 3);
        drop(first);
        assert!(p.has(a));
        assert!(p.take_left().is_empty());
        drop(second);
        assert!(!p.has(a), "no session of a left");
        assert_eq!(p.take_left(), vec![Holder::User(a)], "a left");
        assert!(p.take_left().is_empty(), "told once");
        assert!(p.has(b));
        drop(other);
        assert_eq!(p.total(), 0);
    }

    #[test]
    fn one_who_left_and_came_back_is_not_told_and_fix_sessions_are_not_realtime_ones() {
        let p = Arc::new(Presence::default());
        let (a, firm) = (UserId::new(), CompanyId::new());
        drop(p.open(a, 2).unwrap());
        let back = p.open(a, 2).unwrap();
        assert!(p.take_left().is_empty(), "back before the loop looked");
        let fix = p.open_fix(firm).unwrap();
        assert!(p.open_fix(firm).is_none(), "one session per company");
        assert_eq!((p.total(), p.here().len()), (1, 2));
        drop(fix);
        assert_eq!(p.take_left(), vec![Holder::Fix(firm)]);
        assert_eq!(p.take_arrived(), vec![Holder::User(a)], "one who is here, once however often they came");
        assert!(p.take_arrived().is_empty());
        drop(back);
    }
}
