//! Orders: the child-order lifecycle as one `match (state, event)`, directions, and
//! the parent order's quantity arithmetic.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Direction {
    Buy,
    Sell,
}

impl Direction {
    /// The other side of the book.
    pub fn opposite(self) -> Self {
        match self {
            Direction::Buy => Direction::Sell,
            Direction::Sell => Direction::Buy,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Buy => "BUY",
            Direction::Sell => "SELL",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "BUY" => Some(Direction::Buy),
            "SELL" => Some(Direction::Sell),
            _ => None,
        }
    }
}

/// Child order states, as the spec names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OrderState {
    Working,
    AwaitingMatch,
    AwaitingRfqAcceptance,
    Matched,
    BrokerAccepted,
    BrokerFilled,
    BrokerRejected,
    Error,
    Cancelled,
    Rejected,
    Expired,
    PartialBrokerAccepted,
    PartialBrokerFilled,
}

impl OrderState {
    pub const ALL: [OrderState; 13] = [
        OrderState::Working,
        OrderState::AwaitingMatch,
        OrderState::AwaitingRfqAcceptance,
        OrderState::Matched,
        OrderState::BrokerAccepted,
        OrderState::BrokerFilled,
        OrderState::BrokerRejected,
        OrderState::Error,
        OrderState::Cancelled,
        OrderState::Rejected,
        OrderState::Expired,
        OrderState::PartialBrokerAccepted,
        OrderState::PartialBrokerFilled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            OrderState::Working => "WORKING",
            OrderState::AwaitingMatch => "AWAITING_MATCH",
            OrderState::AwaitingRfqAcceptance => "AWAITING_RFQ_ACCEPTANCE",
            OrderState::Matched => "MATCHED",
            OrderState::BrokerAccepted => "BROKER_ACCEPTED",
            OrderState::BrokerFilled => "BROKER_FILLED",
            OrderState::BrokerRejected => "BROKER_REJECTED",
            OrderState::Error => "ERROR",
            OrderState::Cancelled => "CANCELLED",
            OrderState::Rejected => "REJECTED",
            OrderState::Expired => "EXPIRED",
            OrderState::PartialBrokerAccepted => "PARTIAL_BROKER_ACCEPTED",
            OrderState::PartialBrokerFilled => "PARTIAL_BROKER_FILLED",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|x| x.as_str() == s)
    }

    /// Quantity that counts as working on the parent (resting or locked).
    pub fn is_working(self) -> bool {
        matches!(self, OrderState::Working | OrderState::AwaitingMatch | OrderState::AwaitingRfqAcceptance)
    }

    /// Quantity that counts as matched on the parent.
    pub fn is_matched(self) -> bool {
        matches!(
            self,
            OrderState::Matched
                | OrderState::BrokerAccepted
                | OrderState::BrokerFilled
                | OrderState::PartialBrokerAccepted
                | OrderState::PartialBrokerFilled
        )
    }
}

/// What can happen to a child order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderEvent {
    /// The owner changes quantity, price, residual or iceberg (venue open).
    Edit,
    /// The owner cancels.
    Cancel,
    /// The venue closes.
    Expire,
    /// A match request locks it.
    Lock,
    /// The match request is accepted.
    Match,
    /// The taker withdrew the match request: back to the book.
    Release,
    /// The responder rejected or let the request time out: the order is cancelled.
    Decline,
    /// An RFQ reserves it.
    ReserveForRfq,
    /// Some brokers confirmed, or all did.
    BrokerAccept {
        all: bool,
    },
    BrokerFill {
        all: bool,
    },
    BrokerReject,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a {from:?} order cannot {event:?}")]
pub struct TransitionError {
    pub from: OrderState,
    pub event: OrderEvent,
}

/// The child-order lifecycle.
pub fn transition(from: OrderState, event: OrderEvent) -> Result<OrderState, TransitionError> {
    use OrderEvent as E;
    use OrderState as S;
    let to = match (from, event) {
        (S::Working, E::Edit) => S::Working,
        (S::Working | S::AwaitingMatch, E::Cancel) => S::Cancelled,
        (S::Working | S::AwaitingMatch | S::AwaitingRfqAcceptance, E::Expire) => S::Expired,
        (S::Working, E::Lock) => S::AwaitingMatch,
        (S::Working, E::ReserveForRfq) => S::AwaitingRfqAcceptance,
        (S::AwaitingMatch | S::AwaitingRfqAcceptance, E::Match) => S::Matched,
        (S::AwaitingMatch, E::Release) => S::Working,
        (S::AwaitingMatch | S::AwaitingRfqAcceptance, E::Decline) => S::Cancelled,
        (S::Matched | S::PartialBrokerAccepted, E::BrokerAccept { all: true }) => S::BrokerAccepted,
        (S::Matched | S::PartialBrokerAccepted, E::BrokerAccept { all: false }) => S::PartialBrokerAccepted,
        (S::BrokerAccepted | S::PartialBrokerFilled, E::BrokerFill { all: true }) => S::BrokerFilled,
        (S::BrokerAccepted | S::PartialBrokerFilled, E::BrokerFill { all: false }) => S::PartialBrokerFilled,
        (S::Matched | S::PartialBrokerAccepted | S::BrokerAccepted | S::PartialBrokerFilled, E::BrokerReject) => {
            S::BrokerRejected
        }
        _ => return Err(TransitionError { from, event }),
    };
    Ok(to)
}

