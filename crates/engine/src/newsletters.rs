//! The orders newsletter (admin spec sections 2, 3, 5 and 7): named recipient lists
//! built from users, and, beyond the spec (ADR 0021), what the name promises: a digest
//! of resting interest per instrument that names no firm, previewed, then sent to every
//! recipient through the outbox.

use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeSet;
use upstairs_domain::{CompanyId, FieldError, InstrumentId, Permission, UserId};
use uuid::Uuid;

use crate::Store;
use crate::context::{Actor, action_log, audit, require};
use crate::core::service;
use crate::error::EngineError;
use crate::keyed::{Lookup, first};
use crate::model::*;
use crate::ports::*;

/// The most recipients one call adds (the panel fetches users 200 at a time).
pub const MAX_RECIPIENTS_PER_CALL: usize = 200;

/// What a newsletter's digest covers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct DigestScope {
    /// These instruments only; every active instrument when absent.
    pub instrument_ids: Option<Vec<InstrumentId>>,
}

/// A new newsletter as the create form sends it.
#[derive(Clone, Debug, Default)]
pub struct NewNewsletter {
    pub name: String,
    pub description: String,
    pub instrument_ids: Option<Vec<InstrumentId>>,
}

/// A digest as it will go out: the e-mail of the first recipient (or of the caller when
/// there is none yet), and how many will get it.
#[derive(Clone, Debug)]
pub struct DigestPreview {
    pub preview: EmailPreview,
    pub instruments: Vec<DigestInstrument>,
    pub recipients: usize,
}

fn not_found() -> EngineError {
    EngineError::NotFound("Newsletter not found.".into())
}

/// Whose newsletters the actor keeps: every one (`None`) for venue staff, their own
/// company's for a company admin (ADR 0021); refused for anyone else.
fn scope(actor: &Actor) -> Result<Option<CompanyId>, EngineError> {
    require(actor, Permission::Newsletters)?;
    Ok((!actor.can(Permission::AdminDrawer)).then_some(actor.user.company_id))
}

/// The newsletter `id` when it is in the actor's scope; another company's answers 404.
async fn scoped<T: NewsletterRepo + Send>(
    tx: &mut T,
    scope: Option<CompanyId>,
    id: Uuid,
) -> Result<Newsletter, EngineError> {
    match tx.newsletter(id).await? {
        Some(n) if scope.is_none() || n.company_id == scope => Ok(n),
        _ => Err(not_found()),
    }
}

service!(
    /// Newsletters: recipient lists and the digest of resting interest.
    Newsletters {}
);

impl<S: Store> Newsletters<S> {
    /// Every newsletter with its recipients for venue staff; a company admin's own
    /// company's.
    pub async fn list(&self, actor: &Actor) -> Result<Vec<Newsletter>, EngineError> {
        let scope = scope(actor)?;
        Ok(self.store.read().await?.newsletters(scope).await?)
    }

    /// One newsletter with its recipients, when in the actor's scope.
    pub async fn newsletter(&self, actor: &Actor, id: Uuid) -> Result<Newsletter, EngineError> {
        let scope = scope(actor)?;
        scoped(&mut self.store.read().await?, scope, id).await
    }

    /// Creates a newsletter; the texts are the spec's (section 5), its description
    /// message included as quoted.
    /// Runs once per `key` (ADR 0023): a retry answers what the first run created.
    pub async fn create_newsletter(
        &self,
        actor: &Actor,
        input: NewNewsletter,
        key: Option<&IdempotencyKey>,
    ) -> Result<Newsletter, EngineError> {
        self.once(actor, key, Lookup::First, self.create_newsletter_inner(actor, input, key), |ids| async move {
            self.newsletter(actor, first(ids)?).await
        })
        .await
    }

