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
    /// The database cannot write at all (read-only, disk full, I/O error): not a race.
    #[error("database cannot write: {0}")]
    Unwritable(String),
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
    /// Over a limit; `retry_after` whole seconds.
    #[error("rate limited: {detail}")]
    TooManyRequests { detail: String, retry_after: u64 },
    #[error("service unavailable: {0}")]
    Unavailable(String),
    /// An `Idempotency-Key` already used with a different request (ADR 0023).
    #[error("idempotency key reused: {0}")]
    KeyReused(String),
    /// A keyed write that another run with the same key already made: the edge answers
    /// with what that run created (ADR 0023).
    #[error("already done under this idempotency key")]
    Repeated,
    #[error("internal: {0}")]
    Internal(String),
}

impl EngineError {
    /// Over a limit, to retry after the wait given.
    pub fn too_many(detail: impl Into<String>, wait: crate::ratelimit::RetryAfter) -> Self {
        EngineError::TooManyRequests { detail: detail.into(), retry_after: wait.seconds() }
    }

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

/// What PostgreSQL's order trigger names when it refuses a stopped company's new child
/// order (the kill switch, ADR 0021).
pub const COMPANY_TRADING_STOPPED: &str = "company_trading_stopped";

/// The answer to a stopped company's attempt to trade.
pub fn trading_stopped() -> EngineError {
    EngineError::Conflict {
        detail: "Trading is stopped for your company (kill switch): new orders are refused until a venue admin \
                 re-enables it."
            .into(),
        errors: vec![],
    }
}

/// What each unique constraint protects, in one place: the constraint (PostgreSQL names it
/// `<table>_<column>_key`; SQLite says `<table>.<column>`), the field and the sentence.
const UNIQUE: &[(&str, &str, &str, &str)] = &[
    ("company_name_key", "company.name", "name", "A company with this name already exists."),
    ("app_user_email_key", "app_user.email", "email", "A user with this email already exists."),
    ("company_fix_comp_id", "company.fix_comp_id", "fix_comp_id", "Another company has this FIX CompID."),
];

/// The field error of a unique violation, when the constraint guards a field a user chose.
pub fn unique_violation(constraint: &str) -> Option<FieldError> {
    UNIQUE
        .iter()
        .find(|(pg, sqlite, _, _)| constraint == *pg || constraint.ends_with(sqlite))
        .map(|(_, _, field, message)| FieldError::new(*field, *message))
}

impl From<StoreError> for EngineError {
    /// A unique violation on a user-chosen field is a 409 naming the field; any other store
    /// failure is internal (or busy, to retry).
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unique(constraint) if unique_violation(&constraint).is_some() => {
                let errors: Vec<FieldError> = unique_violation(&constraint).into_iter().collect();
                EngineError::Conflict { detail: errors.iter().map(|e| e.message.clone()).collect(), errors }
            }
            StoreError::Unique(constraint) if constraint.contains("idempotency") => EngineError::Repeated,
            StoreError::Unwritable(m) => {
                tracing::error!(cause = %m, "the database cannot write");
                EngineError::Unavailable("The venue cannot save changes right now. Please try again later.".into())
            }
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
            StoreError::Check(constraint) if constraint == COMPANY_TRADING_STOPPED => trading_stopped(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_violations_name_the_field_on_both_backends() {
        for (constraint, field) in [
            ("company_name_key", "name"),
            ("UNIQUE constraint failed: company.name", "name"),
            ("app_user_email_key", "email"),
            ("UNIQUE constraint failed: app_user.email", "email"),
        ] {
            match EngineError::from(StoreError::Unique(constraint.into())) {
                EngineError::Conflict { errors, .. } => assert_eq!(errors[0].field, field, "{constraint}"),
                other => panic!("{constraint}: {other:?}"),
            }
        }
        assert!(matches!(
            EngineError::from(StoreError::Unique("session_token_hash_key".into())),
            EngineError::Internal(_)
        ));
    }
}
