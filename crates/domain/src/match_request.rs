//! Match requests: a taker asks the owner of one resting order to match part or all of
//! it. The lifecycle is one `match (state, event)`; who may cause which event is the
//! engine's business.

use serde::{Deserialize, Serialize};

/// The states the spec names (section 3). The broker states follow a match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum MatchRequestState {
    Pending,
    Accepted,
    PartialBrokerAccepted,
    BrokerAccepted,
    PartialBrokerFilled,
    Cancelled,
    SystemCancelledPriceOutOfTick,
    Rejected,
    TimedOut,
    BrokerFilled,
    Breakdown,
}

impl MatchRequestState {
    pub const ALL: [MatchRequestState; 11] = [
        MatchRequestState::Pending,
        MatchRequestState::Accepted,
        MatchRequestState::PartialBrokerAccepted,
        MatchRequestState::BrokerAccepted,
        MatchRequestState::PartialBrokerFilled,
        MatchRequestState::Cancelled,
        MatchRequestState::SystemCancelledPriceOutOfTick,
        MatchRequestState::Rejected,
        MatchRequestState::TimedOut,
        MatchRequestState::BrokerFilled,
        MatchRequestState::Breakdown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MatchRequestState::Pending => "PENDING",
            MatchRequestState::Accepted => "ACCEPTED",
            MatchRequestState::PartialBrokerAccepted => "PARTIAL_BROKER_ACCEPTED",
            MatchRequestState::BrokerAccepted => "BROKER_ACCEPTED",
            MatchRequestState::PartialBrokerFilled => "PARTIAL_BROKER_FILLED",
            MatchRequestState::Cancelled => "CANCELLED",
            MatchRequestState::SystemCancelledPriceOutOfTick => "SYSTEM_CANCELLED_PRICE_OUT_OF_TICK",
            MatchRequestState::Rejected => "REJECTED",
            MatchRequestState::TimedOut => "TIMED_OUT",
            MatchRequestState::BrokerFilled => "BROKER_FILLED",
            MatchRequestState::Breakdown => "BREAKDOWN",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|x| x.as_str() == s)
    }

    /// The states of a request that became a trade (what billing counts); a broken-down
    /// trade is not one.
    pub const TRADES: [MatchRequestState; 5] = [
        MatchRequestState::Accepted,
        MatchRequestState::PartialBrokerAccepted,
        MatchRequestState::BrokerAccepted,
        MatchRequestState::PartialBrokerFilled,
        MatchRequestState::BrokerFilled,
    ];
}

/// What can happen to a match request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchRequestEvent {
    /// The responder (or their auto-response preference) accepts.
    Accept,
    /// The responder (or their auto-response preference) rejects.
    Reject,
    /// The taker withdraws it.
    Cancel,
    /// Five minutes passed, or the venue closed, without an answer.
    TimeOut,
    /// The band moved away from its price.
    PriceOutOfTick,
    /// Some brokers of the match confirmed, or all did.
    BrokerAccept {
        all: bool,
    },
    BrokerFill {
        all: bool,
    },
    /// A broker declined the trade: it breaks down.
    BrokerReject,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a {from:?} match request cannot {event:?}")]
pub struct MatchRequestTransitionError {
    pub from: MatchRequestState,
    pub event: MatchRequestEvent,
}

pub fn transition(
    from: MatchRequestState,
    event: MatchRequestEvent,
) -> Result<MatchRequestState, MatchRequestTransitionError> {
    use MatchRequestEvent as E;
    use MatchRequestState as S;
    let to = match (from, event) {
        (S::Pending, E::Accept) => S::Accepted,
        (S::Pending, E::Reject) => S::Rejected,
        (S::Pending, E::Cancel) => S::Cancelled,
        (S::Pending, E::TimeOut) => S::TimedOut,
        (S::Pending, E::PriceOutOfTick) => S::SystemCancelledPriceOutOfTick,
        (S::Accepted | S::PartialBrokerAccepted, E::BrokerAccept { all: true }) => S::BrokerAccepted,
        (S::Accepted | S::PartialBrokerAccepted, E::BrokerAccept { all: false }) => S::PartialBrokerAccepted,
        (S::BrokerAccepted | S::PartialBrokerFilled, E::BrokerFill { all: true }) => S::BrokerFilled,
        (S::BrokerAccepted | S::PartialBrokerFilled, E::BrokerFill { all: false }) => S::PartialBrokerFilled,
        (S::Accepted | S::PartialBrokerAccepted | S::BrokerAccepted | S::PartialBrokerFilled, E::BrokerReject) => {
            S::Breakdown
        }
        _ => return Err(MatchRequestTransitionError { from, event }),
    };
    Ok(to)
}

