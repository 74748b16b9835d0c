//! Allocations and give-ups (issue 29, ADR 0045): a company's accounts, set by the
//! venue's operators; a trader splits a matched child order across them, before or after
//! the broker accepts, and may give the trade up to another of the firm's brokers for
//! clearing. Each change is a new version, sent to the executing broker: an
//! AllocationInstruction over its FIX session, an e-mail where it takes them; the
//! broker's AllocationInstructionAck answers the version it names.

use chrono::{DateTime, Utc};
use serde_json::json;
use std::collections::BTreeSet;
use upstairs_domain::order::OrderState;
use upstairs_domain::{CompanyId, FieldError, OrderId, Permission};
use uuid::Uuid;

use crate::Store;
use crate::confirmations::Confirmations;
use crate::context::{Actor, audit, require};
use crate::core::service;
use crate::error::{EngineError, StoreError};
use crate::events::Event;
use crate::model::*;
use crate::orders::not_found_order;
use crate::ports::*;
use crate::reports::{FixReports, parse_allocation_cancel_id, parse_allocation_id};

/// The most accounts one trade is split across.
pub const MAX_LINES: usize = 50;
/// The most accounts one company has.
pub const MAX_ACCOUNTS: usize = 500;

pub const ACCOUNT_CODE_TAKEN: &str = "This company already has an account with this code";
pub const TOO_LATE: &str = "This trade can no longer be allocated.";

/// A new account.
#[derive(Clone, Debug, Default)]
pub struct AccountInput {
    pub code: String,
    pub name: String,
}

/// What an operator changes of an account (its code stays: the brokers know it by it).
#[derive(Clone, Debug, Default)]
pub struct AccountChanges {
    pub name: Option<String>,
    pub active: Option<bool>,
}

/// One account's part, as a trader asks for it.
#[derive(Clone, Copy, Debug)]
pub struct LineInput {
    pub account_id: Uuid,
    pub quantity: i64,
}

/// An allocation as a trader asks for it.
#[derive(Clone, Debug, Default)]
pub struct AllocationInput {
    pub lines: Vec<LineInput>,
    pub give_up_broker_id: Option<CompanyId>,
}

/// An allocation as its trader reads it, with the give-up broker's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllocationView {
    pub allocation: Allocation,
    pub give_up_broker: Option<CompanyRef>,
}

/// The states of a side whose trade stands and whose fill its broker has not confirmed.
const ALLOCATABLE: [OrderState; 4] = [
    OrderState::Matched,
    OrderState::PartialBrokerAccepted,
    OrderState::BrokerAccepted,
    OrderState::PartialBrokerFilled,
];

fn valid_code(code: &str) -> bool {
    (1..=32).contains(&code.len()) && code.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-/".contains(&b))
}

service!(
    /// Companies' accounts and the allocations of their trades.
    Allocations { fix_reports: FixReports, confirmations: Confirmations }
);

impl<S: Store> Allocations<S> {
    // ----- accounts ------------------------------------------------------------------

    /// A company's accounts: every one for the venue's staff, the active ones for its own
    /// people; another firm gets the 404 of a company that does not exist.
    pub async fn accounts(&self, actor: &Actor, company: CompanyId) -> Result<Vec<CompanyAccount>, EngineError> {
        let staff = actor.can(Permission::AdminDrawer);
        if actor.user.company_id != company && !staff {
            return Err(not_found_company());
        }
        let mut tx = self.store.read().await?;
        tx.company(company).await?.ok_or_else(not_found_company)?;
        let all = tx.accounts(company).await?;
        Ok(all.into_iter().filter(|a| staff || a.active).collect())
    }