    pub(crate) async fn create_newsletter_inner(
        &self,
        actor: &Actor,
        input: NewNewsletter,
        key: Option<&IdempotencyKey>,
    ) -> Result<Newsletter, EngineError> {
        let scope = scope(actor)?;
        let name = input.name.trim().to_owned();
        let description = input.description.trim().to_owned();
        let mut errors = Vec::new();
        if name.chars().count() < 2 {
            errors.push(FieldError::new("name", "Name must be at least 2 characters long"));
        }
        if description.chars().count() < 2 {
            errors.push(FieldError::new("description", "Full name must be at least 4 characters long"));
        }
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        if let Some(ids) = &input.instrument_ids {
            for id in ids {
                if tx.instrument(*id).await?.is_none() {
                    errors.push(FieldError::new("instrument_ids", format!("Unknown instrument: {id}")));
                }
            }
        }
        if !errors.is_empty() {
            return Err(EngineError::invalid_many(errors));
        }
        let n = Newsletter {
            newsletter_id: Uuid::now_v7(),
            company_id: scope,
            name,
            description,
            filter_criteria: input.instrument_ids.map(|ids| json!({ "instrument_ids": ids })),
            recipients: vec![],
            created_at: now,
            updated_at: now,
            last_sent_at: None,
        };
        tx.insert_newsletter(&n).await?;
        let log = action_log(
            now,
            Some(actor.user.user_id),
            "newsletter",
            Some(n.newsletter_id),
            "create",
            json!({"name": n.name, "description": n.description, "filter_criteria": n.filter_criteria}),
        );
        tx.insert_action_log(&log.keyed(key, 0)).await?;
        tx.commit().await?;
        Ok(n)
    }

    /// Adds users to a newsletter's recipients (those already there stay as they are).
    pub async fn add_newsletter_recipients(
        &self,
        actor: &Actor,
        id: Uuid,
        users: Vec<UserId>,
    ) -> Result<Newsletter, EngineError> {
        let scope = scope(actor)?;
        let users: Vec<UserId> = users.into_iter().collect::<BTreeSet<_>>().into_iter().collect();
        if users.is_empty() {
            return Err(EngineError::invalid("recipient_ids", "Choose at least one user"));
        }
        if users.len() > MAX_RECIPIENTS_PER_CALL {
            return Err(EngineError::invalid(
                "recipient_ids",
                &format!("At most {MAX_RECIPIENTS_PER_CALL} users can be added at once"),
            ));
        }
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let letter = scoped(&mut tx, scope, id).await?;
        let mut errors = Vec::new();
        for u in &users {
            // A company's newsletter goes to its own users only, whoever adds them: its
            // admins see the recipients. Another company's user is as unknown here as
            // one that does not exist.
            let known = tx.user(*u).await?.is_some_and(|v| letter.company_id.is_none_or(|c| v.user.company_id == c));
            if !known {
                errors.push(FieldError::new("recipient_ids", format!("Unknown user: {u}")));
            }
        }
        if !errors.is_empty() {
            return Err(EngineError::invalid_many(errors));
        }
        let added = tx.add_newsletter_recipients(id, &users, now).await?;
        audit(
            &mut tx,
            now,
            Some(actor.user.user_id),
            "newsletter",
            Some(id),
            "add_recipients",
            json!({"recipient_ids": users, "added": added}),
        )
        .await?;
        let n = tx.newsletter(id).await?.ok_or_else(not_found)?;
        tx.commit().await?;
        Ok(n)
    }

    /// Removes one recipient.
    pub async fn remove_newsletter_recipient(
        &self,
        actor: &Actor,
        id: Uuid,
        user: UserId,
    ) -> Result<Newsletter, EngineError> {
        let scope = scope(actor)?;
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        scoped(&mut tx, scope, id).await?;
        if !tx.remove_newsletter_recipient(id, user).await? {
            return Err(EngineError::NotFound("This user is not a recipient of the newsletter.".into()));
        }
        audit(
            &mut tx,
            now,
            Some(actor.user.user_id),
            "newsletter",
            Some(id),
            "remove_recipient",
            json!({"user_id": user}),
        )
        .await?;
        let n = tx.newsletter(id).await?.ok_or_else(not_found)?;
        tx.commit().await?;
        Ok(n)
    }

