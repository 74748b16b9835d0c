//! One identifier type per entity: UUID v7 (time ordered, never sequential numbers).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub Uuid);

        impl $name {
            /// A fresh, time-ordered identifier.
            pub fn new() -> Self {
                Self(Uuid::now_v7())
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = uuid::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(s).map(Self)
            }
        }

        impl From<Uuid> for $name {
            fn from(u: Uuid) -> Self {
                Self(u)
            }
        }
    };
}

id_type!(
    /// A user account.
    UserId
);
id_type!(
    /// A company: trading firm, broker or liquidity provider.
    CompanyId
);
id_type!(
    /// A signed-in session.
    SessionId
);
id_type!(
    /// A tradable instrument (outright future or calendar spread).
    InstrumentId
);
id_type!(
    /// A parent order: a trader's intent on one instrument.
    ParentOrderId
);
id_type!(
    /// A child order working part of a parent order.
    OrderId
);
id_type!(
    /// A match request: a taker's request to match one resting order.
    MatchRequestId
);
id_type!(
    /// A notification to one user.
    NotificationId
);
id_type!(
    /// A request for quote sent to chosen liquidity providers.
    RfqId
);
id_type!(
    /// One addressed liquidity provider's response to an RFQ.
    RfqResponseId
);
