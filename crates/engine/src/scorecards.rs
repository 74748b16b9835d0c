//! Scorecards (issue 29): what the venue tells a firm, and its operator, about the quality
//! of its matches over a period. A firm's figures count only what it took part in, and
//! say nothing of who its counterparties were; the venue's count everything.
//!
//! Counted from the rows the use cases keep: match requests (made in the period; answered
//! when they left PENDING), RFQ responses (first quoted), the brokers' links (answered),
//! and the band's history (its mid at a trade, and 1, 5 and 30 minutes after).

use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;
use std::collections::HashMap;
use upstairs_domain::match_request::MatchRequestState;
use upstairs_domain::order::Direction;
use upstairs_domain::rfq::ResponseState;
use upstairs_domain::{CompanyId, InstrumentId, Permission, RfqId};

use crate::Store;
use crate::context::{Actor, require};
use crate::core::service;
use crate::error::EngineError;
use crate::model::*;
use crate::ports::*;

/// The longest period one scorecard covers.
pub const LONGEST: Duration = Duration::days(366);

/// The markouts' horizons, in minutes after a trade.
pub const MARKOUT_MINUTES: [i64; 3] = [1, 5, 30];

/// How the match requests of one side ended, by count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = OutcomesDto))]
pub struct Outcomes {
    pub total: i64,
    pub pending: i64,
    /// Accepted, whatever the brokers did since.
    pub accepted: i64,
    pub rejected: i64,
    pub timed_out: i64,
    pub withdrawn: i64,
    /// Ended by the venue when the band left the price.
    pub cancelled_by_venue: i64,
}

impl Outcomes {
    fn count(&mut self, state: MatchRequestState) {
        use MatchRequestState as M;
        self.total += 1;
        match state {
            M::Pending => self.pending += 1,
            M::Rejected => self.rejected += 1,
            M::TimedOut => self.timed_out += 1,
            M::Cancelled => self.withdrawn += 1,
            M::SystemCancelledPriceOutOfTick => self.cancelled_by_venue += 1,
            // Accepted, whatever its brokers did since.
            _ => self.accepted += 1,
        }
    }
}

/// Durations in milliseconds: how many, their median and 90th percentile (null when none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TimesDto))]
pub struct Times {
    pub count: i64,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub p50_ms: Option<i64>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub p90_ms: Option<i64>,
}

impl Times {
    fn of(mut ms: Vec<i64>) -> Self {
        ms.sort_unstable();
        let at = |p: usize| (!ms.is_empty()).then(|| ms[(ms.len() * p).div_ceil(100).max(1) - 1]);
        Self { count: ms.len() as i64, p50_ms: at(50), p90_ms: at(90) }
    }
}

/// An average over trades, in ticks of each trade's instrument.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TickAverage {
    /// The trades it averages (those whose band was known then).
    pub trades: i64,
    pub ticks: Option<Decimal>,
}

impl TickAverage {
    fn of(ticks: &[Decimal]) -> Self {
        let n = ticks.len() as i64;
        let avg = (n > 0).then(|| (ticks.iter().sum::<Decimal>() / Decimal::from(n)).round_dp(2).normalize());
        Self { trades: n, ticks: avg }
    }
}

/// A scorecard: a firm's (`company` set) or the venue's, from `from` to `to`.
#[derive(Clone, Debug, PartialEq)]
pub struct Scorecard {
    pub company: Option<CompanyId>,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// Match requests the firm sent (took with); the venue's: every one. An RFQ's trade
    /// counts with the RFQs and the trades, not here.
    pub sent: Outcomes,
    /// Match requests the firm's resting orders received; the venue's: every one.
    pub received: Outcomes,
    /// How long the firm took to accept or reject what it received (by hand or by its
    /// preference).
    pub response_times: Times,
    /// The resting interest the firm placed in the period (the venue's: every firm's), and
    /// how much of it traded: the fill rate of resting interest.
    pub resting: Resting,
    /// RFQs the firm asked: how many, how many got a quote, how many traded.
    pub rfqs_sent: i64,
    pub rfqs_quoted: i64,
    pub rfqs_traded: i64,
    /// RFQs the firm was asked as a provider: how many, quoted, won.
    pub quotes_asked: i64,
    pub quotes_given: i64,
    pub quotes_won: i64,
    /// How long the firm took to quote.
    pub quote_times: Times,
    /// How long the brokers took to accept, and to report the fill of, the firm's trades.
    pub broker_accept_times: Times,
    pub broker_fill_times: Times,
    /// Trades (accepted match requests) in the period.
    pub trades: i64,
    /// The trade price against the band's mid then, from the firm's side (the resting
    /// side's for the venue): positive is better than the mid.
    pub price_improvement: TickAverage,
    /// The band's mid 1, 5 and 30 minutes after each trade against its price, from the
    /// same side: positive is the market moving the firm's way.
    pub markouts: Vec<(i64, TickAverage)>,
}

