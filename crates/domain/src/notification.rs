//! Notifications: what each party of a match request or an RFQ is told, and when (ADRs
//! 0016, 0020).

use serde::{Deserialize, Serialize};

use crate::match_request::MatchRequestEvent;

/// The types the spec names (section 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum NotificationType {
    MatchRequestAccepted,
    MatchRequestCancelled,
    MatchRequestReceived,
    MatchRequestRejected,
    MatchRequestTimedOut,
    MatchRequestSystemCancelledOutOfTickPrice,
    /// A liquidity provider's user: an RFQ addressed to their company.
    RfqReceived,
    /// The requester: a provider quoted on their RFQ.
    RfqQuoteReceived,
    /// The provider who quoted: the requester accepted the quote.
    RfqQuoteAccepted,
    /// Both traders of a trade: a broker declined it, and it broke down.
    MatchRequestBrokerRejected,
    /// A trader: an operator corrected the limit price of their working order.
    OrderPriceCorrected,
    /// A trader who chose it: the venue cancelled their working order when their last
    /// connection dropped (ADR 0043).
    OrderCancelledOnDisconnect,
}

impl NotificationType {
    pub const ALL: [NotificationType; 12] = [
        NotificationType::MatchRequestAccepted,
        NotificationType::MatchRequestCancelled,
        NotificationType::MatchRequestReceived,
        NotificationType::MatchRequestRejected,
        NotificationType::MatchRequestTimedOut,
        NotificationType::MatchRequestSystemCancelledOutOfTickPrice,
        NotificationType::RfqReceived,
        NotificationType::RfqQuoteReceived,
        NotificationType::RfqQuoteAccepted,
        NotificationType::MatchRequestBrokerRejected,
        NotificationType::OrderPriceCorrected,
        NotificationType::OrderCancelledOnDisconnect,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NotificationType::MatchRequestAccepted => "MATCH_REQUEST_ACCEPTED",
            NotificationType::MatchRequestCancelled => "MATCH_REQUEST_CANCELLED",
            NotificationType::MatchRequestReceived => "MATCH_REQUEST_RECEIVED",
            NotificationType::MatchRequestRejected => "MATCH_REQUEST_REJECTED",
            NotificationType::MatchRequestTimedOut => "MATCH_REQUEST_TIMED_OUT",
            NotificationType::MatchRequestSystemCancelledOutOfTickPrice => {
                "MATCH_REQUEST_SYSTEM_CANCELLED_OUT_OF_TICK_PRICE"
            }
            NotificationType::RfqReceived => "RFQ_RECEIVED",
            NotificationType::RfqQuoteReceived => "RFQ_QUOTE_RECEIVED",
            NotificationType::RfqQuoteAccepted => "RFQ_QUOTE_ACCEPTED",
            NotificationType::MatchRequestBrokerRejected => "MATCH_REQUEST_BROKER_REJECTED",
            NotificationType::OrderPriceCorrected => "ORDER_PRICE_CORRECTED",
            NotificationType::OrderCancelledOnDisconnect => "ORDER_CANCELLED_ON_DISCONNECT",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// Which side of a match request a user is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Party {
    /// The taker.
    Requester,
    /// The owner of the resting order.
    Responder,
}

impl Party {
    pub fn as_str(self) -> &'static str {
        match self {
            Party::Requester => "REQUESTER",
            Party::Responder => "RESPONDER",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Party::Requester, Party::Responder].into_iter().find(|p| p.as_str() == s)
    }
}

/// Who made what a notification tells of, as its recipient may know it (ADR 0046): never
/// another firm's name or people's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Requestor {
    /// The recipient: the taker of the match request, the requester of the RFQ.
    You,
    /// Another firm, unnamed (the block book is anonymous).
    Counterparty,
    /// The venue itself: an operator's price correction, a cancel on disconnect.
    Venue,
}

/// The requestor of what a notification of `t` tells its recipient, whose side is `role`.
pub fn requestor(t: NotificationType, role: Party) -> Requestor {
    match (t, role) {
        (NotificationType::OrderPriceCorrected | NotificationType::OrderCancelledOnDisconnect, _) => Requestor::Venue,
        (_, Party::Requester) => Requestor::You,
        (_, Party::Responder) => Requestor::Counterparty,
    }
}

