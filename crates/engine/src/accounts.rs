//! Accounts and sessions: login, logout, session check, own preferences, password
//! reset and activation links, user creation.

use chrono::{DateTime, Utc};
use serde_json::json;
use upstairs_domain::role::has_permission;
use upstairs_domain::{AutoAccept, CompanyId, Email, FieldError, Password, Permission, Role, SessionId, UserId};
use uuid::Uuid;

use crate::error::{EngineError, StoreError};
use crate::events::Event;
use crate::model::*;
use crate::ports::*;
use crate::ratelimit::Action;
use crate::security;
use crate::{Engine, Store};

/// The signed-in caller of a use case.
#[derive(Clone, Debug)]
pub struct Actor {
    pub user: User,
    pub company_name: String,
    pub session_id: SessionId,
}

impl Actor {
    pub fn can(&self, p: Permission) -> bool {
        has_permission(&self.user.roles, p)
    }

    pub fn view(&self) -> UserView {
        UserView { user: self.user.clone(), company_name: self.company_name.clone() }
    }
}

/// Where a request came from, for rate limits and the audit trail.
#[derive(Clone, Debug, Default)]
pub struct ClientInfo {
    pub address: String,
}

pub struct LoginInput {
    pub email: String,
    pub password: String,
    pub remember_me: bool,
}

#[derive(Debug)]
pub struct NewUser {
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub company_id: CompanyId,
    pub roles: Vec<Role>,
    pub ems_trader_id: Option<String>,
    pub parent_order_limit_multiplier: Option<i64>,
    pub fix_integration: bool,
    pub active: bool,
}

/// Bootstrap input of `upstairs user create`.
#[derive(Debug)]
pub struct BootstrapUser {
    pub email: String,
    pub password: String,
    pub roles: Vec<Role>,
    pub company_name: String,
    pub first_name: String,
    pub last_name: String,
    pub auto_accept: Option<AutoAccept>,
}

pub const INVALID_LOGIN: &str = "Invalid email or password.";
pub const TOO_MANY: &str = "Too many attempts. Please wait a minute and try again.";
pub const LINK_EXPIRED: &str = "This link has expired or has already been used.";

pub(crate) async fn audit<T: Tx>(
    tx: &mut T,
    now: DateTime<Utc>,
    actor: Option<UserId>,
    entity: &str,
    entity_id: Option<Uuid>,
    operation: &str,
    details: serde_json::Value,
) -> Result<(), EngineError> {
    tx.insert_action_log(&ActionLog {
        action_log_id: Uuid::now_v7(),
        entity: entity.to_owned(),
        entity_id,
        operation: operation.to_owned(),
        user_id: actor,
        created_at: now,
        details,
    })
    .await?;
    Ok(())
}

fn parse_email(raw: &str) -> Result<Email, EngineError> {
    Email::parse(raw).map_err(|m| EngineError::invalid("email", m))
}

fn check_name(field: &str, label: &str, v: &str, errors: &mut Vec<FieldError>) {
    if v.trim().chars().count() < 2 {
        errors.push(FieldError::new(field, format!("{label} must be at least 2 characters long")));
    }
}

fn to_chrono(d: std::time::Duration) -> chrono::Duration {
    chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX)
}

impl<S: Store> Engine<S> {
    /// Signs in and returns a new bearer token. Success and failure are both audited.
    #[tracing::instrument(skip_all)]
    pub async fn login(&self, input: LoginInput, client: &ClientInfo) -> Result<String, EngineError> {
        let email = parse_email(&input.email)?;
        if input.password.is_empty() {
            return Err(EngineError::invalid("password", "Password is required"));
        }
        let now = self.clock.now();
        if !self.limiter.allow(Action::Login, email.as_str(), &client.address, now) {
            return Err(EngineError::TooManyRequests(TOO_MANY.into()));
        }
        let found = {
            let mut tx = self.store.read().await?;
            tx.user_by_email(email.as_str()).await?
        };
        let stored = found.as_ref().and_then(|u| u.user.password_hash.clone());
        let password_ok = security::verify_password(input.password, stored).await?;
        let user = found.filter(|_| password_ok);

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
        let mut tx = self.store.read().await?;
        let session = tx.session_by_token_hash(&security::token_hash(token)).await?.ok_or_else(gone)?;
        if session.expires_at <= self.clock.now() {
            return Err(gone());
        }
        let view = tx.user(session.user_id).await?.ok_or_else(gone)?;
        if !view.user.active {
            return Err(gone());
        }
        Ok(Actor { user: view.user, company_name: view.company_name, session_id: session.session_id })
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
        self.events.publish(Event::sessions_ended(actor.user.user_id));
        Ok(())
    }

