//! STOMP 1.2 over WebSocket: our own small frame codec and the per-connection session.

pub mod frame;
pub mod session;