/// Who is told what when a match request ends by `event`, besides the responder's
/// received notification taking the new state: an answer (the responder's, or their
/// preference's) tells the taker; a withdrawal tells the responder; what the venue does
/// (the time-out, the band) tells both, and so does a broker declining the trade.
pub fn told_of(event: MatchRequestEvent) -> Vec<(Party, NotificationType)> {
    use MatchRequestEvent as E;
    use NotificationType as T;
    match event {
        E::Accept => vec![(Party::Requester, T::MatchRequestAccepted)],
        E::Reject => vec![(Party::Requester, T::MatchRequestRejected)],
        E::Cancel => vec![(Party::Responder, T::MatchRequestCancelled)],
        E::TimeOut => vec![(Party::Requester, T::MatchRequestTimedOut), (Party::Responder, T::MatchRequestTimedOut)],
        E::PriceOutOfTick => vec![
            (Party::Requester, T::MatchRequestSystemCancelledOutOfTickPrice),
            (Party::Responder, T::MatchRequestSystemCancelledOutOfTickPrice),
        ],
        E::BrokerReject => {
            vec![(Party::Requester, T::MatchRequestBrokerRejected), (Party::Responder, T::MatchRequestBrokerRejected)]
        }
        E::BrokerAccept { .. } | E::BrokerFill { .. } => vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notification_names_its_requestor_without_another_firm() {
        use NotificationType as T;
        let cases = [
            (T::MatchRequestReceived, Party::Responder, Requestor::Counterparty),
            (T::MatchRequestAccepted, Party::Requester, Requestor::You),
            (T::MatchRequestRejected, Party::Requester, Requestor::You),
            (T::MatchRequestCancelled, Party::Responder, Requestor::Counterparty),
            (T::MatchRequestTimedOut, Party::Requester, Requestor::You),
            (T::MatchRequestTimedOut, Party::Responder, Requestor::Counterparty),
            (T::MatchRequestSystemCancelledOutOfTickPrice, Party::Responder, Requestor::Counterparty),
            (T::MatchRequestBrokerRejected, Party::Requester, Requestor::You),
            (T::RfqReceived, Party::Responder, Requestor::Counterparty),
            (T::RfqQuoteReceived, Party::Requester, Requestor::You),
            (T::RfqQuoteAccepted, Party::Responder, Requestor::Counterparty),
            (T::OrderPriceCorrected, Party::Responder, Requestor::Venue),
            (T::OrderCancelledOnDisconnect, Party::Requester, Requestor::Venue),
        ];
        for (t, role, want) in cases {
            assert_eq!(requestor(t, role), want, "{t:?} to the {role:?}");
        }
    }

    #[test]
    fn names_round_trip() {
        for t in NotificationType::ALL {
            assert_eq!(NotificationType::parse(t.as_str()), Some(t));
            assert_eq!(serde_json::to_value(t).unwrap(), serde_json::json!(t.as_str()));
        }
        for p in [Party::Requester, Party::Responder] {
            assert_eq!(Party::parse(p.as_str()), Some(p));
        }
    }

    #[test]
    fn who_is_told_what() {
        use MatchRequestEvent as E;
        use NotificationType as T;
        assert_eq!(told_of(E::Accept), vec![(Party::Requester, T::MatchRequestAccepted)]);
        assert_eq!(told_of(E::Reject), vec![(Party::Requester, T::MatchRequestRejected)]);
        assert_eq!(told_of(E::Cancel), vec![(Party::Responder, T::MatchRequestCancelled)]);
        assert_eq!(told_of(E::TimeOut).len(), 2);
        assert_eq!(told_of(E::PriceOutOfTick).len(), 2);
        assert_eq!(
            told_of(E::BrokerReject),
            vec![(Party::Requester, T::MatchRequestBrokerRejected), (Party::Responder, T::MatchRequestBrokerRejected)]
        );
    }
}
