//! Requests for quote (DESIGN §4, RFQ): a trader asks chosen liquidity providers for a
//! price on a quantity; each addressed provider has one response, which it fills with a
//! quote or declines; the requester accepts one quote before the deadline. Two
//! lifecycles, each one `match (state, event)`; who may cause which event is the
//! engine's business.

use serde::{Deserialize, Serialize};

/// An RFQ as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum RfqState {
    /// Waiting for quotes, or for the requester to accept one.
    Open,
    /// A quote was accepted: the trade is a match.
    Completed,
    /// The deadline (or the close) came first.
    Expired,
    /// The requester withdrew it.
    Cancelled,
}

impl RfqState {
    pub const ALL: [RfqState; 4] = [RfqState::Open, RfqState::Completed, RfqState::Expired, RfqState::Cancelled];

    pub fn as_str(self) -> &'static str {
        match self {
            RfqState::Open => "OPEN",
            RfqState::Completed => "COMPLETED",
            RfqState::Expired => "EXPIRED",
            RfqState::Cancelled => "CANCELLED",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

/// One addressed provider's answer (spec section 4, RFQ response states).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ResponseState {
    AwaitingResponse,
    Responded,
    Accepted,
    RejectedByRequester,
    RejectedByResponder,
    Expired,
    Cancelled,
}

impl ResponseState {
    pub const ALL: [ResponseState; 7] = [
        ResponseState::AwaitingResponse,
        ResponseState::Responded,
        ResponseState::Accepted,
        ResponseState::RejectedByRequester,
        ResponseState::RejectedByResponder,
        ResponseState::Expired,
        ResponseState::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ResponseState::AwaitingResponse => "AWAITING_RESPONSE",
            ResponseState::Responded => "RESPONDED",
            ResponseState::Accepted => "ACCEPTED",
            ResponseState::RejectedByRequester => "REJECTED_BY_REQUESTER",
            ResponseState::RejectedByResponder => "REJECTED_BY_RESPONDER",
            ResponseState::Expired => "EXPIRED",
            ResponseState::Cancelled => "CANCELLED",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|x| x.as_str() == s)
    }

    /// Still open: the provider may quote (again) or decline.
    pub fn is_open(self) -> bool {
        matches!(self, ResponseState::AwaitingResponse | ResponseState::Responded)
    }
}

/// What can happen to an RFQ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RfqEvent {
    /// The requester accepted a quote.
    Accept,
    /// The deadline passed, or the venue closed.
    Expire,
    /// The requester withdrew it (or a kill switch did).
    Cancel,
    /// Every addressed provider declined: nothing is left to wait for (ADR 0036).
    AllDeclined,
}

/// What can happen to one response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseEvent {
    /// The provider quotes, or quotes again.
    Quote,
    /// The provider declines.
    Decline,
    /// The requester accepts this quote.
    Accept,
    /// The requester accepted another quote.
    AcceptedElsewhere,
    /// The RFQ's deadline passed, or the venue closed.
    Expire,
    /// The requester withdrew the RFQ.
    Cancel,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a {from:?} RFQ cannot {event:?}")]
