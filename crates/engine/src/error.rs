//! Typed errors of the engine; the HTTP edge alone maps them to statuses.

use upstairs_domain::FieldError;

/// A failure of the storage layer. The cause is logged, never shown to users.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A unique constraint was violated; carries the constraint or column name.
    #[error("unique violation on {0}")]
    Unique(String),
    /// A compare-and-set found the row changed by someone else since it was read.
    #[error("stale write: {0}")]
    Stale(String),
    /// A `CHECK` constraint refused the write (e.g. a negative tradable quantity).
    #[error("check violation on {0}")]
    Check(String),
    /// The database is busy or the transaction lost a serialisation race; safe to retry.
    #[error("database busy: {0}")]
    Busy(String),
    #[error("database error: {0}")]
    Other(String),
}

/// What a use case answers when it cannot do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("not found: {0}")]
    NotFound(String),
    /// No valid session.
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    #[error("forbidden: {0}")]
    Forbidden(String),
    #[error("conflict: {detail}")]
    Conflict { detail: String, errors: Vec<FieldError> },
    /// Input breaks a rule; `errors` names the fields.
    #[error("invalid: {detail}")]
    Invalid { detail: String, errors: Vec<FieldError> },
    /// A link or token that was valid once but no longer is.
    #[error("gone: {0}")]
    Gone(String),
    #[error("rate limited: {0}")]
    TooManyRequests(String),
    #[error("service unavailable: {0}")]
    Unavailable(String),
    #[error("internal: {0}")]
    Internal(String),
}

impl EngineError {
    /// A validation error on a single field.
    pub fn invalid(field: &str, message: &str) -> Self {
        EngineError::Invalid { detail: message.to_owned(), errors: vec![FieldError::new(field, message)] }
    }

    pub fn invalid_many(errors: Vec<FieldError>) -> Self {
        let detail = match errors.as_slice() {
            [one] => one.message.clone(),
            _ => "Some fields are not valid.".to_owned(),
        };
        EngineError::Invalid { detail, errors }
    }
}

impl From<StoreError> for EngineError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Busy(m) => {
                tracing::warn!(cause = %m, "database busy");
                EngineError::Unavailable("The venue is busy. Please try again.".into())
            }
            StoreError::Stale(what) => {
                tracing::info!(%what, "lost a compare-and-set race");
                EngineError::Conflict {
                    detail: "This order changed meanwhile. Please reload and try again.".into(),
                    errors: vec![],
                }
            }
            StoreError::Check(constraint) => {
                tracing::warn!(%constraint, "the database refused a write");
                EngineError::Conflict {
                    detail: "The quantity exceeds what the parent order has left to trade.".into(),
                    errors: vec![],
                }
            }
            other => EngineError::Internal(other.to_string()),
        }
    }
}
