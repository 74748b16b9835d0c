//! A market-data provider's side of a FIX 4.4 session (the demo's, ADR 0049): an acceptor
//! that answers each MarketDataRequest (35=V) with a snapshot (35=W) of each symbol it has
//! a price for, and sends every subscribed symbol's price as an incremental refresh
//! (35=X) each time new prices are published to it, changed or not (a price repeated says
//! that prices still come). The venue's market-data session logs on to it like to any
//! provider, so the demo's moving bands take the path production prices take.

use async_trait::async_trait;
use ironfix_core::message::{MsgType, RawMessage};
use ironfix_core::types::CompId;
use ironfix_engine::application::{Application, RejectReason, SessionId};
use ironfix_engine::{Acceptor, Connection, OutboundMessage, SessionConfig};
use ironfix_store::MemoryStore;
use rust_decimal::Decimal;
use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use crate::BEGIN_STRING;

/// Each symbol's best bid and offer.
pub type Prices = Arc<HashMap<String, (Decimal, Decimal)>>;

/// Listens on `bind` as `sender` for `target`'s sessions, one at a time, serving the
/// prices published on `prices` until `stop`.
pub async fn serve_prices(
    bind: &str,
    sender: &str,
    target: &str,
    prices: watch::Receiver<Prices>,
    mut stop: watch::Receiver<bool>,
) -> std::io::Result<(SocketAddr, JoinHandle<()>)> {
    let ids = CompId::new(sender).and_then(|s| Ok((s, CompId::new(target)?)));
    let (sender, target) = ids.map_err(|e| std::io::Error::other(format!("provider CompIDs: {e}")))?;
    let listener = TcpListener::bind(bind).await?;
    let addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        loop {
            let subscribed = Arc::new(Subscribed::default());
            let config = SessionConfig::new(sender.clone(), target.clone(), BEGIN_STRING);
            let acceptor = Acceptor::new(config, subscribed.clone()).with_store(Arc::new(MemoryStore::new()));
            let conn = tokio::select! {
                c = acceptor.accept(&listener) => c,
                _ = stop.changed() => return,
            };
            match conn {
                Ok(conn) => {
                    if serve(&conn, &subscribed, prices.clone(), &mut stop).await {
                        return;
                    }
                }
                Err(e) => tracing::warn!(error = %e, "demo provider: a session did not start"),
            }
        }
    });
    Ok((addr, task))
}

/// One session: snapshots as symbols are subscribed, refreshes as prices are published;
/// true when stopped.
async fn serve(
    conn: &Connection,
    subscribed: &Subscribed,
    mut prices: watch::Receiver<Prices>,
    stop: &mut watch::Receiver<bool>,
) -> bool {
    let mut sent: BTreeSet<String> = BTreeSet::new();
    loop {
        tokio::select! {
            _ = conn.wait_closed() => return false,
            _ = stop.changed() => {
                let _ = conn.logout_with_text("The provider is shutting down").await;
                return true;
            }
            _ = subscribed.new.notified() => {
                let now = prices.borrow().clone();
                for (req, symbol) in subscribed.take_new() {
                    if let Some((bid, offer)) = now.get(&symbol) {
                        let _ = conn.send(snapshot(&req, &symbol, *bid, *offer)).await;
                    }
                    sent.insert(symbol);
                }
            }
            changed = prices.changed() => {
                if changed.is_err() {
                    return false;
                }
                let now = prices.borrow_and_update().clone();
                let entries: Vec<_> = sent.iter().filter_map(|s| now.get(s).map(|p| (s.as_str(), *p))).collect();
                if !entries.is_empty() {
                    let _ = conn.send(refresh(&subscribed.request_id(), &entries)).await;
                }
            }
        }
    }
}

fn snapshot(req: &str, symbol: &str, bid: Decimal, offer: Decimal) -> OutboundMessage {
    let mut m = OutboundMessage::new(MsgType::new("W").expect("W is a MsgType"));
    m.push_str(262, req).push_str(55, symbol).push_str(268, "2");
    m.push_str(269, "0").push_str(270, &bid.to_string());
    m.push_str(269, "1").push_str(270, &offer.to_string());
    m
}

fn refresh(req: &str, entries: &[(&str, (Decimal, Decimal))]) -> OutboundMessage {
    let mut m = OutboundMessage::new(MsgType::new("X").expect("X is a MsgType"));
    m.push_str(262, req).push_uint(268, 2 * entries.len() as u64);
    for (symbol, (bid, offer)) in entries {
        for (kind, price) in [("0", bid), ("1", offer)] {
            m.push_str(279, "1").push_str(269, kind).push_str(55, symbol).push_str(270, &price.to_string());
        }
    }
    m
}

/// The symbols the session has asked for, the ones not yet answered with a snapshot.
#[derive(Default)]
struct Subscribed {
    state: Mutex<(Vec<(String, String)>, String)>,
    new: Notify,
}

impl Subscribed {
    fn take_new(&self) -> Vec<(String, String)> {
        std::mem::take(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner).0)
    }

    /// The latest request's id, which the refreshes name.
    fn request_id(&self) -> String {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).1.clone()
    }
}

#[async_trait]
impl Application for Subscribed {
    async fn on_create(&self, _: &SessionId) {}
    async fn on_logon(&self, session: &SessionId) {
        tracing::info!(%session, "demo provider: the venue logged on");
    }
    async fn on_logout(&self, _: &SessionId) {}
    async fn to_admin(&self, _: &mut OutboundMessage, _: &SessionId) {}
    async fn from_admin(&self, _: &RawMessage<'_>, _: &SessionId) -> Result<(), RejectReason> {
        Ok(())
    }
    async fn to_app(&self, _: &mut OutboundMessage, _: &SessionId) {}

    async fn from_app(&self, m: &RawMessage<'_>, _: &SessionId) -> Result<(), RejectReason> {
        if m.msg_type().as_str() != "V" || m.get_field_str(263) != Some("1") {
            return Ok(());
        }
        let req = m.get_field_str(262).unwrap_or_default().to_owned();
        let symbols: Vec<String> = m
            .fields()
            .filter(|f| f.tag == 55)
            .filter_map(|f| std::str::from_utf8(f.value).ok().map(str::to_owned))
            .collect();
        {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.0.extend(symbols.into_iter().map(|s| (req.clone(), s)));
            state.1 = req;
        }
        self.new.notify_one();
        Ok(())
    }
}
