pub mod auth;
pub mod meta;
pub mod users;