/// The quantity of the resting orders placed in the period (child orders rested in the
/// book: never a taker's, nor an RFQ's trade), and how much of it traded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = RestingDto))]
pub struct Resting {
    pub rested_quantity: i64,
    /// Of it, what traded (whatever its brokers did since).
    pub filled_quantity: i64,
}

service!(
    /// Venue quality statistics per firm and venue-wide.
    Scorecards {}
);

impl<S: Store> Scorecards<S> {
    /// The caller's firm's scorecard (its traders and company admin).
    pub async fn own_scorecard(
        &self,
        actor: &Actor,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Scorecard, EngineError> {
        if actor.can(Permission::SandboxOnly)
            || !(actor.can(Permission::Trade) || actor.can(Permission::ManageOwnCompanyUsers))
        {
            return Err(EngineError::Forbidden("Only a firm's traders and company admin see its scorecard.".into()));
        }
        self.scorecard(Some(actor.user.company_id), from, to).await
    }

    /// A firm's scorecard, or the venue's (`company` none), for the venue's staff.
    pub async fn venue_scorecard(
        &self,
        actor: &Actor,
        company: Option<CompanyId>,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Scorecard, EngineError> {
        require(actor, Permission::AdminDrawer)?;
        if let Some(c) = company
            && self.store.single().await?.company(c).await?.is_none()
        {
            return Err(EngineError::NotFound("Company not found.".into()));
        }
        self.scorecard(company, from, to).await
    }

    async fn scorecard(
        &self,
        company: Option<CompanyId>,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Scorecard, EngineError> {
        // Times both databases keep, and a reader means.
        let latest = crate::context::latest_time();
        let earliest = DateTime::<Utc>::UNIX_EPOCH;
        for (field, at) in [("from", from), ("to", to)] {
            if !(earliest..=latest).contains(&at) {
                return Err(EngineError::invalid(field, "Must be a time from 1970 to 9999"));
            }
        }
        if to <= from {
            return Err(EngineError::invalid("to", "Must be after from"));
        }
        if to - from > LONGEST {
            return Err(EngineError::invalid("from", "At most 366 days"));
        }
        let now = self.clock.now();
        let mut c = self.store.read().await?;
        let requests = c.match_requests_between(company, from, to).await?;
        let quotes = c.quotes_between(company, from, to).await?;
        let links = c.broker_confirmations_between(company, from, to).await?;
        let mut resting = Resting::default();
        for (state, quantity) in c.rested_between(company, from, to).await? {
            resting.rested_quantity = resting.rested_quantity.saturating_add(quantity);
            if state.is_matched() {
                resting.filled_quantity = resting.filled_quantity.saturating_add(quantity);
            }
        }
        let ours = |id: CompanyId| company.is_none_or(|c| c == id);

        let (mut sent, mut received, mut answers) = (Outcomes::default(), Outcomes::default(), Vec::new());
        // An RFQ's trade is a match request made accepted: counted with the RFQs, and
        // with the trades below, not here.
        for m in requests.iter().filter(|m| m.rfq_id.is_none()) {
            if ours(m.requesting_company_id) {
                sent.count(m.state);
            }
            if ours(m.responding_company_id) {
                received.count(m.state);
                // The responder answered: it accepted (a trade) or rejected.
                let answered = traded(m.state) || m.state == MatchRequestState::Rejected;
                if let Some(at) = m.answered_at.filter(|_| answered) {
                    answers.push((at - m.created_at).num_milliseconds());
                }
            }
        }

        // The RFQs the firm asked: (quoted, traded) each.
        let mut asked = HashMap::<RfqId, (bool, bool)>::new();
        let (mut quotes_asked, mut quotes_given, mut quotes_won, mut quote_ms) = (0, 0, 0, Vec::new());
        for q in &quotes {
            if ours(q.requester) {
                let e = asked.entry(q.rfq_id).or_default();
                e.0 |= q.quoted_at.is_some() || q.state == ResponseState::Accepted;
                e.1 |= q.state == ResponseState::Accepted;
            }
            if ours(q.provider) {
                quotes_asked += 1;
                if let Some(at) = q.quoted_at {
                    quotes_given += 1;
                    quote_ms.push((at - q.asked_at).num_milliseconds());
                }
                quotes_won += i64::from(q.state == ResponseState::Accepted);
            }
        }

        let step_times = |step: ConfirmationStep| {
            Times::of(
                links
                    .iter()
                    .filter(|l| l.step == step)
                    .filter_map(|l| l.answered.map(|(at, _)| (at - l.created_at).num_milliseconds()))
                    .collect(),
            )
        };

        // Trades, each from the firm's side (the venue's: the resting side), against the
        // band's mid at the trade and after it.
        let trades: Vec<&MatchRequest> = requests.iter().filter(|m| traded(m.state)).collect();
        let mut instruments: Vec<InstrumentId> = trades.iter().map(|m| m.instrument_id).collect();
        instruments.sort();
        instruments.dedup();
        let last = Duration::minutes(MARKOUT_MINUTES[MARKOUT_MINUTES.len() - 1]);
        let mut bands = HashMap::new();
        for i in instruments {
            bands.insert(i, c.band_history(i, from, to + last).await?);
        }
        let (mut improvement, mut markouts) = (Vec::new(), vec![Vec::new(); MARKOUT_MINUTES.len()]);
        for m in &trades {
            let Some(history) = bands.get(&m.instrument_id) else { continue };
            // In ticks of the trade's time (ADR 0051), not today's.
            let tick = m.tick_size;
            if tick.is_zero() {
                continue;
            }
            let side = match company {
                Some(c) if c == m.requesting_company_id => m.direction,
                _ => m.direction.opposite(),
            };
            let better = |mid: Decimal| {
                let d = if side == Direction::Buy { mid - m.price } else { m.price - mid };
                d / tick
            };
            let at = m.answered_at.unwrap_or(m.created_at);
            if let Some(mid) = mid_at(history, at) {
                improvement.push(better(mid));
            }
            for (k, minutes) in MARKOUT_MINUTES.iter().enumerate() {
                let then = at + Duration::minutes(*minutes);
                if then <= now
                    && let Some(mid) = mid_at(history, then)
                {
                    markouts[k].push(better(mid));
                }
            }
        }

        Ok(Scorecard {
            company,
            from,
            to,
            sent,
            received,
            response_times: Times::of(answers),
            resting,
            rfqs_sent: asked.len() as i64,
            rfqs_quoted: asked.values().filter(|(quoted, _)| *quoted).count() as i64,
            rfqs_traded: asked.values().filter(|(_, won)| *won).count() as i64,
            quotes_asked,
            quotes_given,
            quotes_won,
            quote_times: Times::of(quote_ms),
            broker_accept_times: step_times(ConfirmationStep::Accept),
            broker_fill_times: step_times(ConfirmationStep::Fill),
            trades: trades.len() as i64,
            price_improvement: TickAverage::of(&improvement),
            markouts: MARKOUT_MINUTES.iter().zip(markouts).map(|(m, t)| (*m, TickAverage::of(&t))).collect(),
        })
    }
}

/// Whether a match request ended in a trade (accepted, whatever its brokers did since).
fn traded(state: MatchRequestState) -> bool {
    use MatchRequestState as M;
    !matches!(state, M::Pending | M::Rejected | M::TimedOut | M::Cancelled | M::SystemCancelledPriceOutOfTick)
}

/// The band's mid at `at`: the last move at or before it, if any.
fn mid_at(history: &[(DateTime<Utc>, Decimal, Decimal)], at: DateTime<Utc>) -> Option<Decimal> {
    let i = history.partition_point(|(since, _, _)| *since <= at);
    (i > 0).then(|| (history[i - 1].1 + history[i - 1].2) / Decimal::TWO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        assert_eq!(Times::of(vec![]), Times { count: 0, p50_ms: None, p90_ms: None });
        assert_eq!(Times::of(vec![7]), Times { count: 1, p50_ms: Some(7), p90_ms: Some(7) });
        let t = Times::of((1..=10).rev().map(|n| n * 100).collect());
        assert_eq!((t.count, t.p50_ms, t.p90_ms), (10, Some(500), Some(900)));
    }

    #[test]
    fn the_mid_is_the_band_in_force() {
        let t0 = DateTime::parse_from_rfc3339("2026-03-03T10:00:00Z").unwrap().with_timezone(&Utc);
        let d = |s: &str| s.parse::<Decimal>().unwrap();
        let h = [(t0, d("94.70"), d("94.80")), (t0 + Duration::minutes(1), d("94.72"), d("94.80"))];
        assert_eq!(mid_at(&h, t0 - Duration::seconds(1)), None);
        assert_eq!(mid_at(&h, t0), Some(d("94.75")));
        assert_eq!(mid_at(&h, t0 + Duration::seconds(59)), Some(d("94.75")));
        assert_eq!(mid_at(&h, t0 + Duration::minutes(5)), Some(d("94.76")));
    }

    #[test]
    fn averages_round_to_hundredths_of_a_tick() {
        let d = |s: &str| s.parse::<Decimal>().unwrap();
        assert_eq!(TickAverage::of(&[]), TickAverage { trades: 0, ticks: None });
        assert_eq!(TickAverage::of(&[d("1"), d("0.5"), d("-0.5")]).ticks, Some(d("0.33")));
    }
}