    /// A user the caller may see: themselves, a user of their own company when they
    /// manage its users, or anyone for an admin.
    pub async fn user(&self, actor: &Actor, id: UserId) -> Result<UserView, EngineError> {
        let mut tx = self.store.read().await?;
        let view = tx.user(id).await?.ok_or_else(|| EngineError::NotFound("User not found.".into()))?;
        let same_company = view.user.company_id == actor.user.company_id;
        let allowed = id == actor.user.user_id
            || actor.can(Permission::Admin)
            || (same_company && actor.can(Permission::ManageOwnCompanyUsers));
        if !allowed {
            // Do not confirm that a user of another company exists.
            return Err(EngineError::NotFound("User not found.".into()));
        }
        Ok(view)
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
        if !self.limiter.allow(Action::Reset, email.as_str(), &client.address, now) {
            return Err(EngineError::TooManyRequests(TOO_MANY.into()));
        }
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
        self.wake.notify_one();
        Ok(())
    }

    async fn issue_link(
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

    /// Whether a link can still be used, and what for.
    pub async fn check_link(&self, token: &str) -> Result<LinkPurpose, EngineError> {
        let mut tx = self.store.read().await?;
        let t = tx.link_token(&security::token_hash(token)).await?;
        match t {
            Some(t) if t.used_at.is_none() && t.expires_at > self.clock.now() => Ok(t.purpose),
            _ => Err(EngineError::Gone(LINK_EXPIRED.into())),
        }
    }

    /// Sets a new password through a link: the link and every other open link of the
    /// user are used up, every session of the user is revoked, the user is verified.
    #[tracing::instrument(skip_all)]
    pub async fn set_password_with_link(&self, token: &str, raw_password: &str) -> Result<(), EngineError> {
        self.check_link(token).await?;
        let password = Password::parse(raw_password).map_err(|broken| EngineError::Invalid {
            detail: format!("The password does not meet the requirements: {}.", broken.join(", ")),
            errors: broken.iter().map(|m| FieldError::new("password", *m)).collect(),
        })?;
        let hash = security::hash_password(password.expose().to_owned()).await?;
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        // Re-read under the write lock: a concurrent use of the same link must lose.
        let link = tx
            .link_token(&security::token_hash(token))
            .await?
            .filter(|t| t.used_at.is_none() && t.expires_at > now)
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
            self.events.publish(Event::sessions_ended(link.user_id));
        }
        Ok(())
    }

