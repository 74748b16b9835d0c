//! User administration: creating users (with their activation link), the bootstrap
//! admin, the admin list, changes by admins and by users to their own preferences.

use serde_json::json;
use upstairs_domain::{AutoAccept, CompanyId, Email, FieldError, Password, Permission, Role, UserId, roles_problem};

use crate::Store;
use crate::accounts::Accounts;
use crate::accounts::parse_email;
use crate::context::{Actor, MAX_PAGE, MAX_PAGE_SIZE, action_log, audit, blank_to_none, require};
use crate::core::service;
use crate::error::{EngineError, StoreError};
use crate::events::Event;
use crate::keyed::{Lookup, first};
use crate::model::*;
use crate::ports::*;

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

/// Changes to a user by an admin (or a company admin for its own company), or by the
/// user to their own preferences.
#[derive(Debug, Default, Clone)]
pub struct UserChanges {
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub email: Option<String>,
    pub roles: Option<Vec<Role>>,
    pub active: Option<bool>,
    pub fix_integration: Option<bool>,
    pub ems_trader_id: Option<Option<String>>,
    pub parent_order_limit_multiplier: Option<Option<i64>>,
    /// Refused when it names another company: a user's company cannot change.
    pub company_id: Option<CompanyId>,
    pub auto_accept: Option<upstairs_domain::AutoAccept>,
    /// The user's own choice: pull their working orders when their connection drops.
    pub cancel_on_disconnect: Option<bool>,
    pub ui_metadata: Option<Vec<upstairs_domain::UiMetadataEntry>>,
}

impl UserChanges {
    fn has_admin_fields(&self) -> bool {
        self.first_name.is_some()
            || self.last_name.is_some()
            || self.email.is_some()
            || self.roles.is_some()
            || self.active.is_some()
            || self.fix_integration.is_some()
            || self.ems_trader_id.is_some()
            || self.parent_order_limit_multiplier.is_some()
    }
}

fn user_json(u: &User) -> serde_json::Value {
    json!({
        "email": u.email, "first_name": u.first_name, "last_name": u.last_name, "roles": u.roles,
        "active": u.active, "fix_integration": u.fix_integration, "ems_trader_id": u.ems_trader_id,
        "parent_order_limit_multiplier": u.parent_order_limit_multiplier, "auto_accept": u.auto_accept,
        "cancel_on_disconnect": u.cancel_on_disconnect, "ui_metadata": u.ui_metadata,
    })
}

fn check_name(field: &str, label: &str, v: &str, errors: &mut Vec<FieldError>) {
    if v.trim().chars().count() < 2 {
        errors.push(FieldError::new(field, format!("{label} must be at least 2 characters long")));
    }
}

service!(
    /// Users: the admin's list and forms, a user's own profile, bootstrap.
    Users { accounts: Accounts }
);

impl<S: Store> Users<S> {
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

