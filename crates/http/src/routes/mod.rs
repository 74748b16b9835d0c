pub mod auth;
pub mod meta;
pub mod reference;
pub mod users;
