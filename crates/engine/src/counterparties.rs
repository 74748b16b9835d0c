//! Counterparty filters (issue 29, ADR 0042): the firms a company, or one of its traders,
//! never trades with, and the least reliability score of a counterparty firm it trades
//! with. Matching, previews and RFQ provider lists screen the other side through
//! [`Screen`] in both directions; no answer says that a filter, rather than an empty
//! book, left something out.

use chrono::Duration;
use serde_json::json;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use upstairs_domain::match_request::{MatchRequestState, reliability};
use upstairs_domain::{CompanyId, FieldError, Permission, UserId};
use uuid::Uuid;

use crate::Store;
use crate::context::{Actor, audit};
use crate::core::service;
use crate::error::{EngineError, StoreError};
use crate::model::*;
use crate::ports::*;

/// The reliability score looks this far back.
pub const RELIABILITY_WINDOW: Duration = Duration::days(30);

/// The most firms one filter blocks.
pub const MAX_BLOCKED: usize = 200;

/// A filter as its owner sets it.
#[derive(Clone, Debug, Default)]
pub struct FilterInput {
    pub blocked: Vec<CompanyId>,
    pub min_reliability_score: Option<i64>,
}

/// A filter as its owner reads it, with the blocked firms' names.
#[derive(Clone, Debug, Default)]
pub struct FilterView {
    pub blocked: Vec<CompanyRef>,
    pub min_reliability_score: Option<i64>,
}

/// One side of a possible trade: a firm and its trader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Party {
    pub company: CompanyId,
    pub user: UserId,
}

/// The filters of the parties to some trades, read at once.
#[derive(Clone, Debug, Default)]
pub struct Screen(Vec<CounterpartyFilter>);

impl Screen {
    /// No filter of any party: nothing is screened.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The filters among `all` of `parties` (their firms' and their own).
    pub fn of(all: &[CounterpartyFilter], parties: &[Party]) -> Screen {
        Screen(
            all.iter()
                .filter(|f| parties.iter().any(|p| f.owner_id == p.company.0 || f.owner_id == p.user.0))
                .cloned()
                .collect(),
        )
    }

    fn filters_of(&self, p: Party) -> impl Iterator<Item = &CounterpartyFilter> {
        self.0.iter().filter(move |f| f.owner_id == p.company.0 || f.owner_id == p.user.0)
    }

    /// Whether either party's firm or trader blocks the other's firm.
    pub fn blocks(&self, a: Party, b: Party) -> bool {
        self.filters_of(a).any(|f| f.blocked.contains(&b.company))
            || self.filters_of(b).any(|f| f.blocked.contains(&a.company))
    }

    /// The least reliability score `p` accepts of a counterparty firm (its firm's or its own,
    /// the higher).
    pub fn min_score(&self, p: Party) -> Option<i64> {
        self.filters_of(p).filter_map(|f| f.min_reliability_score).max()
    }

    /// Whether any party asks for a score (the scores are then read).
    pub fn asks_scores(&self) -> bool {
        self.0.iter().any(|f| f.min_reliability_score.is_some())
    }

    /// Whether `a` and `b` may trade, given each firm's reliability score.
    pub fn allows(&self, a: Party, b: Party, score: impl Fn(CompanyId) -> i64) -> bool {
        !self.blocks(a, b)
            && self.min_score(a).is_none_or(|m| score(b.company) >= m)
            && self.min_score(b).is_none_or(|m| score(a.company) >= m)
    }
}

service!(
    /// Counterparty filters: whom a firm or a trader never trades with.
    Counterparties {}
);

impl<S: Store> Counterparties<S> {
    /// Each user's reliability score over the last 30 days (DESIGN §4; 100 with no history).
    pub async fn reliability_scores(&self, users: &[UserId]) -> Result<HashMap<UserId, i64>, EngineError> {
        let scores = self.reliability(Responders::Users(users)).await?;
        Ok(users.iter().map(|u| (*u, scores.get(&u.0).copied().unwrap_or(100))).collect())
    }