    /// Creates a user without a password and e-mails an activation link. Admins may
    /// create users in any company; company admins in their own.
    /// Runs once per `key` (ADR 0023): a retry answers what the first run created.
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id))]
    pub async fn create_user(
        &self,
        actor: &Actor,
        input: NewUser,
        key: Option<&IdempotencyKey>,
    ) -> Result<UserView, EngineError> {
        self.once(actor, key, Lookup::First, self.create_user_inner(actor, input, key), |ids| async move {
            self.user(actor, UserId(first(ids)?)).await
        })
        .await
    }

    pub(crate) async fn create_user_inner(
        &self,
        actor: &Actor,
        input: NewUser,
        key: Option<&IdempotencyKey>,
    ) -> Result<UserView, EngineError> {
        let own_company = input.company_id == actor.user.company_id;
        if !(actor.can(Permission::Admin) || (own_company && actor.can(Permission::ManageOwnCompanyUsers))) {
            return Err(EngineError::Forbidden("You are not allowed to create users.".into()));
        }
        if input.roles.iter().any(|r| r.is_venue_role()) && !actor.can(Permission::Admin) {
            return Err(EngineError::Forbidden("Only venue admins can grant venue roles.".into()));
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
        if let Some(m) = roles_problem(&input.roles) {
            errors.push(FieldError::new("roles", m));
        }
        check_multiplier(input.parent_order_limit_multiplier, &mut errors);
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
            cancel_on_disconnect: false,
            ems_trader_id: input.ems_trader_id.filter(|s| !s.trim().is_empty()),
            created_at: now,
            updated_at: now,
        };
        tx.insert_user(&user).await?;
        if user.active {
            self.accounts.issue_link(&mut tx, &user, LinkPurpose::Activation, now).await?;
        }
        let log = action_log(
            now,
            Some(actor.user.user_id),
            "user",
            Some(user.user_id.0),
            "create",
            json!({"after": {"email": user.email, "company_id": user.company_id, "roles": user.roles,
                             "first_name": user.first_name, "last_name": user.last_name, "active": user.active}}),
        );
        tx.insert_action_log(&log.keyed(key, 0)).await?;
        tx.commit().await?;
        self.poke();
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
        if let Some(m) = roles_problem(&input.roles) {
            return Err(EngineError::invalid("roles", m));
        }
        let hash = self.hashing.hash_password(password.expose().to_owned()).await?;
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
            cancel_on_disconnect: false,
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

    /// Users of every company for venue staff (sales read them to choose newsletter
    /// recipients); of its own company for a company admin.
    pub async fn admin_users(&self, actor: &Actor, mut filter: UserFilter) -> Result<Page<UserView>, EngineError> {
        if !actor.can(Permission::Admin) && !actor.can(Permission::AdminDrawer) {
            require(actor, Permission::ManageOwnCompanyUsers)?;
            filter.company_id = Some(actor.user.company_id);
        }
        filter.page = filter.page.clamp(0, MAX_PAGE);
        filter.size = filter.size.clamp(1, MAX_PAGE_SIZE);
        let mut tx = self.store.read().await?;
        Ok(tx.users(&filter).await?)
    }

    /// Changes a user. Anyone may change their own preferences; the other fields need
    /// the admin permission, or a company admin acting on its own company's users.
    #[tracing::instrument(skip_all, fields(actor = %actor.user.user_id, user = %id))]
    pub async fn update_user(&self, actor: &Actor, id: UserId, ch: UserChanges) -> Result<UserView, EngineError> {
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let mut view = tx.user(id).await?.ok_or_else(|| EngineError::NotFound("User not found.".into()))?;
        let own_company = view.user.company_id == actor.user.company_id;
        let is_admin = actor.can(Permission::Admin);
        let manages = is_admin || (own_company && actor.can(Permission::ManageOwnCompanyUsers));
        if id != actor.user.user_id && !manages {
            return Err(if own_company || is_admin {
                EngineError::Forbidden("You may only change your own preferences.".into())
            } else {
                EngineError::NotFound("User not found.".into())
            });
        }
        if ch.has_admin_fields() && !manages {
            return Err(EngineError::Forbidden("You may only change your own preferences.".into()));
        }
        // A venue role is the venue admins' to give and to look after: a company admin
        // who could change such a user's e-mail could ask a reset link and take it over.
        if ch.has_admin_fields() && !is_admin && view.user.roles.iter().any(|r| r.is_venue_role()) {
            return Err(EngineError::Forbidden("Only venue admins can change a user holding a venue role.".into()));
        }
        // Nobody locks themselves out: neither deactivated nor without an admin role they hold.
        if id == actor.user.user_id {
            let mut errors = Vec::new();
            if ch.active == Some(false) {
                errors.push(FieldError::new("active", "You cannot deactivate your own account"));
            }
            if let Some(roles) = &ch.roles {
                let admin_roles = [Role::UpstairsAdmin, Role::CompanyAdmin];
                if admin_roles.iter().any(|r| view.user.roles.contains(r) && !roles.contains(r)) {
                    errors.push(FieldError::new("roles", "You cannot remove your own admin role"));
                }
            }
            if !errors.is_empty() {
                return Err(EngineError::invalid_many(errors));
            }
        }
        let preferences = ch.auto_accept.is_some() || ch.cancel_on_disconnect.is_some() || ch.ui_metadata.is_some();
        if preferences && id != actor.user.user_id {
            return Err(EngineError::Forbidden("Only the user can change their own preferences.".into()));
        }
        if ch.company_id.is_some_and(|c| c != view.user.company_id) {
            return Err(EngineError::invalid("company_id", "The company of a user cannot be changed"));
        }
        let operation = if ch.has_admin_fields() { "update" } else { "update_preferences" };
        let before = user_json(&view.user);
        let u = &mut view.user;
        let mut errors = Vec::new();
        if let Some(v) = ch.first_name {
            u.first_name = v.trim().to_owned();
            if u.first_name.chars().count() < 2 {
                errors.push(FieldError::new("first_name", "First name must be at least 2 characters long"));
            }
        }
        if let Some(v) = ch.last_name {
            u.last_name = v.trim().to_owned();
            if u.last_name.chars().count() < 2 {
                errors.push(FieldError::new("last_name", "Last name must be at least 2 characters long"));
            }
        }
        let old_email = u.email.clone();
        if let Some(v) = ch.email {
            match Email::parse(&v) {
                Ok(e) => {
                    if e.as_str() != u.email && tx.user_by_email(e.as_str()).await?.is_some() {
                        errors.push(FieldError::new("email", "A user with this email already exists."));
                    }
                    u.email = e.as_str().to_owned();
                }
                Err(m) => errors.push(FieldError::new("email", m)),
            }
        }
        if let Some(mut roles) = ch.roles {
            roles.sort();
            roles.dedup();
            if roles.is_empty() {
                errors.push(FieldError::new("roles", "Select at least one role"));
            }
            if !is_admin && roles.iter().filter(|r| r.is_venue_role()).ne(u.roles.iter().filter(|r| r.is_venue_role()))
            {
                return Err(EngineError::Forbidden("Only venue admins can grant or remove venue roles.".into()));
            }
            if let Some(m) = roles_problem(&roles) {
                errors.push(FieldError::new("roles", m));
            }
            u.roles = roles;
        }
        if let Some(v) = ch.active {
            u.active = v;
        }
        if let Some(v) = ch.fix_integration {
            u.fix_integration = v;
        }
        if let Some(v) = ch.ems_trader_id {
            u.ems_trader_id = blank_to_none(v);
        }
        if let Some(v) = ch.parent_order_limit_multiplier {
            // The admin form sends -1 for "no multiplier".
            u.parent_order_limit_multiplier = v.filter(|m| *m != -1);
            check_multiplier(u.parent_order_limit_multiplier, &mut errors);
        }
        if let Some(a) = ch.auto_accept {
            u.auto_accept = Some(a);
        }
        if let Some(c) = ch.cancel_on_disconnect {
            u.cancel_on_disconnect = c;
        }
        if let Some(entries) = ch.ui_metadata {
            for e in entries {
                match u.ui_metadata.iter_mut().find(|x| x.key == e.key) {
                    Some(slot) => *slot = e,
                    None => u.ui_metadata.push(e),
                }
            }
            if let Some(message) = ui_metadata_problem(&u.ui_metadata) {
                errors.push(FieldError::new("ui_metadata", message));
            }
        }
        if !errors.is_empty() {
            return Err(EngineError::invalid_many(errors));
        }
        // A new address is not known to be the user's until a link sent there is used:
        // the old links and sessions end, and the old address is told (so that a takeover
        // through an e-mail change cannot go unnoticed).
        let email_changed = u.email != old_email;
        if email_changed {
            u.verified = false;
            tx.use_link_tokens_of_user(id, now).await?;
            let template = EmailTemplate::EmailChanged {
                first_name: u.first_name.clone(),
                link: format!("{}/login", self.config.public_url.trim_end_matches('/')),
            };
            self.enqueue_email(&mut tx, now, &old_email, template).await?;
        }
        u.updated_at = now;
        tx.update_user(u).await?;
        let revoked = if !u.active || email_changed { tx.delete_sessions_of_user(id).await? } else { 0 };
        audit(
            &mut tx,
            now,
            Some(actor.user.user_id),
            "user",
            Some(id.0),
            operation,
            json!({"before": before, "after": user_json(u), "sessions_revoked": revoked}),
        )
        .await?;
        tx.commit().await?;
        if email_changed {
            self.poke();
        }
        self.publish(if revoked > 0 { Event::sessions_ended(id) } else { Event::UserChanged { user_id: id } });
        Ok(view)
    }
}

