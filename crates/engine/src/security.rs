//! Secrets: random tokens stored as SHA-256, passwords as argon2id.

use argon2::password_hash::{self, Output, ParamsString, PasswordHash, Salt, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use rand::RngCore;
use sha2::{Digest, Sha256};
use std::cell::RefCell;
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

/// OWASP's argon2id baseline: m = 19 MiB, t = 2, p = 1.
fn params() -> Params {
    #[allow(clippy::unwrap_used)] // constant parameters within argon2's documented bounds
    Params::new(19 * 1024, 2, 1, None).unwrap()
}

thread_local! {
    /// The argon2 memory of this hashing thread, allocated once and reused by every hash
    /// it computes. Allocating 19 MiB per hash instead fragments the allocator's heap
    /// until a flood of sign-ins holds hundreds of MiB (ADR 0024).
    static BLOCKS: RefCell<Vec<Block>> = const { RefCell::new(Vec::new()) };
}

/// argon2 of `password` with `salt` (PHC base64), in this thread's reused memory.
fn argon2_output(
    argon: &Argon2<'_>,
    params: &Params,
    password: &[u8],
    salt: Salt<'_>,
    len: usize,
) -> password_hash::Result<Output> {
    let mut salt_buf = [0u8; 64];
    let salt = salt.decode_b64(&mut salt_buf)?;
    BLOCKS.with_borrow_mut(|blocks| {
        blocks.resize(params.block_count(), Block::default());
        Output::init_with(len, |out| {
            argon.hash_password_into_with_memory(password, salt, out, &mut blocks[..]).map_err(Into::into)
        })
    })
}

/// A new PHC string of `password` with the baseline parameters and a fresh salt.
fn hash_phc(password: &[u8]) -> password_hash::Result<String> {
    let params = params();
    let argon = Argon2::new(Algorithm::Argon2id, Version::V0x13, params.clone());
    let salt = SaltString::generate(&mut rand::rngs::OsRng);
    let output = argon2_output(&argon, &params, password, salt.as_salt(), Params::DEFAULT_OUTPUT_LEN)?;
    let hash = PasswordHash {
        algorithm: Algorithm::Argon2id.ident(),
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(&params)?,
        salt: Some(salt.as_salt()),
        hash: Some(output),
    };
    Ok(hash.to_string())
}

/// Whether `password` matches a PHC string, with the parameters it names.
fn verify_phc(password: &[u8], phc: &PasswordHash<'_>) -> password_hash::Result<bool> {
    let (Some(salt), Some(expected)) = (phc.salt, &phc.hash) else {
        return Ok(false);
    };
    let params = Params::try_from(phc)?;
    let version = phc.version.map(Version::try_from).transpose()?.unwrap_or_default();
    let argon = Argon2::new(Algorithm::try_from(phc.algorithm)?, version, params.clone());
    let computed = argon2_output(&argon, &params, password, salt, expected.len())?;
    // `Output` compares in constant time.
    Ok(&computed == expected)
}

/// Argon2 runs at most this many at once: twice the cores (each holds 19 MiB).
pub fn hashing_slots() -> usize {
    2 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub const HASHING_BUSY: &str = "The venue is busy signing users in. Please try again in a moment.";

/// The engine's password hashing: a few slots, each a thread of its own, and a short
/// bounded queue in front of them (a waiting request holds no hashing memory). Beyond the
/// queue, or after waiting `max_wait`, the answer is 503. Own threads, not the runtime's
/// blocking pool: each thread's allocator keeps the 19 MiB it last used, so the memory
/// stays at slots × 19 MiB however many threads the blocking pool would have grown to.
pub struct Hashing {
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
    max_waiting: usize,
    max_wait: std::time::Duration,
    jobs: std::sync::mpsc::Sender<Job>,
}

type Job = Box<dyn FnOnce() + Send>;

impl Default for Hashing {
    fn default() -> Self {
        Self::new(hashing_slots(), 16 * hashing_slots(), std::time::Duration::from_secs(3))
    }
}

impl Hashing {
    pub fn new(slots: usize, max_waiting: usize, max_wait: std::time::Duration) -> Self {
        let (jobs, queue) = std::sync::mpsc::channel::<Job>();
        let queue = Arc::new(std::sync::Mutex::new(queue));
        for n in 0..slots {
            let queue = queue.clone();
            // The threads end when the engine (the sender) is dropped.
            let worker = move || {
                loop {
                    let job = queue.lock().unwrap_or_else(|p| p.into_inner()).recv();
                    match job {
                        Ok(job) => job(),
                        Err(_) => return,
                    }
                }
            };
            if let Err(e) = std::thread::Builder::new().name(format!("argon2-{n}")).spawn(worker) {
                tracing::error!(error = %e, "cannot start a password hashing thread");
            }
        }
        Self { slots: Arc::new(Semaphore::new(slots)), waiting: AtomicUsize::new(0), max_waiting, max_wait, jobs }
    }

    /// Runs `f` on a hashing thread while holding `slot`.
    async fn run<T: Send + 'static>(
        &self,
        slot: tokio::sync::OwnedSemaphorePermit,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, EngineError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _slot = slot;
            let _ = tx.send(f());
        });
        self.jobs.send(job).map_err(|_| EngineError::Internal("the hashing threads have stopped".into()))?;
        rx.await.map_err(|_| EngineError::Internal("a hashing job was lost".into()))
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
        let slot = self.slot().await?;
        self.run(slot, move || {
            hash_phc(password.as_bytes()).map_err(|e| EngineError::Internal(format!("hash password: {e}")))
        })
        .await?
    }

    /// Verifies off the async runtime. With no stored hash it still spends the same work
    /// on a dummy hash, so timing does not tell whether an account exists.
    pub async fn verify_password(&self, password: String, stored: Option<String>) -> Result<bool, EngineError> {
        let slot = self.slot().await?;
        self.run(slot, move || verify(&password, stored)).await?
    }
}

