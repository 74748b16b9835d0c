//! The `upstairs` binary's library: configuration, wiring and start-up, so tests can
//! start the real application in-process on a free port.

pub mod app;
pub mod cli;
pub mod demo;
pub mod telemetry;