    /// Each company's reliability score: the same over every request its users received.
    pub async fn company_reliability_scores(
        &self,
        companies: &[CompanyId],
    ) -> Result<HashMap<CompanyId, i64>, EngineError> {
        self.company_scores_in(&mut self.store.single().await?, companies).await
    }

    /// [`Self::company_reliability_scores`] read in `tx` (a use case holding a transaction
    /// takes no second connection).
    pub(crate) async fn company_scores_in(
        &self,
        tx: &mut S::Tx,
        companies: &[CompanyId],
    ) -> Result<HashMap<CompanyId, i64>, EngineError> {
        let scores = self.reliability_in(tx, Responders::Companies(companies)).await?;
        Ok(companies.iter().map(|c| (*c, scores.get(&c.0).copied().unwrap_or(100))).collect())
    }

    async fn reliability(&self, by: Responders<'_>) -> Result<HashMap<Uuid, i64>, EngineError> {
        self.reliability_in(&mut self.store.single().await?, by).await
    }

    async fn reliability_in(&self, tx: &mut S::Tx, by: Responders<'_>) -> Result<HashMap<Uuid, i64>, EngineError> {
        let since = self.clock.now() - RELIABILITY_WINDOW;
        let counts = tx.received_by_state(by, since).await?;
        let mut per: HashMap<Uuid, Vec<(MatchRequestState, i64)>> = HashMap::new();
        for (id, state, n) in counts {
            per.entry(id).or_default().push((state, n));
        }
        Ok(per.into_iter().map(|(id, c)| (id, reliability(c))).collect())
    }

    /// Every filter, from the cache (dropped by a change of any, on every node). A use case
    /// reads it before it opens its transaction.
    pub(crate) async fn all(&self) -> Result<Arc<Vec<CounterpartyFilter>>, EngineError> {
        let load = || async { Ok::<_, StoreError>(Some(self.store.single().await?.counterparty_filters().await?)) };
        Ok(self.caches.counterparty_filters.get((), load).await?.unwrap_or_default())
    }

    /// The one rule of who may trade with whom (ADR 0042), for takes, previews and RFQ
    /// providers alike: keeps the `items` whose party may trade with the actor under
    /// `filters` (read before the caller's transaction opens). The firms' reliability
    /// scores are read through `tx`, and only when a filter asks for them.
    pub(crate) async fn screen_in<T>(
        &self,
        tx: &mut S::Tx,
        actor: &Actor,
        filters: &[CounterpartyFilter],
        mut items: Vec<T>,
        party: impl Fn(&T) -> Party,
    ) -> Result<Vec<T>, EngineError> {
        if items.is_empty() || filters.is_empty() {
            return Ok(items);
        }
        let me = Party { company: actor.user.company_id, user: actor.user.user_id };
        let mut parties: Vec<Party> = items.iter().map(&party).collect();
        parties.push(me);
        let screen = Screen::of(filters, &parties);
        if screen.is_empty() {
            return Ok(items);
        }
        let scores = if screen.asks_scores() {
            let mut companies: Vec<CompanyId> = parties.iter().map(|p| p.company).collect();
            companies.sort();
            companies.dedup();
            self.company_scores_in(tx, &companies).await?
        } else {
            HashMap::new()
        };
        items.retain(|i| screen.allows(me, party(i), |c| scores.get(&c).copied().unwrap_or(100)));
        Ok(items)
    }

    /// The liquidity providers the actor may ask: each firm as a whole (its own filter,
    /// no trader's) and the actor by theirs and their firm's.
    pub(crate) async fn providers(&self, actor: &Actor) -> Result<Vec<Company>, EngineError> {
        let filters = self.all().await?;
        let mut c = self.store.single().await?;
        let all = c.companies_of_type(COMPANY_LIQUIDITY_PROVIDER).await?;
        let firm = |c: &Company| Party { company: c.company_id, user: UserId(c.company_id.0) };
        self.screen_in(&mut c, actor, &filters, all, firm).await
    }