/// The answer the store gives for a taken e-mail, when a check finds it first.
fn email_taken() -> EngineError {
    StoreError::Unique("app_user_email_key".into()).into()
}

/// Settings the web app keeps per user: at most this many keys, …
pub const MAX_UI_KEYS: usize = 32;
/// … each key this long, …
pub const MAX_UI_KEY: usize = 64;
/// … and this many bytes of JSON in all.
pub const MAX_UI_BYTES: usize = 16 * 1024;

/// What is wrong with a user's whole `ui_metadata`, if anything.
fn ui_metadata_problem(entries: &[upstairs_domain::UiMetadataEntry]) -> Option<String> {
    if entries.len() > MAX_UI_KEYS {
        return Some(format!("At most {MAX_UI_KEYS} keys"));
    }
    if entries.iter().any(|e| e.key.is_empty() || e.key.chars().count() > MAX_UI_KEY) {
        return Some(format!("Keys must be 1 to {MAX_UI_KEY} characters"));
    }
    let bytes: usize = entries.iter().map(|e| e.key.len() + e.value.to_string().len()).sum();
    (bytes > MAX_UI_BYTES).then(|| format!("At most {} KB in all", MAX_UI_BYTES / 1024))
}

/// A parent-order limit multiplier is bounded (ADR 0027): `1..=MAX_MULTIPLIER`.
fn check_multiplier(m: Option<i64>, errors: &mut Vec<FieldError>) {
    use upstairs_domain::quantity::{MAX_MULTIPLIER, Multiplier};
    match m {
        Some(m) if m <= 0 => errors.push(FieldError::new("parent_order_limit_multiplier", "Must be greater than 0")),
        Some(m) if Multiplier::new(m).is_none() => {
            errors.push(FieldError::new("parent_order_limit_multiplier", format!("Must be at most {MAX_MULTIPLIER}")))
        }
        _ => {}
    }
}
