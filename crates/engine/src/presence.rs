//! Who has a realtime session on this node. The hub counts the sessions here, and the
//! fan-out reads another node's change back only when a session here will hear of it
//! (ADR 0026).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use upstairs_domain::UserId;

/// Open realtime sessions on this node, by user.
#[derive(Default)]
pub struct Presence(Mutex<HashMap<UserId, usize>>);

/// One user's open session, counted while it lives.
pub struct PresenceSlot {
    user: UserId,
    presence: Arc<Presence>,
}

impl Presence {
    /// Counts a session of `user`; `None` when the user already has `max` open here.
    pub fn open(self: &Arc<Self>, user: UserId, max: usize) -> Option<PresenceSlot> {
        let mut s = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let n = s.entry(user).or_insert(0);
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(PresenceSlot { user, presence: self.clone() })
    }

    /// Open sessions on this node.
    pub fn total(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).values().sum()
    }

    /// Whether `user` has a session open here.
    pub fn has(&self, user: UserId) -> bool {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).contains_key(&user)
    }
}

impl Drop for PresenceSlot {
    fn drop(&mut self) {
        let mut s = self.presence.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = s.get_mut(&self.user) {
            *n -= 1;
            if *n == 0 {
                s.remove(&self.user);
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
        drop(second);
        assert!(!p.has(a), "no session of a left");
        assert!(p.has(b));
        drop(other);
        assert_eq!(p.total(), 0);
    }
}