/// Parent order states, as the spec names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ParentState {
    Active,
    Filled,
    Cancelled,
}

impl ParentState {
    pub const ALL: [ParentState; 3] = [ParentState::Active, ParentState::Filled, ParentState::Cancelled];

    pub fn as_str(self) -> &'static str {
        match self {
            ParentState::Active => "ACTIVE",
            ParentState::Filled => "FILLED",
            ParentState::Cancelled => "CANCELLED",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

/// What can happen to a parent order. Its children's trades and declines move its matched
/// quantity; the parent itself only follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParentEvent {
    /// Its matched quantity is now `matched` of `quantity` (a trade, or a broker's decline
    /// that put quantity back).
    Settle { quantity: i64, matched: i64 },
    /// Its owner, the kill switch or an operator cancels it; `matched` is what it traded.
    Cancel { matched: i64 },
}

/// Why a parent order cannot take an event; the texts are what its owner is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParentTransitionError {
    #[error("This parent order is no longer active.")]
    NotActive,
    #[error("A parent order with matched quantity cannot be cancelled.")]
    Matched,
}

/// The parent-order lifecycle: active until everything is matched (filled), active again
/// when a broker's decline puts quantity back, cancelled only while nothing has traded.
pub fn parent_transition(from: ParentState, event: ParentEvent) -> Result<ParentState, ParentTransitionError> {
    use ParentEvent as E;
    use ParentState as S;
    match (from, event) {
        (S::Active, E::Settle { quantity, matched }) if matched >= quantity => Ok(S::Filled),
        (S::Filled, E::Settle { quantity, matched }) if matched < quantity => Ok(S::Active),
        (S::Active | S::Filled, E::Settle { .. }) => Ok(from),
        (S::Cancelled, E::Settle { .. }) => Ok(S::Cancelled),
        (S::Active, E::Cancel { matched: 0 }) => Ok(S::Cancelled),
        (S::Active, E::Cancel { .. }) => Err(ParentTransitionError::Matched),
        (S::Filled | S::Cancelled, E::Cancel { .. }) => Err(ParentTransitionError::NotActive),
    }
}

/// What a resting order shows in the book: all of it, or an iceberg's minimum block
/// (`min_block`, the instrument's minimum quantity) when it is larger. The rule's only
/// statement: each child order row stores what it shows (`ChildOrder::shown`), and the
/// database's book levels are sums of those (ADR 0056).
pub fn shown_quantity(quantity: i64, iceberg: bool, min_block: i64) -> i64 {
    if iceberg { quantity.min(min_block) } else { quantity }
}

/// A parent order's quantities; `tradable = quantity − working − matched`, never negative.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quantities {
    pub tradable: i64,
    pub working: i64,
    pub matched: i64,
}

