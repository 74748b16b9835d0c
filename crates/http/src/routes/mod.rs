pub mod auth;
pub mod matches;
pub mod meta;
pub mod notifications;
pub mod orders;
pub mod outbox;
pub mod reference;
pub mod users;