pub struct RfqTransitionError {
    pub from: RfqState,
    pub event: RfqEvent,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a {from:?} RFQ response cannot {event:?}")]
pub struct ResponseTransitionError {
    pub from: ResponseState,
    pub event: ResponseEvent,
}

pub fn transition(from: RfqState, event: RfqEvent) -> Result<RfqState, RfqTransitionError> {
    use RfqEvent as E;
    use RfqState as S;
    Ok(match (from, event) {
        (S::Open, E::Accept) => S::Completed,
        (S::Open, E::Expire) => S::Expired,
        (S::Open, E::Cancel) => S::Cancelled,
        (S::Open, E::AllDeclined) => S::Expired,
        _ => return Err(RfqTransitionError { from, event }),
    })
}

pub fn response_transition(
    from: ResponseState,
    event: ResponseEvent,
) -> Result<ResponseState, ResponseTransitionError> {
    use ResponseEvent as E;
    use ResponseState as S;
    Ok(match (from, event) {
        (S::AwaitingResponse | S::Responded, E::Quote) => S::Responded,
        (S::AwaitingResponse | S::Responded, E::Decline) => S::RejectedByResponder,
        (S::Responded, E::Accept) => S::Accepted,
        (S::AwaitingResponse | S::Responded, E::AcceptedElsewhere) => S::RejectedByRequester,
        (S::AwaitingResponse | S::Responded, E::Expire) => S::Expired,
        (S::AwaitingResponse | S::Responded, E::Cancel) => S::Cancelled,
        _ => return Err(ResponseTransitionError { from, event }),
    })
}

/// The whole minutes an RFQ may run (spec section 5: 1 to 15; default 2).
pub const DEADLINE_MINUTES: std::ops::RangeInclusive<i64> = 1..=15;
pub const DEFAULT_DEADLINE_MINUTES: i64 = 2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rfq_state_and_event() {
        use RfqEvent as E;
        use RfqState as S;
        const ALLOWED: &[(S, E, S)] = &[
            (S::Open, E::Accept, S::Completed),
            (S::Open, E::Expire, S::Expired),
            (S::Open, E::Cancel, S::Cancelled),
            (S::Open, E::AllDeclined, S::Expired),
        ];
        for from in S::ALL {
            for event in [E::Accept, E::Expire, E::Cancel, E::AllDeclined] {
                let expected = ALLOWED.iter().find(|(f, e, _)| *f == from && *e == event).map(|(_, _, to)| *to);
                assert_eq!(transition(from, event).ok(), expected, "{from:?} {event:?}");
            }
        }
    }

    #[test]
    fn every_response_state_and_event() {
        use ResponseEvent as E;
        use ResponseState as S;
        const ALLOWED: &[(S, E, S)] = &[
            (S::AwaitingResponse, E::Quote, S::Responded),
            (S::Responded, E::Quote, S::Responded),
            (S::AwaitingResponse, E::Decline, S::RejectedByResponder),
            (S::Responded, E::Decline, S::RejectedByResponder),
            (S::Responded, E::Accept, S::Accepted),
            (S::AwaitingResponse, E::AcceptedElsewhere, S::RejectedByRequester),
            (S::Responded, E::AcceptedElsewhere, S::RejectedByRequester),
            (S::AwaitingResponse, E::Expire, S::Expired),
            (S::Responded, E::Expire, S::Expired),
            (S::AwaitingResponse, E::Cancel, S::Cancelled),
            (S::Responded, E::Cancel, S::Cancelled),
        ];
        let events = [E::Quote, E::Decline, E::Accept, E::AcceptedElsewhere, E::Expire, E::Cancel];
        let mut allowed = 0;
        for from in S::ALL {
            for event in events {
                let expected = ALLOWED.iter().find(|(f, e, _)| *f == from && *e == event).map(|(_, _, to)| *to);
                match expected {
                    Some(to) => {
                        assert_eq!(response_transition(from, event), Ok(to), "{from:?} {event:?}");
                        allowed += 1;
                    }
                    None => assert_eq!(
                        response_transition(from, event),
                        Err(ResponseTransitionError { from, event }),
                        "{from:?} {event:?}"
                    ),
                }
            }
        }
        assert_eq!(allowed, ALLOWED.len());
    }

    #[test]
    fn names_round_trip() {
        for s in RfqState::ALL {
            assert_eq!(RfqState::parse(s.as_str()), Some(s));
        }
        for s in ResponseState::ALL {
            assert_eq!(ResponseState::parse(s.as_str()), Some(s));
            assert_eq!(s.is_open(), matches!(s, ResponseState::AwaitingResponse | ResponseState::Responded));
        }
    }
}