    /// The digest as it would go out now, rendered, without sending it.
    pub async fn preview_newsletter(&self, actor: &Actor, id: Uuid) -> Result<DigestPreview, EngineError> {
        let scope = scope(actor)?;
        let n = scoped(&mut self.store.read().await?, scope, id).await?;
        let instruments = self.digest(&n).await?;
        let first_name = n.recipients.first().map_or(actor.user.first_name.clone(), |r| r.first_name.clone());
        let email = OutgoingEmail {
            message_id: format!("<preview@{}>", self.mail_domain()),
            to: actor.user.email.clone(),
            template: self.digest_template(&n, first_name, instruments.clone()),
        };
        Ok(DigestPreview { preview: self.mailer.preview(&email), instruments, recipients: n.recipients.len() })
    }

    /// Queues the digest to every recipient through the outbox; returns how many e-mails.
    pub async fn send_newsletter(&self, actor: &Actor, id: Uuid) -> Result<usize, EngineError> {
        let scope = scope(actor)?;
        let n = scoped(&mut self.store.read().await?, scope, id).await?;
        if n.recipients.is_empty() {
            return Err(EngineError::Conflict {
                detail: "This newsletter has no recipients yet.".into(),
                errors: vec![],
            });
        }
        let instruments = self.digest(&n).await?;
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        for r in &n.recipients {
            let template = self.digest_template(&n, r.first_name.clone(), instruments.clone());
            self.enqueue_email(&mut tx, now, &r.email, template).await?;
        }
        tx.mark_newsletter_sent(id, now).await?;
        audit(
            &mut tx,
            now,
            Some(actor.user.user_id),
            "newsletter",
            Some(id),
            "send",
            json!({"recipients": n.recipients.len(), "instruments": instruments.len()}),
        )
        .await?;
        tx.commit().await?;
        self.poke();
        Ok(n.recipients.len())
    }

    fn digest_template(&self, n: &Newsletter, first_name: String, instruments: Vec<DigestInstrument>) -> EmailTemplate {
        EmailTemplate::OrdersDigest {
            first_name,
            newsletter: n.name.clone(),
            description: n.description.clone(),
            instruments,
            dashboard_link: format!("{}/dashboard", self.config.public_url.trim_end_matches('/')),
        }
    }

    /// Resting interest on the newsletter's instruments (active, not sandbox), from the
    /// books as everyone sees them: levels and shown sizes, no firm. Instruments with
    /// nothing resting are left out.
    async fn digest(&self, n: &Newsletter) -> Result<Vec<DigestInstrument>, EngineError> {
        let scope: DigestScope =
            n.filter_criteria.clone().and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default();
        let instruments = match scope.instrument_ids {
            Some(ids) => {
                let mut tx = self.store.read().await?;
                let mut out = Vec::with_capacity(ids.len());
                for id in ids {
                    out.extend(tx.instrument(id).await?);
                }
                out
            }
            None => {
                let filter = InstrumentFilter {
                    active: Some(true),
                    is_sandbox: Some(false),
                    page: 0,
                    size: i64::from(u16::MAX),
                    ..Default::default()
                };
                self.store.read().await?.instruments(&filter).await?.items
            }
        };
        let mut out = Vec::new();
        for i in instruments.into_iter().filter(|i| i.active && !i.is_sandbox) {
            let levels = self.cached_levels(i.instrument_id).await?.seen_by(None);
            let mut bids: Vec<DigestLevel> = levels
                .iter()
                .filter(|l| l.buy_quantity > 0)
                .map(|l| DigestLevel { price: l.price, quantity: l.buy_quantity })
                .collect();
            let mut offers: Vec<DigestLevel> = levels
                .iter()
                .filter(|l| l.sell_quantity > 0)
                .map(|l| DigestLevel { price: l.price, quantity: l.sell_quantity })
                .collect();
            if bids.is_empty() && offers.is_empty() {
                continue;
            }
            bids.sort_by_key(|l| std::cmp::Reverse(l.price));
            offers.sort_by_key(|l| l.price);
            out.push(DigestInstrument {
                name: i.name,
                term: i.term,
                min_block: i.min_quantity,
                tick_size: Some(i.tick_size),
                bids,
                offers,
            });
        }
        Ok(out)
    }
}
