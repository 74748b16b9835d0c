//! Accounts and sessions: login, logout, session check, password reset and activation
//! links. User administration lives in `users`.

use chrono::{DateTime, Utc};
use serde_json::json;
use upstairs_domain::{Email, FieldError, Password, SessionId};

use crate::Store;
use crate::context::{Actor, ClientInfo, audit};
use crate::core::service;
use crate::error::EngineError;
use crate::events::Event;
use crate::model::*;
use crate::ports::*;
use crate::security;

pub struct LoginInput {
    pub email: String,
    pub password: String,
    pub remember_me: bool,
}

pub const INVALID_LOGIN: &str = "Invalid email or password.";
pub const TOO_MANY: &str = "Too many attempts. Please wait a minute and try again.";
pub use crate::core::TOO_MANY_WRITES;
pub const LINK_EXPIRED: &str = "This link has expired or has already been used.";

pub(crate) fn parse_email(raw: &str) -> Result<Email, EngineError> {
    Email::parse(raw).map_err(|m| EngineError::invalid("email", m))
}

fn to_chrono(d: std::time::Duration) -> chrono::Duration {
    chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX)
}

service!(
    /// Signing in and out, sessions, and the links that set a password (spec: login, reset).
    Accounts {}
);

impl<S: Store> Accounts<S> {
    /// Signs in and returns a new bearer token. Success and failure are both audited.
    #[tracing::instrument(skip_all)]
    pub async fn login(&self, input: LoginInput, client: &ClientInfo) -> Result<String, EngineError> {
        let email = parse_email(&input.email)?;
        if input.password.is_empty() {
            return Err(EngineError::invalid("password", "Password is required"));
        }
        let now = self.clock.now();
        self.limiter
            .login_attempt(email.as_str(), &client.address, now)
            .map_err(|w| EngineError::too_many(TOO_MANY, w))?;
        let found = {
            let mut tx = self.store.read().await?;
            tx.user_by_email(email.as_str()).await?
        };
        let stored = found.as_ref().and_then(|u| u.user.password_hash.clone());
        let password_ok = self.hashing.verify_password(input.password, stored).await?;
        let user = found.filter(|_| password_ok);
        match &user {
            Some(_) => self.limiter.login_succeeded(email.as_str(), &client.address),
            None => self.limiter.login_failed(email.as_str(), &client.address, now),
        }

        let mut tx = self.store.write().await?;
        let Some(view) = user else {
            audit(
                &mut tx,
                now,
                None,
                "session",
                None,
                "login_failed",
                json!({"email": email.as_str(), "address": client.address}),
            )
            .await?;
            tx.commit().await?;
            return Err(EngineError::Unauthorized(INVALID_LOGIN.into()));
        };
        let user_id = view.user.user_id;
        if !view.user.active {
            audit(&mut tx, now, Some(user_id), "session", None, "login_failed", json!({"reason": "inactive"})).await?;
            tx.commit().await?;
            return Err(EngineError::Unauthorized("Your account is not active. Please contact support.".into()));
        }
        let token = security::new_token();
        let ttl = if input.remember_me { self.config.remember_me_ttl } else { self.config.session_ttl };
        let session = Session {
            session_id: SessionId::new(),
            user_id,
            token_hash: security::token_hash(&token),
            created_at: now,
            expires_at: now + to_chrono(ttl),
        };
        tx.insert_session(&session).await?;
        audit(
            &mut tx,
            now,
            Some(user_id),
            "session",
            Some(session.session_id.0),
            "login",
            json!({"remember_me": input.remember_me, "address": client.address}),
        )
        .await?;
        tx.commit().await?;
        Ok(token)
    }

    /// The caller behind a bearer token, or `Unauthorized` when the session is gone.
    pub async fn authenticate(&self, token: &str) -> Result<Actor, EngineError> {
        let gone = || EngineError::Unauthorized("Your session has expired. Please sign in again.".into());
        // Read through the cache (ADR 0019): logouts, revocations and account changes drop it.
        let hash = security::token_hash(token);
        let found = self
            .caches
            .sessions
            .get(hash.clone(), || async {
                let mut tx = self.store.single().await?;
                tx.session_user(&hash).await
            })
            .await?
            .ok_or_else(gone)?;
        let (session, view) = (&found.0, &found.1);
        if session.expires_at <= self.clock.now() {
            return Err(gone());
        }
        if !view.user.active {
            return Err(gone());
        }
        Ok(Actor { user: view.user.clone(), company_name: view.company_name.clone(), session_id: session.session_id })
    }

    #[tracing::instrument(skip_all, fields(user_id = %actor.user.user_id))]
    pub async fn logout(&self, actor: &Actor) -> Result<(), EngineError> {
        let mut tx = self.store.write().await?;
        tx.delete_session(actor.session_id).await?;
        audit(
            &mut tx,
            self.clock.now(),
            Some(actor.user.user_id),
            "session",
            Some(actor.session_id.0),
            "logout",
            json!({}),
        )
        .await?;
        tx.commit().await?;
        self.publish(Event::sessions_ended(actor.user.user_id));
        Ok(())
    }

