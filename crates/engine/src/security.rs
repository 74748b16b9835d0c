//! Secrets: random tokens stored as SHA-256, passwords as argon2id.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use rand::RngCore;
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

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

/// Hashes off the async runtime: argon2 takes tens of milliseconds of CPU.
pub async fn hash_password(password: String) -> Result<String, EngineError> {
    tokio::task::spawn_blocking(move || {
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
pub async fn verify_password(password: String, stored: Option<String>) -> Result<bool, EngineError> {
    tokio::task::spawn_blocking(move || {
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
        let h = hash_password("Valid-Pass1".into()).await.unwrap();
        assert!(h.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{h}");
        assert!(verify_password("Valid-Pass1".into(), Some(h.clone())).await.unwrap());
        assert!(!verify_password("Wrong-Pass1".into(), Some(h)).await.unwrap());
        assert!(!verify_password("dummy-password-for-timing".into(), None).await.unwrap());
    }
}