fn verify(password: &str, stored: Option<String>) -> Result<bool, EngineError> {
    let (phc, real) = match stored {
        Some(h) => (h, true),
        None => (dummy_hash().to_owned(), false),
    };
    let parsed = PasswordHash::new(&phc).map_err(|e| EngineError::Internal(format!("stored hash: {e}")))?;
    let ok = verify_phc(password.as_bytes(), &parsed).map_err(|e| EngineError::Internal(format!("verify: {e}")))?;
    Ok(ok && real)
}

fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| {
        #[allow(clippy::unwrap_used)] // hashing a constant with valid parameters cannot fail
        hash_phc(b"dummy-password-for-timing").unwrap()
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

    #[test]
    fn reused_memory_hashes_agree_with_the_stock_argon2() {
        use argon2::password_hash::{PasswordHasher, PasswordVerifier};
        // Hashes stored before, made by the crate's own hasher, still verify; ours verify there.
        let stock = Argon2::new(Algorithm::Argon2id, Version::V0x13, params());
        let salt = SaltString::generate(&mut rand::rngs::OsRng);
        let old = stock.hash_password(b"Valid-Pass1", &salt).unwrap().to_string();
        assert!(verify_phc(b"Valid-Pass1", &PasswordHash::new(&old).unwrap()).unwrap());
        assert!(!verify_phc(b"Valid-Pass2", &PasswordHash::new(&old).unwrap()).unwrap());
        let ours = hash_phc(b"Valid-Pass1").unwrap();
        assert!(stock.verify_password(b"Valid-Pass1", &PasswordHash::new(&ours).unwrap()).is_ok());
        // Other parameters (a cheaper hash from elsewhere) resize the memory and still verify.
        let cheap = Argon2::new(Algorithm::Argon2id, Version::V0x13, Params::new(1024, 1, 1, None).unwrap());
        let other = cheap.hash_password(b"pw-12345678", &salt).unwrap().to_string();
        assert!(verify_phc(b"pw-12345678", &PasswordHash::new(&other).unwrap()).unwrap());
        assert!(verify_phc(b"Valid-Pass1", &PasswordHash::new(&ours).unwrap()).unwrap());
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
