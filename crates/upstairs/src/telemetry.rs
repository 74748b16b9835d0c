//! Logs: human-readable by default, JSON with `UPSTAIRS_LOG_FORMAT=json`; filter with `RUST_LOG`.

use tracing_subscriber::EnvFilter;

pub fn init() {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_http=warn,lettre=warn"));
    let json = std::env::var("UPSTAIRS_LOG_FORMAT").is_ok_and(|v| v == "json");
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_target(false);
    let _ = if json { builder.json().try_init() } else { builder.try_init() };
}