    /// Sends a reset link (or, when asked for a new account e-mail and the account was
    /// never activated, an activation link). Answers the same whether or not the
    /// e-mail belongs to an account.
    #[tracing::instrument(skip_all)]
    pub async fn request_password_link(
        &self,
        raw_email: &str,
        new_account_email: bool,
        client: &ClientInfo,
    ) -> Result<(), EngineError> {
        let email = parse_email(raw_email)?;
        let now = self.clock.now();
        self.limiter
            .link_request(email.as_str(), &client.address, now)
            .map_err(|w| EngineError::too_many(TOO_MANY, w))?;
        let mut tx = self.store.write().await?;
        let found = tx.user_by_email(email.as_str()).await?.filter(|v| v.user.active);
        let operation = if new_account_email { "activation_link_requested" } else { "reset_link_requested" };
        match found {
            Some(view) => {
                let purpose =
                    if new_account_email && !view.user.verified { LinkPurpose::Activation } else { LinkPurpose::Reset };
                self.issue_link(&mut tx, &view.user, purpose, now).await?;
                audit(&mut tx, now, None, "user", Some(view.user.user_id.0), operation, json!({"purpose": purpose}))
                    .await?;
            }
            None => {
                audit(&mut tx, now, None, "user", None, operation, json!({"email": email.as_str(), "unknown": true}))
                    .await?;
            }
        }
        tx.commit().await?;
        self.poke();
        Ok(())
    }

    pub(crate) async fn issue_link(
        &self,
        tx: &mut S::Tx,
        user: &User,
        purpose: LinkPurpose,
        now: DateTime<Utc>,
    ) -> Result<(), EngineError> {
        let token = security::new_token();
        let (ttl, path) = match purpose {
            LinkPurpose::Reset => (self.config.reset_link_ttl, "reset-password"),
            LinkPurpose::Activation => (self.config.activation_link_ttl, "account-activate"),
        };
        tx.insert_link_token(&LinkToken {
            token_hash: security::token_hash(&token),
            user_id: user.user_id,
            purpose,
            created_at: now,
            expires_at: now + to_chrono(ttl),
            used_at: None,
        })
        .await?;
        let link = format!("{}/{path}?hash={token}", self.config.public_url.trim_end_matches('/'));
        let first_name = user.first_name.clone();
        let template = match purpose {
            LinkPurpose::Reset => EmailTemplate::PasswordReset { first_name, link },
            LinkPurpose::Activation => EmailTemplate::AccountActivation { first_name, link },
        };
        self.enqueue_email(tx, now, &user.email, template).await?;
        Ok(())
    }

    /// Whether a link can still be used, and what for; a link made for another purpose
    /// than `purpose` (when given) cannot.
    pub async fn check_link(&self, token: &str, purpose: Option<LinkPurpose>) -> Result<LinkPurpose, EngineError> {
        let mut tx = self.store.read().await?;
        let t = tx.link_token(&security::token_hash(token)).await?;
        match t {
            Some(t)
                if t.used_at.is_none() && t.expires_at > self.clock.now() && purpose.is_none_or(|p| p == t.purpose) =>
            {
                Ok(t.purpose)
            }
            _ => Err(EngineError::Gone(LINK_EXPIRED.into())),
        }
    }

    /// Sets a new password through a link: the link and every other open link of the
    /// user are used up, every session of the user is revoked, the user is verified.
    #[tracing::instrument(skip_all)]
    pub async fn set_password_with_link(
        &self,
        token: &str,
        raw_password: &str,
        purpose: Option<LinkPurpose>,
    ) -> Result<(), EngineError> {
        self.check_link(token, purpose).await?;
        let password = Password::parse(raw_password).map_err(|broken| EngineError::Invalid {
            detail: format!("The password does not meet the requirements: {}.", broken.join(", ")),
            errors: broken.iter().map(|m| FieldError::new("password", *m)).collect(),
        })?;
        let hash = self.hashing.hash_password(password.expose().to_owned()).await?;
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        // Claimed as one compare-and-set on both backends: of two concurrent uses of the
        // same link, the second finds it used and sets nothing.
        let link = tx
            .claim_link_token(&security::token_hash(token), now, purpose)
            .await?
            .ok_or_else(|| EngineError::Gone(LINK_EXPIRED.into()))?;
        let mut view = tx.user(link.user_id).await?.ok_or_else(|| EngineError::Gone(LINK_EXPIRED.into()))?;
        tx.use_link_tokens_of_user(link.user_id, now).await?;
        let revoked = tx.delete_sessions_of_user(link.user_id).await?;
        view.user.password_hash = Some(hash);
        view.user.verified = true;
        view.user.updated_at = now;
        tx.update_user(&view.user).await?;
        audit(
            &mut tx,
            now,
            Some(link.user_id),
            "user",
            Some(link.user_id.0),
            "password_set",
            json!({"purpose": link.purpose, "sessions_revoked": revoked}),
        )
        .await?;
        tx.commit().await?;
        if revoked > 0 {
            self.publish(Event::sessions_ended(link.user_id));
        }
        Ok(())
    }
}