impl Quantities {
    pub fn of(quantity: i64, working: i64, matched: i64) -> Option<Quantities> {
        let tradable = quantity.checked_sub(working)?.checked_sub(matched)?;
        (tradable >= 0 && working >= 0 && matched >= 0).then_some(Quantities { tradable, working, matched })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use OrderEvent as E;
    use OrderState as S;

    #[test]
    fn every_parent_state_and_event() {
        use ParentEvent as P;
        use ParentState as PS;
        use ParentTransitionError as PE;
        let settle = |quantity, matched| P::Settle { quantity, matched };
        let table: &[(PS, P, Result<PS, PE>)] = &[
            (PS::Active, settle(1000, 0), Ok(PS::Active)),
            (PS::Active, settle(1000, 999), Ok(PS::Active)),
            (PS::Active, settle(1000, 1000), Ok(PS::Filled)),
            (PS::Filled, settle(1000, 1000), Ok(PS::Filled)),
            (PS::Filled, settle(1000, 400), Ok(PS::Active)),
            (PS::Filled, settle(1000, 0), Ok(PS::Active)),
            (PS::Cancelled, settle(1000, 1000), Ok(PS::Cancelled)),
            (PS::Cancelled, settle(1000, 0), Ok(PS::Cancelled)),
            (PS::Active, P::Cancel { matched: 0 }, Ok(PS::Cancelled)),
            (PS::Active, P::Cancel { matched: 1 }, Err(PE::Matched)),
            (PS::Filled, P::Cancel { matched: 1000 }, Err(PE::NotActive)),
            (PS::Cancelled, P::Cancel { matched: 0 }, Err(PE::NotActive)),
        ];
        for &(from, event, to) in table {
            assert_eq!(parent_transition(from, event), to, "{from:?} on {event:?}");
        }
        assert_eq!(PE::Matched.to_string(), "A parent order with matched quantity cannot be cancelled.");
        for s in PS::ALL {
            assert_eq!(PS::parse(s.as_str()), Some(s));
        }
    }

    /// Every allowed transition; anything not listed is forbidden.
    const ALLOWED: &[(S, E, S)] = &[
        (S::Working, E::Edit, S::Working),
        (S::Working, E::Cancel, S::Cancelled),
        (S::AwaitingMatch, E::Cancel, S::Cancelled),
        (S::Working, E::Expire, S::Expired),
        (S::AwaitingMatch, E::Expire, S::Expired),
        (S::AwaitingRfqAcceptance, E::Expire, S::Expired),
        (S::Working, E::Lock, S::AwaitingMatch),
        (S::Working, E::ReserveForRfq, S::AwaitingRfqAcceptance),
        (S::AwaitingMatch, E::Match, S::Matched),
        (S::AwaitingRfqAcceptance, E::Match, S::Matched),
        (S::AwaitingMatch, E::Release, S::Working),
        (S::AwaitingMatch, E::Decline, S::Cancelled),
        (S::AwaitingRfqAcceptance, E::Decline, S::Cancelled),
        (S::Matched, E::BrokerAccept { all: true }, S::BrokerAccepted),
        (S::Matched, E::BrokerAccept { all: false }, S::PartialBrokerAccepted),
        (S::PartialBrokerAccepted, E::BrokerAccept { all: true }, S::BrokerAccepted),
        (S::PartialBrokerAccepted, E::BrokerAccept { all: false }, S::PartialBrokerAccepted),
        (S::BrokerAccepted, E::BrokerFill { all: true }, S::BrokerFilled),
        (S::BrokerAccepted, E::BrokerFill { all: false }, S::PartialBrokerFilled),
        (S::PartialBrokerFilled, E::BrokerFill { all: true }, S::BrokerFilled),
        (S::PartialBrokerFilled, E::BrokerFill { all: false }, S::PartialBrokerFilled),
        (S::Matched, E::BrokerReject, S::BrokerRejected),
        (S::PartialBrokerAccepted, E::BrokerReject, S::BrokerRejected),
        (S::BrokerAccepted, E::BrokerReject, S::BrokerRejected),
        (S::PartialBrokerFilled, E::BrokerReject, S::BrokerRejected),
    ];

    const EVENTS: [E; 13] = [
        E::Edit,
        E::Cancel,
        E::Expire,
        E::Lock,
        E::Match,
        E::Release,
        E::Decline,
        E::ReserveForRfq,
        E::BrokerAccept { all: true },
        E::BrokerAccept { all: false },
        E::BrokerFill { all: true },
        E::BrokerFill { all: false },
        E::BrokerReject,
    ];

    #[test]
    fn every_state_and_event() {
        let mut allowed = 0;
        for from in S::ALL {
            for event in EVENTS {
                let expected = ALLOWED.iter().find(|(f, e, _)| *f == from && *e == event).map(|(_, _, to)| *to);
                match expected {
                    Some(to) => {
                        assert_eq!(transition(from, event), Ok(to), "{from:?} {event:?}");
                        allowed += 1;
                    }
                    None => {
                        assert_eq!(transition(from, event), Err(TransitionError { from, event }), "{from:?} {event:?}")
                    }
                }
            }
        }
        assert_eq!(allowed, ALLOWED.len());
    }

    #[test]
    fn terminal_states_accept_nothing() {
        for s in [S::Cancelled, S::Expired, S::Rejected, S::BrokerFilled, S::BrokerRejected, S::Error] {
            assert!(EVENTS.iter().all(|e| transition(s, *e).is_err()), "{s:?}");
        }
    }

    #[test]
    fn names_round_trip() {
        for s in S::ALL {
            assert_eq!(S::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
    }

    #[test]
    fn quantities() {
        assert_eq!(Quantities::of(5000, 1000, 500), Some(Quantities { tradable: 3500, working: 1000, matched: 500 }));
        assert_eq!(Quantities::of(5000, 4000, 1001), None);
        assert_eq!(Quantities::of(5000, -1, 0), None);
    }
}
