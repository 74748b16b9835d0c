//! Secrets: random tokens stored as SHA-256, passwords as argon2id.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use rand::RngCore;
use sha2::{Digest, Sha256};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use tokio::sync::Semaphore;

use crate::error::EngineError;

/// A fresh 256-bit random token, URL-safe hex.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// The form a token is stored in.
pub fn token_hash(token: &str) -> String {
    digest(token.as_bytes())
}

/// SHA-256 of some bytes, hex.
pub fn digest(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn argon2() -> Argon2<'static> {
    // OWASP's argon2id baseline: m = 19 MiB, t = 2, p = 1.
    #[allow(clippy::unwrap_used)] // constant parameters within argon2's documented bounds
    let params = Params::new(19 * 1024, 2, 1, None).unwrap();
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// Argon2 runs at most this many at once: twice the cores (each holds 19 MiB).
pub fn hashing_slots() -> usize {
    2 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub const HASHING_BUSY: &str = "The venue is busy signing users in. Please try again in a moment.";

/// The engine's password hashing: a few slots, and a short bounded queue in front of them
/// (a waiting request holds no hashing memory). Beyond the queue, or after waiting
/// `max_wait`, the answer is 503.
pub struct Hashing {
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
    max_waiting: usize,
    max_wait: std::time::Duration,
}

impl Default for Hashing {
    fn default() -> Self {
        Self::new(hashing_slots(), 16 * hashing_slots(), std::time::Duration::from_secs(3))
    }
}

impl Hashing {
    pub fn new(slots: usize, max_waiting: usize, max_wait: std::time::Duration) -> Self {
        Self { slots: Arc::new(Semaphore::new(slots)), waiting: AtomicUsize::new(0), max_waiting, max_wait }
    }

    async fn slot(&self) -> Result<tokio::sync::OwnedSemaphorePermit, EngineError> {
        let busy = || EngineError::Unavailable(HASHING_BUSY.into());
        if let Ok(p) = self.slots.clone().try_acquire_owned() {
            return Ok(p);
        }
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.max_waiting {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(busy());
        }
        let got = tokio::time::timeout(self.max_wait, self.slots.clone().acquire_owned()).await;
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        match got {
            Ok(Ok(p)) => Ok(p),
            _ => Err(busy()),
        }
    }

    /// Hashes off the async runtime: argon2 takes tens of milliseconds of CPU.
    pub async fn hash_password(&self, password: String) -> Result<String, EngineError> {
        hash_password_in(self.slot().await?, password).await
    }

    /// [`verify_password`] in one of the slots.
    pub async fn verify_password(&self, password: String, stored: Option<String>) -> Result<bool, EngineError> {
        verify_password_in(self.slot().await?, password, stored).await
    }
}

async fn hash_password_in(slot: tokio::sync::OwnedSemaphorePermit, password: String) -> Result<String, EngineError> {
    tokio::task::spawn_blocking(move || {
        let _slot = slot;
        let salt = SaltString::generate(&mut rand::rngs::OsRng);
        argon2()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| EngineError::Internal(format!("hash password: {e}")))
    })
    .await
    .map_err(|e| EngineError::Internal(format!("hash task: {e}")))?
}

/// Verifies off the async runtime. With no stored hash it still spends the same work
/// on a dummy hash, so timing does not tell whether an account exists.
async fn verify_password_in(
    slot: tokio::sync::OwnedSemaphorePermit,
    password: String,
    stored: Option<String>,
) -> Result<bool, EngineError> {
    tokio::task::spawn_blocking(move || {
        let _slot = slot;
        let (phc, real) = match stored {
            Some(h) => (h, true),
            None => (dummy_hash().to_owned(), false),
        };
        let parsed = PasswordHash::new(&phc).map_err(|e| EngineError::Internal(format!("stored hash: {e}")))?;
        let ok = argon2().verify_password(password.as_bytes(), &parsed).is_ok();
        Ok(ok && real)
    })
    .await
    .map_err(|e| EngineError::Internal(format!("verify task: {e}")))?
}

fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| {
        let salt = SaltString::generate(&mut rand::rngs::OsRng);
        #[allow(clippy::unwrap_used)] // hashing a constant with valid parameters cannot fail
        argon2().hash_password(b"dummy-password-for-timing", &salt).unwrap().to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_hash_is_stable() {
        let a = new_token();
        let b = new_token();
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        assert_eq!(token_hash(&a), token_hash(&a));
        assert_ne!(token_hash(&a), a);
    }

    #[tokio::test]
    async fn password_hash_round_trip_uses_argon2id() {
        let hashing = Hashing::default();
        let h = hashing.hash_password("Valid-Pass1".into()).await.unwrap();
        assert!(h.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{h}");
        assert!(hashing.verify_password("Valid-Pass1".into(), Some(h.clone())).await.unwrap());
        assert!(!hashing.verify_password("Wrong-Pass1".into(), Some(h)).await.unwrap());
        assert!(!hashing.verify_password("dummy-password-for-timing".into(), None).await.unwrap());
    }

    #[tokio::test]
    async fn a_full_hashing_pool_answers_busy_instead_of_queueing_without_end() {
        // One slot, one waiter, a short wait: of four at once, two hash and two are refused.
        let hashing = Arc::new(Hashing::new(1, 1, std::time::Duration::from_secs(30)));
        let tries: Vec<_> = (0..4)
            .map(|_| {
                let h = hashing.clone();
                tokio::spawn(async move { h.verify_password("x".into(), None).await })
            })
            .collect();
        let mut results = Vec::new();
        for t in tries {
            results.push(t.await.unwrap());
        }
        let busy = results.iter().filter(|r| matches!(r, Err(EngineError::Unavailable(_)))).count();
        assert_eq!((results.len() - busy, busy), (2, 2), "{results:?}");
        // A waiter that waits too long is refused too.
        let hashing = Hashing::new(1, 8, std::time::Duration::ZERO);
        let _held = hashing.slots.clone().try_acquire_owned().unwrap();
        assert!(matches!(hashing.verify_password("x".into(), None).await, Err(EngineError::Unavailable(_))));
    }
}
