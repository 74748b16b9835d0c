//! Pure types and rules of the venue: identifiers, parsed values, roles and
//! permissions. No I/O, no async.

pub mod account;
pub mod calendar;
pub mod id;
pub mod match_request;
pub mod notification;
pub mod order;
pub mod price;
pub mod quantity;
pub mod rfq;
pub mod role;

pub use account::{AutoAccept, Email, FieldError, Password, UiMetadataEntry};
pub use id::{
    CompanyId, InstrumentId, MatchRequestId, NotificationId, OrderId, ParentOrderId, RfqId, RfqResponseId, SessionId,
    UserId,
};
pub use role::{Permission, Role, has_permission, roles_problem};
