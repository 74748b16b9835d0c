//! STOMP 1.2 over WebSocket: our own small frame codec, the per-connection session, and
//! the hub that turns engine events into messages (book pushes conflated).

pub mod book_push;
pub mod frame;
pub mod hub;
pub mod messages;
pub mod order_push;
pub mod rfq_push;
pub mod session;
pub mod user_push;