    /// Creates a user without a password and e-mails an activation link. Admins may
    /// create users in any company; company admins in their own.
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id))]
    pub async fn create_user(&self, actor: &Actor, input: NewUser) -> Result<UserView, EngineError> {
        let own_company = input.company_id == actor.user.company_id;
        if !(actor.can(Permission::Admin) || (own_company && actor.can(Permission::ManageOwnCompanyUsers))) {
            return Err(EngineError::Forbidden("You are not allowed to create users.".into()));
        }
        if input.roles.contains(&Role::UpstairsAdmin) && !actor.can(Permission::Admin) {
            return Err(EngineError::Forbidden("Only venue admins can grant the upstairs-admin role.".into()));
        }
        let mut errors = Vec::new();
        let email = match Email::parse(&input.email) {
            Ok(e) => Some(e),
            Err(m) => {
                errors.push(FieldError::new("email", m));
                None
            }
        };
        check_name("first_name", "First name", &input.first_name, &mut errors);
        check_name("last_name", "Last name", &input.last_name, &mut errors);
        if input.roles.is_empty() {
            errors.push(FieldError::new("roles", "Select at least one role"));
        }
        if matches!(input.parent_order_limit_multiplier, Some(m) if m <= 0) {
            errors.push(FieldError::new("parent_order_limit_multiplier", "Must be greater than 0"));
        }
        let Some(email) = email.filter(|_| errors.is_empty()) else {
            return Err(EngineError::invalid_many(errors));
        };
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let company = tx
            .company(input.company_id)
            .await?
            .ok_or_else(|| EngineError::invalid("company_id", "Company not found"))?;
        if tx.user_by_email(email.as_str()).await?.is_some() {
            return Err(email_taken());
        }
        let mut roles = input.roles;
        roles.sort();
        roles.dedup();
        let user = User {
            user_id: UserId::new(),
            company_id: company.company_id,
            email: email.as_str().to_owned(),
            first_name: input.first_name.trim().to_owned(),
            last_name: input.last_name.trim().to_owned(),
            roles,
            password_hash: None,
            active: input.active,
            verified: false,
            auto_accept: None,
            parent_order_limit_multiplier: input.parent_order_limit_multiplier,
            ui_metadata: vec![],
            fix_integration: input.fix_integration,
            ems_trader_id: input.ems_trader_id.filter(|s| !s.trim().is_empty()),
            created_at: now,
            updated_at: now,
        };
        tx.insert_user(&user).await?;
        if user.active {
            self.issue_link(&mut tx, &user, LinkPurpose::Activation, now).await?;
        }
        audit(
            &mut tx,
            now,
            Some(actor.user.user_id),
            "user",
            Some(user.user_id.0),
            "create",
            json!({"after": {"email": user.email, "company_id": user.company_id, "roles": user.roles,
                             "first_name": user.first_name, "last_name": user.last_name, "active": user.active}}),
        )
        .await?;
        tx.commit().await?;
        self.wake.notify_one();
        Ok(UserView { user, company_name: company.name })
    }

    /// Creates a verified user with a password (and its company when none has that
    /// name), for the first admin of an empty database.
    pub async fn bootstrap_user(&self, input: BootstrapUser) -> Result<UserView, EngineError> {
        let email = parse_email(&input.email)?;
        let password = Password::parse(&input.password).map_err(|broken| EngineError::Invalid {
            detail: format!("The password does not meet the requirements: {}.", broken.join(", ")),
            errors: broken.iter().map(|m| FieldError::new("password", *m)).collect(),
        })?;
        if input.roles.is_empty() {
            return Err(EngineError::invalid("roles", "Select at least one role"));
        }
        let hash = security::hash_password(password.expose().to_owned()).await?;
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let company = match tx.company_by_name(input.company_name.trim()).await? {
            Some(c) => c,
            None => {
                let c = Company::named(input.company_name.trim(), now);
                tx.insert_company(&c).await?;
                audit(&mut tx, now, None, "company", Some(c.company_id.0), "create", json!({"name": c.name})).await?;
                c
            }
        };
        if tx.user_by_email(email.as_str()).await?.is_some() {
            return Err(email_taken());
        }
        let user = User {
            user_id: UserId::new(),
            company_id: company.company_id,
            email: email.as_str().to_owned(),
            first_name: input.first_name,
            last_name: input.last_name,
            roles: input.roles,
            password_hash: Some(hash),
            active: true,
            verified: true,
            auto_accept: input.auto_accept,
            parent_order_limit_multiplier: None,
            ui_metadata: vec![],
            fix_integration: false,
            ems_trader_id: None,
            created_at: now,
            updated_at: now,
        };
        tx.insert_user(&user).await?;
        audit(
            &mut tx,
            now,
            None,
            "user",
            Some(user.user_id.0),
            "bootstrap",
            json!({"email": user.email, "roles": user.roles}),
        )
        .await?;
        tx.commit().await?;
        Ok(UserView { user, company_name: company.name })
    }
}

/// The answer the store gives for a taken e-mail, when a check finds it first.
fn email_taken() -> EngineError {
    StoreError::Unique("app_user_email_key".into()).into()
}