    /// A venue admin opens an account for a company.
    pub async fn create_account(
        &self,
        actor: &Actor,
        company: CompanyId,
        input: AccountInput,
    ) -> Result<CompanyAccount, EngineError> {
        require(actor, Permission::Admin)?;
        let code = input.code.trim().to_owned();
        let name = input.name.trim().to_owned();
        let mut errors = Vec::new();
        if !valid_code(&code) {
            errors.push(FieldError::new("code", "1 to 32 letters, digits, '.', '_', '-' or '/'"));
        }
        if name.is_empty() || name.chars().count() > 100 {
            errors.push(FieldError::new("name", "1 to 100 characters"));
        }
        if !errors.is_empty() {
            return Err(EngineError::Invalid { detail: "The account is not valid.".into(), errors });
        }
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        tx.company(company).await?.ok_or_else(not_found_company)?;
        if tx.accounts(company).await?.len() >= MAX_ACCOUNTS {
            return Err(EngineError::Conflict {
                detail: format!("A company has at most {MAX_ACCOUNTS} accounts."),
                errors: vec![],
            });
        }
        let a = CompanyAccount::open(company, &code, &name, now);
        match tx.insert_account(&a).await {
            Err(StoreError::Unique(_)) => {
                return Err(EngineError::Conflict {
                    detail: ACCOUNT_CODE_TAKEN.into(),
                    errors: vec![FieldError::new("code", ACCOUNT_CODE_TAKEN)],
                });
            }
            r => r?,
        }
        audit(&mut tx, now, Some(actor.user.user_id), "account", Some(a.account_id), "create", account_json(&a))
            .await?;
        tx.commit().await?;
        Ok(a)
    }

    /// A venue admin renames an account, or closes (reopens) it to new allocations.
    pub async fn update_account(
        &self,
        actor: &Actor,
        company: CompanyId,
        account: Uuid,
        changes: AccountChanges,
    ) -> Result<CompanyAccount, EngineError> {
        require(actor, Permission::Admin)?;
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let before = tx.account(account).await?.filter(|a| a.company_id == company).ok_or_else(not_found_account)?;
        let mut after = before.clone();
        if let Some(name) = changes.name {
            let name = name.trim().to_owned();
            if name.is_empty() || name.chars().count() > 100 {
                return Err(EngineError::Invalid {
                    detail: "The account is not valid.".into(),
                    errors: vec![FieldError::new("name", "1 to 100 characters")],
                });
            }
            after.name = name;
        }
        if let Some(active) = changes.active {
            after.active = active;
        }
        after.updated_at = now;
        tx.update_account(&after).await?;
        let details = json!({"before": account_json(&before), "after": account_json(&after)});
        audit(&mut tx, now, Some(actor.user.user_id), "account", Some(account), "update", details).await?;
        tx.commit().await?;
        Ok(after)
    }

    // ----- allocations ---------------------------------------------------------------

    /// The allocation of one of the trader's own trades (404 when it has none).
    pub async fn allocation(&self, actor: &Actor, order: OrderId) -> Result<AllocationView, EngineError> {
        let mut tx = self.store.read().await?;
        let o = tx.order(order).await?.filter(|o| o.created_by == actor.user.user_id).ok_or_else(not_found_order)?;
        let a = tx.allocation(o.order_id).await?.ok_or_else(not_found_allocation)?;
        Self::view(&mut tx, a).await
    }

    /// The allocations of the trader's own trades, the latest first (the screens show each
    /// beside its trade).
    pub async fn allocations(&self, actor: &Actor) -> Result<Vec<AllocationView>, EngineError> {
        let mut tx = self.store.read().await?;
        let all = tx.allocations_by(actor.user.user_id).await?;
        Self::views(&mut tx, all).await
    }

    /// For the pushes of `trader`'s screens: the allocations of these of their trades.
    pub async fn pushed(
        &self,
        trader: upstairs_domain::UserId,
        orders: &BTreeSet<OrderId>,
    ) -> Result<Vec<AllocationView>, EngineError> {
        let mut tx = self.store.single().await?;
        let mut all = Vec::with_capacity(orders.len());
        for id in orders {
            all.extend(tx.allocation(*id).await?.filter(|a| a.updated_by == trader));
        }
        Self::views(&mut tx, all).await
    }