/// The reliability score (DESIGN §4): accepted ÷ (accepted + rejected + timed out) of the
/// match requests a responder received, as a whole percentage rounded half up; 100 with
/// no history. Withdrawn, out-of-band and pending requests do not count.
pub fn reliability(received: impl IntoIterator<Item = (MatchRequestState, i64)>) -> i64 {
    use MatchRequestState as S;
    let (mut accepted, mut declined) = (0i64, 0i64);
    for (state, n) in received {
        match state {
            // A trade a broker broke down was still accepted by the responder.
            S::Accepted
            | S::PartialBrokerAccepted
            | S::BrokerAccepted
            | S::PartialBrokerFilled
            | S::BrokerFilled
            | S::Breakdown => accepted += n,
            S::Rejected | S::TimedOut => declined += n,
            S::Pending | S::Cancelled | S::SystemCancelledPriceOutOfTick => {}
        }
    }
    let total = accepted + declined;
    if total == 0 { 100 } else { (accepted * 200 + total) / (total * 2) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MatchRequestEvent as E;
    use MatchRequestState as S;

    const EVENTS: [E; 10] = [
        E::Accept,
        E::Reject,
        E::Cancel,
        E::TimeOut,
        E::PriceOutOfTick,
        E::BrokerAccept { all: true },
        E::BrokerAccept { all: false },
        E::BrokerFill { all: true },
        E::BrokerFill { all: false },
        E::BrokerReject,
    ];

    /// Every (state, event) pair: the allowed ones and where they lead; all others refused.
    #[test]
    fn the_whole_table() {
        let allowed = [
            (S::Pending, E::Accept, S::Accepted),
            (S::Pending, E::Reject, S::Rejected),
            (S::Pending, E::Cancel, S::Cancelled),
            (S::Pending, E::TimeOut, S::TimedOut),
            (S::Pending, E::PriceOutOfTick, S::SystemCancelledPriceOutOfTick),
            (S::Accepted, E::BrokerAccept { all: true }, S::BrokerAccepted),
            (S::Accepted, E::BrokerAccept { all: false }, S::PartialBrokerAccepted),
            (S::PartialBrokerAccepted, E::BrokerAccept { all: true }, S::BrokerAccepted),
            (S::PartialBrokerAccepted, E::BrokerAccept { all: false }, S::PartialBrokerAccepted),
            (S::BrokerAccepted, E::BrokerFill { all: true }, S::BrokerFilled),
            (S::BrokerAccepted, E::BrokerFill { all: false }, S::PartialBrokerFilled),
            (S::PartialBrokerFilled, E::BrokerFill { all: true }, S::BrokerFilled),
            (S::PartialBrokerFilled, E::BrokerFill { all: false }, S::PartialBrokerFilled),
            (S::Accepted, E::BrokerReject, S::Breakdown),
            (S::PartialBrokerAccepted, E::BrokerReject, S::Breakdown),
            (S::BrokerAccepted, E::BrokerReject, S::Breakdown),
            (S::PartialBrokerFilled, E::BrokerReject, S::Breakdown),
        ];
        let mut checked = 0;
        for from in S::ALL {
            for event in EVENTS {
                let want = allowed.iter().find(|(f, e, _)| *f == from && *e == event).map(|(_, _, to)| *to);
                match (transition(from, event), want) {
                    (Ok(to), Some(w)) => assert_eq!(to, w, "{from:?} + {event:?}"),
                    (Err(e), None) => assert_eq!((e.from, e.event), (from, event)),
                    (got, want) => panic!("{from:?} + {event:?}: got {got:?}, want {want:?}"),
                }
                checked += 1;
            }
        }
        assert_eq!(checked, 11 * 10);
    }

    #[test]
    fn reliability_counts_answers_only() {
        assert_eq!(reliability([]), 100);
        assert_eq!(reliability([(S::Cancelled, 4), (S::Pending, 1)]), 100);
        assert_eq!(reliability([(S::Accepted, 1), (S::Rejected, 1)]), 50);
        assert_eq!(reliability([(S::BrokerFilled, 2), (S::TimedOut, 1)]), 67);
        assert_eq!(reliability([(S::Accepted, 1), (S::Rejected, 7)]), 13); // 12.5 rounds up
        assert_eq!(reliability([(S::TimedOut, 3)]), 0);
        assert_eq!(reliability([(S::Breakdown, 1), (S::Rejected, 1)]), 50);
    }

    #[test]
    fn names_round_trip() {
        for s in S::ALL {
            assert_eq!(S::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), serde_json::json!(s.as_str()));
        }
        assert_eq!(S::parse("pending"), None);
    }
}