    /// The venue's firms one may block: every company but the caller's own, the venue's
    /// own (its staff's, which never trades) and the brokers that do nothing else, by
    /// name, however many there are.
    pub async fn firms(&self, actor: &Actor) -> Result<Vec<CompanyRef>, EngineError> {
        let mut c = self.store.single().await?;
        let mut venue = Vec::new();
        for role in upstairs_domain::Role::ALL.into_iter().filter(|r| r.is_venue_role()) {
            venue.extend(c.companies_with_role(role).await?);
        }
        let size = crate::context::MAX_PAGE_SIZE;
        let mut all = Vec::new();
        for page in 0.. {
            let read = c.companies(page, size).await?;
            let last = read.items.len() < size as usize;
            all.extend(read.items);
            if last {
                break;
            }
        }
        Ok(all
            .into_iter()
            .filter(|c| {
                c.company_id != actor.user.company_id
                    && !venue.contains(&c.company_id)
                    && (c.roles.is_empty() || c.roles.iter().any(|r| r != "broker"))
            })
            .map(|c| CompanyRef { company_id: c.company_id, name: c.name })
            .collect())
    }

    /// A firm's own filter: its people read it, and the venue's staff.
    pub async fn firm_filter(&self, actor: &Actor, company: CompanyId) -> Result<FilterView, EngineError> {
        if actor.user.company_id != company && !actor.can(Permission::AdminDrawer) {
            return Err(not_found_company());
        }
        self.require_company(company).await?;
        self.view(company.0).await
    }

    /// The venue's staff name any company: one that does not exist is not found.
    async fn require_company(&self, id: CompanyId) -> Result<(), EngineError> {
        match self.store.single().await?.company(id).await? {
            Some(_) => Ok(()),
            None => Err(not_found_company()),
        }
    }

    /// Sets a firm's own filter: its company admin, or a venue admin.
    pub async fn set_firm_filter(
        &self,
        actor: &Actor,
        company: CompanyId,
        input: FilterInput,
    ) -> Result<FilterView, EngineError> {
        let own_admin = actor.user.company_id == company && actor.can(Permission::ManageOwnCompanyUsers);
        if !own_admin && !actor.can(Permission::Admin) {
            return Err(if actor.user.company_id == company || actor.can(Permission::AdminDrawer) {
                EngineError::Forbidden("You do not have permission to do this.".into())
            } else {
                not_found_company()
            });
        }
        self.require_company(company).await?;
        self.set(actor, company.0, company, input).await
    }

    /// A trader's own filter.
    pub async fn own_filter(&self, actor: &Actor) -> Result<FilterView, EngineError> {
        crate::context::require_trade(actor)?;
        self.view(actor.user.user_id.0).await
    }

    pub async fn set_own_filter(&self, actor: &Actor, input: FilterInput) -> Result<FilterView, EngineError> {
        crate::context::require_trade(actor)?;
        self.set(actor, actor.user.user_id.0, actor.user.company_id, input).await
    }

    async fn view(&self, owner: Uuid) -> Result<FilterView, EngineError> {
        let Some(f) = self.all().await?.iter().find(|f| f.owner_id == owner).cloned() else {
            return Ok(FilterView::default());
        };
        let mut tx = self.store.read().await?;
        // The blocked firms' names in one statement (the loop below reads them back).
        tx.read_ahead(&f.blocked.iter().copied().collect::<Vec<_>>(), &[]).await?;
        let mut blocked = Vec::with_capacity(f.blocked.len());
        for id in f.blocked {
            if let Some(c) = tx.company(id).await? {
                blocked.push(CompanyRef { company_id: id, name: c.name });
            }
        }
        blocked.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(FilterView { blocked, min_reliability_score: f.min_reliability_score })
    }