    /// The trader splits one of their trades across the firm's accounts, and names the
    /// broker it is given up to (or none): a new version, sent to the executing broker.
    pub async fn allocate(
        &self,
        actor: &Actor,
        order: OrderId,
        input: AllocationInput,
    ) -> Result<AllocationView, EngineError> {
        crate::context::require_trade(actor)?;
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        // The parent's lock serialises this with the broker's answers to the same trade.
        let o = tx.order(order).await?.filter(|o| o.created_by == actor.user.user_id).ok_or_else(not_found_order)?;
        tx.lock_parent_order(o.parent_order_id).await?;
        let o = tx.order(order).await?.ok_or_else(not_found_order)?;
        // Until this side's broker confirmed the fill (it booked the trade then), whatever
        // the other side's did.
        let filled = tx
            .broker_confirmation_of_order(o.order_id, ConfirmationStep::Fill)
            .await?
            .is_some_and(|c| c.answered.is_some_and(|(_, yes)| yes));
        if !ALLOCATABLE.contains(&o.state) || filled {
            return Err(EngineError::Conflict { detail: TOO_LATE.into(), errors: vec![] });
        }
        let firm = tx.company(o.company_id).await?.ok_or_else(not_found_company)?;
        let accounts = tx.accounts(o.company_id).await?;
        let mut errors = Vec::new();
        if input.lines.is_empty() || input.lines.len() > MAX_LINES {
            errors.push(FieldError::new("lines", format!("1 to {MAX_LINES} accounts")));
        }
        let mut seen = BTreeSet::new();
        let mut lines = Vec::with_capacity(input.lines.len());
        let mut total: i64 = 0;
        for (n, l) in input.lines.iter().enumerate() {
            let account = accounts.iter().find(|a| a.account_id == l.account_id && a.active);
            match account {
                None => errors.push(FieldError::new(format!("lines[{n}].account_id"), "Not an account of your firm")),
                Some(_) if !seen.insert(l.account_id) => {
                    errors.push(FieldError::new(format!("lines[{n}].account_id"), "Each account once"))
                }
                Some(a) => lines.push(AllocationLine {
                    account_id: a.account_id,
                    code: a.code.clone(),
                    name: a.name.clone(),
                    quantity: l.quantity,
                }),
            }
            if l.quantity < 1 {
                errors.push(FieldError::new(format!("lines[{n}].quantity"), "At least 1"));
            }
            total = total.saturating_add(l.quantity.max(0));
        }
        if errors.is_empty() && total != o.quantity {
            errors.push(FieldError::new(
                "lines",
                format!("The quantities add up to {total}, not the trade's {}", o.quantity),
            ));
        }
        let give_up = match input.give_up_broker_id {
            None => None,
            Some(b) if b == o.broker_id => {
                errors.push(FieldError::new("give_up_broker_id", "The executing broker clears it already"));
                None
            }
            Some(b) => match firm.brokers.iter().find(|r| r.company_id == b) {
                Some(r) => Some(r.clone()),
                None => {
                    errors.push(FieldError::new("give_up_broker_id", "Not one of your firm's brokers"));
                    None
                }
            },
        };
        if !errors.is_empty() {
            return Err(EngineError::Invalid { detail: "The allocation is not valid.".into(), errors });
        }
        let before = tx.allocation(o.order_id).await?;
        let a = Allocation {
            order_id: o.order_id,
            version: before.as_ref().map_or(1, |b| b.version + 1),
            give_up_broker_id: give_up.as_ref().map(|g| g.company_id),
            lines,
            ack: AllocationAck::Pending,
            ack_text: None,
            updated_by: actor.user.user_id,
            updated_at: now,
        };
        tx.put_allocation(&a).await?;
        self.tell_broker(&mut tx, &o, &a, before.as_ref(), now).await?;
        let details = json!({
            "version": a.version,
            "lines": a.lines,
            "give_up_broker_id": a.give_up_broker_id,
            "before": before.as_ref().map(|b| json!({"version": b.version, "lines": b.lines, "give_up_broker_id": b.give_up_broker_id})),
        });
        audit(&mut tx, now, Some(actor.user.user_id), "order", Some(o.order_id.0), "allocate", details).await?;
        tx.commit().await?;
        self.poke();
        self.publish(Event::AllocationChanged { user_id: o.created_by, order_id: o.order_id });
        Ok(AllocationView { allocation: a, give_up_broker: give_up })
    }

    /// Inside the allocation's transaction: the executing broker's AllocationInstruction
    /// (when it has a FIX session) and e-mail (when it takes them).
    async fn tell_broker(
        &self,
        tx: &mut S::Tx,
        o: &ChildOrder,
        a: &Allocation,
        before: Option<&Allocation>,
        now: DateTime<Utc>,
    ) -> Result<(), EngineError> {
        self.fix_reports.report_allocation(tx, o, a, before, now).await?;
        let Some(broker) = tx.company(o.broker_id).await? else { return Ok(()) };
        let to = Some(&broker)
            .filter(|b| b.trade_confirmation_via_email_enabled)
            .and_then(|b| b.trade_confirmation_email.clone());
        if let Some(to) = to {
            // Every trade's sides were asked to accept it as it was made: that names the
            // match and its time.
            let too_late = || EngineError::Conflict { detail: TOO_LATE.into(), errors: vec![] };
            let asked =
                tx.broker_confirmation_of_order(o.order_id, ConfirmationStep::Accept).await?.ok_or_else(too_late)?;
            let m = tx.match_request(asked.match_request_id).await?.ok_or_else(too_late)?;
            let trade = self.confirmations.trade_details(tx, &m, o, None, asked.created_at, true).await?;
            let (message, timer) =
                crate::core::email_rows(&self.mail_domain(), now, &to, EmailTemplate::TradeAllocated { trade });
            let rows = NewRows { outbox: vec![message], timers: vec![timer], ..NewRows::default() };
            tx.insert_rows(&rows).await?;
        }
        Ok(())
    }