    async fn set(
        &self,
        actor: &Actor,
        owner: Uuid,
        company: CompanyId,
        input: FilterInput,
    ) -> Result<FilterView, EngineError> {
        let mut errors = Vec::new();
        if input.min_reliability_score.is_some_and(|s| !(0..=100).contains(&s)) {
            errors.push(FieldError::new("min_reliability_score", "Must be from 0 to 100"));
        }
        let blocked: BTreeSet<CompanyId> = input.blocked.iter().copied().collect();
        if blocked.len() > MAX_BLOCKED {
            errors.push(FieldError::new("blocked_company_ids", format!("At most {MAX_BLOCKED} firms")));
        }
        if blocked.contains(&company) {
            errors.push(FieldError::new("blocked_company_ids", "A firm cannot block itself"));
        }
        let mut tx = self.store.write().await?;
        if errors.is_empty() {
            tx.read_ahead(&blocked.iter().copied().collect::<Vec<_>>(), &[]).await?;
            for id in &blocked {
                if tx.company(*id).await?.is_none() {
                    errors.push(FieldError::new("blocked_company_ids", "Unknown firm"));
                    break;
                }
            }
        }
        if !errors.is_empty() {
            return Err(EngineError::invalid_many(errors));
        }
        let now = self.clock.now();
        let filter = CounterpartyFilter {
            owner_id: owner,
            company_id: company,
            min_reliability_score: input.min_reliability_score,
            blocked,
            updated_at: now,
        };
        tx.replace_counterparty_filter(&filter).await?;
        audit(
            &mut tx,
            now,
            Some(actor.user.user_id),
            "counterparty_filter",
            Some(owner),
            "update",
            json!({"company_id": company, "blocked_company_ids": filter.blocked,
                   "min_reliability_score": filter.min_reliability_score}),
        )
        .await?;
        tx.commit().await?;
        // Every node's screens read the filters again (the cache drops on this, here at once).
        self.publish(crate::events::Event::CounterpartyFiltersChanged);
        self.view(owner).await
    }
}

fn not_found_company() -> EngineError {
    EngineError::NotFound("Company not found.".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    fn party() -> Party {
        Party { company: CompanyId::new(), user: UserId::new() }
    }

    fn filter(owner: Uuid, company: CompanyId, blocked: &[CompanyId], min: Option<i64>) -> CounterpartyFilter {
        CounterpartyFilter {
            owner_id: owner,
            company_id: company,
            min_reliability_score: min,
            blocked: blocked.iter().copied().collect(),
            updated_at: Utc::now(),
        }
    }

    #[test]
    fn a_block_holds_both_ways_from_the_firm_or_the_trader() {
        let (a, b, c) = (party(), party(), party());
        for f in [filter(a.company.0, a.company, &[b.company], None), filter(a.user.0, a.company, &[b.company], None)] {
            let s = Screen(vec![f]);
            assert!(s.blocks(a, b) && s.blocks(b, a));
            assert!(!s.blocks(a, c) && !s.blocks(c, b));
            assert!(!s.allows(b, a, |_| 100));
        }
        // Another trader of the firm is not held by a trader's own filter.
        let colleague = Party { company: a.company, user: UserId::new() };
        let s = Screen(vec![filter(a.user.0, a.company, &[b.company], None)]);
        assert!(!s.blocks(colleague, b));
    }

    #[test]
    fn a_minimum_score_holds_both_ways_and_the_higher_wins() {
        let (a, b) = (party(), party());
        let s = Screen(vec![filter(a.company.0, a.company, &[], Some(60)), filter(a.user.0, a.company, &[], Some(80))]);
        assert_eq!(s.min_score(a), Some(80));
        let score = |low: CompanyId| move |c: CompanyId| if c == low { 70 } else { 100 };
        assert!(!s.allows(a, b, score(b.company)), "b scores 70, a asks 80");
        assert!(!s.allows(b, a, score(b.company)));
        assert!(s.allows(a, b, score(a.company)), "a's own score does not matter to a");
        assert!(Screen::default().allows(a, b, |_| 0));
    }
}