    /// A broker's AllocationInstructionAck: the answer to the version its AllocID names,
    /// from the broker the instruction went to; an answer to an older version changes
    /// nothing.
    pub async fn acknowledge(
        &self,
        broker: CompanyId,
        alloc_id: &str,
        accepted: bool,
        text: Option<String>,
    ) -> Result<(), EngineError> {
        let unknown = || EngineError::NotFound(format!("Unknown AllocID {alloc_id}"));
        if let Some((order, version)) = parse_allocation_cancel_id(alloc_id) {
            // The ack of a cancel: the trade is gone, and so is its split.
            let mut tx = self.store.single().await?;
            tx.order(order).await?.filter(|o| o.broker_id == broker).ok_or_else(unknown)?;
            tx.allocation(order).await?.filter(|a| a.version == version).ok_or_else(unknown)?;
            tracing::info!(%order, version, accepted, "a broker answered the cancel of an allocation");
            return Ok(());
        }
        let (order, version) = parse_allocation_id(alloc_id).ok_or_else(unknown)?;
        let now = self.clock.now();
        let mut tx = self.store.write().await?;
        let o = tx.order(order).await?.filter(|o| o.broker_id == broker).ok_or_else(unknown)?;
        // The trader's next version waits for this answer, or this answer for it: it never
        // writes back a version since replaced.
        tx.lock_parent_order(o.parent_order_id).await?;
        let Some(mut a) = tx.allocation(order).await?.filter(|a| a.version >= version) else {
            return Err(unknown());
        };
        if a.version != version {
            tracing::info!(%order, version, current = a.version, "an ack of an allocation since replaced");
            return Ok(());
        }
        a.ack = if accepted { AllocationAck::Accepted } else { AllocationAck::Rejected };
        a.ack_text = text.map(|t| t.chars().take(500).collect());
        tx.put_allocation(&a).await?;
        let details = json!({"version": version, "accepted": accepted, "text": a.ack_text, "broker_id": broker});
        audit(&mut tx, now, None, "order", Some(order.0), "allocation_ack", details).await?;
        tx.commit().await?;
        self.publish(Event::AllocationChanged { user_id: o.created_by, order_id: order });
        Ok(())
    }

    /// Each allocation with its give-up broker's name, each broker read once.
    async fn views(tx: &mut S::Tx, all: Vec<Allocation>) -> Result<Vec<AllocationView>, EngineError> {
        let mut names: std::collections::BTreeMap<CompanyId, Option<String>> = Default::default();
        let mut out = Vec::with_capacity(all.len());
        for a in all {
            let give_up_broker = match a.give_up_broker_id {
                Some(id) => {
                    let name = match names.get(&id) {
                        Some(name) => name.clone(),
                        None => {
                            let name = tx.company(id).await?.map(|c| c.name);
                            names.insert(id, name.clone());
                            name
                        }
                    };
                    name.map(|name| CompanyRef { company_id: id, name })
                }
                None => None,
            };
            out.push(AllocationView { allocation: a, give_up_broker });
        }
        Ok(out)
    }

    async fn view(tx: &mut S::Tx, a: Allocation) -> Result<AllocationView, EngineError> {
        Ok(Self::views(tx, vec![a]).await?.remove(0))
    }
}

fn account_json(a: &CompanyAccount) -> serde_json::Value {
    json!({"company_id": a.company_id, "code": a.code, "name": a.name, "active": a.active})
}

fn not_found_company() -> EngineError {
    EngineError::NotFound("Company not found.".into())
}

fn not_found_account() -> EngineError {
    EngineError::NotFound("Account not found.".into())
}

fn not_found_allocation() -> EngineError {
    EngineError::NotFound("This trade is not allocated.".into())
}
