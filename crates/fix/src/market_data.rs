//! The venue's market-data session (issue 30, ADR 0049): a FIX 4.4 initiator to the
//! provider of the exchange's prices. It subscribes (MarketDataRequest, 35=V, snapshot
//! and updates of the best bid and offer) to every active instrument with an exchange
//! instrument id, the provider's Symbol (55) for it, and moves each instrument's band from
//! the snapshots (35=W) and incremental refreshes (35=X) it receives. One node of the
//! venue holds it at a time (a lease renewed while the session lives); the session is
//! dialled again with backoff when it drops, and subscribes again.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use ironfix_core::message::{MsgType, RawMessage};
use ironfix_core::types::CompId;
use ironfix_engine::application::{Application, RejectReason, SessionId};
use ironfix_engine::close::CloseReason;
use ironfix_engine::tls::rustls;
use ironfix_engine::{Connection, Initiator, OutboundMessage, SessionConfig};
use ironfix_store::MemoryStore;
use rust_decimal::Decimal;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use upstairs_domain::InstrumentId;
use upstairs_engine::model::MarketDataSession;
use upstairs_engine::{Engine, Store};

use crate::BEGIN_STRING;

/// How many bands a round of prices moves at once.
const BANDS_AT_ONCE: usize = 4;

/// The lease the node running the session holds.
pub const LEASE: &str = upstairs_engine::fix::MARKET_DATA_LEASE;
/// How long a hold lasts unless renewed.
pub const HOLD: chrono::Duration = chrono::Duration::seconds(30);
/// The longest wait before dialling the provider again.
const BACKOFF_MAX: Duration = Duration::from_secs(30);
const BACKOFF_FIRST: Duration = Duration::from_millis(500);

/// Where the provider is and who the venue is to it.
#[derive(Clone, Debug)]
pub struct MarketDataSettings {
    /// `host:port` of the provider's FIX acceptor.
    pub connect: String,
    /// The venue's CompID on this session (49).
    pub sender_comp_id: String,
    /// The provider's CompID (56).
    pub target_comp_id: String,
    /// Sent as Password (554) on the Logon.
    pub password: Option<String>,
    pub heartbeat: Duration,
    /// How often the hold is renewed and new instruments are subscribed to (well inside
    /// the hold's 30 s).
    pub refresh: Duration,
    /// TLS to the provider: the PEM certificates of the authorities that sign its
    /// certificate, and the name it must carry (by default the host of `connect`).
    pub tls: Option<MarketDataTls>,
}

/// TLS to the market-data provider.
#[derive(Clone, Debug)]
pub struct MarketDataTls {
    pub ca: std::path::PathBuf,
    pub server_name: Option<String>,
}

/// A TLS client trusting only the authorities in `tls.ca`, and the name the provider's
/// certificate must carry.
fn tls_client(
    tls: &MarketDataTls,
    connect: &str,
) -> Result<(Arc<rustls::ClientConfig>, rustls::pki_types::ServerName<'static>), String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName};
    let mut roots = rustls::RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(&tls.ca).map_err(|e| format!("{}: {e}", tls.ca.display()))?;
    for cert in certs {
        let cert = cert.map_err(|e| format!("{}: {e}", tls.ca.display()))?;
        roots.add(cert).map_err(|e| format!("{}: {e}", tls.ca.display()))?;
    }
    if roots.is_empty() {
        return Err(format!("{}: no certificate", tls.ca.display()));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let host = connect.rsplit_once(':').map_or(connect, |(h, _)| h).trim_matches(['[', ']']);
    let name = tls.server_name.clone().unwrap_or_else(|| host.to_owned());
    let name = ServerName::try_from(name.clone()).map_err(|e| format!("TLS server name {name}: {e}"))?;
    Ok((Arc::new(config), name))
}

impl MarketDataSettings {
    pub fn new(connect: String, sender_comp_id: String, target_comp_id: String) -> Self {
        Self {
            connect,
            sender_comp_id,
            target_comp_id,
            password: None,
            heartbeat: Duration::from_secs(30),
            refresh: Duration::from_secs(10),
            tls: None,
        }
    }
}

/// Runs the session until `stop` says so; the task ends when it has logged out and let
/// its lease go.
pub fn start<S: Store>(engine: Engine<S>, settings: MarketDataSettings, stop: watch::Receiver<bool>) -> JoinHandle<()> {
    tokio::spawn(run(engine, settings, stop))
}

async fn run<S: Store>(engine: Engine<S>, settings: MarketDataSettings, mut stop: watch::Receiver<bool>) {
    let ids = CompId::new(&settings.sender_comp_id).and_then(|s| Ok((s, CompId::new(&settings.target_comp_id)?)));
    let Ok((sender, target)) = ids else {
        tracing::error!(sender = %settings.sender_comp_id, target = %settings.target_comp_id,
            "market data: invalid CompIDs; the session does not start");
        return;
    };
    let tls = match settings.tls.as_ref().map(|t| tls_client(t, &settings.connect)).transpose() {
        Ok(tls) => tls,
        Err(e) => {
            tracing::error!(error = %e, "market data: TLS to the provider cannot be set up; the session does not start");
            return;
        }
    };
    let mut backoff = BACKOFF_FIRST;
    while !*stop.borrow() {
        match engine.reference.hold_lease(LEASE, HOLD).await {
            Ok(true) => {}
            Ok(false) => {
                if pause(&mut stop, settings.refresh).await {
                    break;
                }
                continue;
            }
            Err(e) => {
                tracing::warn!(error = %e, "market data: could not take the session's lease");
                if pause(&mut stop, settings.refresh).await {
                    break;
                }
                continue;
            }
        }
        let app = Arc::new(Provider::new(engine.clone(), settings.password.clone()));
        let mut config = SessionConfig::new(sender.clone(), target.clone(), BEGIN_STRING);
        config.heartbeat_interval = settings.heartbeat;
        // Prices are not replayed: each Logon starts both numbers again, and the
        // subscription's snapshot brings the book back.
        config.reset_on_logon = true;
        let initiator = Initiator::new(config, app.clone()).with_store(Arc::new(MemoryStore::new()));
        let connected = match &tls {
            Some((config, name)) => {
                initiator.connect_tls(settings.connect.as_str(), config.clone(), name.clone()).await
            }
            None => initiator.connect(settings.connect.as_str()).await,
        };
        match connected {
            Ok(conn) => {
                backoff = BACKOFF_FIRST;
                tracing::info!(provider = %settings.connect, "market data: logged on");
                let applying = tokio::spawn(app.clone().apply());
                let stopped = session(&engine, &settings, &app, &conn, &mut stop).await;
                applying.abort();
                if stopped {
                    break;
                }
            }
            Err(e) => {
                tracing::warn!(provider = %settings.connect, error = %e, retry_in = ?backoff,
                    "market data: could not log on to the provider");
                if pause(&mut stop, backoff).await {
                    break;
                }
                backoff = (backoff * 2).min(BACKOFF_MAX);
            }
        }
    }
    if let Err(e) = engine.reference.release_lease(LEASE).await {
        tracing::warn!(error = %e, "market data: could not release the session's lease");
    }
}

/// Waits `d` or until stopped: true when stopped.
async fn pause(stop: &mut watch::Receiver<bool>, d: Duration) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(d) => *stop.borrow(),
        _ = stop.changed() => true,
    }
}

/// One logged-on session: subscribes, keeps the hold and the subscriptions current,
/// until it closes (false) or the venue stops (true).
async fn session<S: Store>(
    engine: &Engine<S>,
    settings: &MarketDataSettings,
    app: &Provider<S>,
    conn: &Connection,
    stop: &mut watch::Receiver<bool>,
) -> bool {
    let mut subscribed = BTreeSet::new();
    let mut requests = 0u64;
    let mut tick = tokio::time::interval(settings.refresh);
    let since = engine.clock().now();
    let state = |on: bool, since, symbols: usize| MarketDataSession {
        node_id: String::new(),
        provider: settings.connect.clone(),
        sender_comp_id: settings.sender_comp_id.clone(),
        target_comp_id: settings.target_comp_id.clone(),
        logged_on: on,
        since,
        last_price_at: *app.last_price_at.lock().unwrap_or_else(PoisonError::into_inner),
        symbols: i32::try_from(symbols).unwrap_or(i32::MAX),
        updated_at: since,
    };
    let say = |s: MarketDataSession| async move {
        if let Err(e) = engine.fix.record_market_data(s).await {
            tracing::warn!(error = %e, "market data: could not save the session's state");
        }
    };
    say(state(true, since, 0)).await;
    let stopped = loop {
        tokio::select! {
            _ = conn.wait_closed() => {
                tracing::warn!(reason = ?conn.close_reason(), "market data: the session closed");
                break false;
            }
            _ = stop.changed() => {
                let _ = conn.logout_with_text("The venue is shutting down").await;
                let _ = tokio::time::timeout(Duration::from_secs(5), conn.wait_closed()).await;
                break true;
            }
            _ = tick.tick() => {
                if !matches!(engine.reference.hold_lease(LEASE, HOLD).await, Ok(true)) {
                    tracing::warn!("market data: the lease is lost; logging out");
                    let _ = conn.logout_with_text("Another node holds the market-data session").await;
                    let _ = tokio::time::timeout(Duration::from_secs(5), conn.wait_closed()).await;
                    // Another node holds it now and says how it stands.
                    return false;
                }
                match engine.reference.market_data_symbols().await {
                    Ok(symbols) => {
                        app.know(&symbols);
                        let new: Vec<String> =
                            symbols.into_iter().map(|(s, _)| s).filter(|s| !subscribed.contains(s)).collect();
                        if !new.is_empty() {
                            requests += 1;
                            match conn.send(subscription(&format!("UPSTAIRS-{requests}"), &new)).await {
                                Ok(()) => {
                                    tracing::info!(symbols = new.len(), "market data: subscribed");
                                    subscribed.extend(new);
                                }
                                Err(e) => tracing::warn!(error = %e, "market data: could not subscribe"),
                            }
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "market data: could not read the instruments"),
                }
                say(state(true, since, subscribed.len())).await;
            }
        }
    };
    say(state(false, engine.clock().now(), subscribed.len())).await;
    stopped
}

/// A MarketDataRequest (35=V): snapshot and updates (263=1) of the top of the book
/// (264=1), as incremental refreshes (265=1), of bids and offers, for `symbols`.
fn subscription(id: &str, symbols: &[String]) -> OutboundMessage {
    let mut m = OutboundMessage::new(MsgType::new("V").expect("V is a MsgType"));
    m.push_str(262, id).push_str(263, "1").push_str(264, "1").push_str(265, "1");
    m.push_str(267, "2").push_str(269, "0").push_str(269, "1");
    m.push_uint(146, symbols.len() as u64);
    for s in symbols {
        m.push_str(55, s);
    }
    m
}

/// The best bid and offer of a symbol as the provider last said.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Top {
    bid: Option<Decimal>,
    offer: Option<Decimal>,
}

/// One MDEntry of a snapshot or an incremental refresh.
#[derive(Default, Debug, PartialEq)]
struct Entry {
    /// MDUpdateAction (279): 0 new, 1 change, 2 delete; none in a snapshot.
    action: Option<String>,
    /// MDEntryType (269): 0 bid, 1 offer.
    kind: Option<String>,
    symbol: Option<String>,
    price: Option<Decimal>,
}

/// The Symbol (55) before the entries, and the entries (NoMDEntries, 268) in order.
fn entries(m: &RawMessage<'_>) -> (Option<String>, Vec<Entry>) {
    let text = |v: &[u8]| std::str::from_utf8(v).ok().map(str::to_owned);
    let (mut symbol, mut out, mut cur, mut in_group) = (None, Vec::new(), None::<Entry>, false);
    for f in m.fields() {
        match f.tag {
            268 => in_group = true,
            279 if in_group => {
                out.extend(cur.take());
                cur = Some(Entry { action: text(f.value), ..Entry::default() });
            }
            269 if in_group => {
                if cur.as_ref().is_none_or(|c| c.kind.is_some()) {
                    out.extend(cur.take());
                    cur = Some(Entry::default());
                }
                if let Some(c) = cur.as_mut() {
                    c.kind = text(f.value);
                }
            }
            55 if in_group && cur.is_some() => cur.as_mut().expect("checked").symbol = text(f.value),
            55 => symbol = text(f.value),
            270 => {
                if let Some(c) = cur.as_mut() {
                    c.price = text(f.value).and_then(|p| p.parse().ok());
                }
            }
            _ => {}
        }
    }
    out.extend(cur);
    (symbol, out)
}

/// Applies a snapshot (all of a symbol's top anew) or a refresh (each entry's change) to
/// the tops; returns the symbols whose top changed.
fn apply(tops: &mut HashMap<String, Top>, snapshot: bool, symbol: Option<String>, entries: Vec<Entry>) -> Vec<String> {
    let mut changed = Vec::new();
    if snapshot && let Some(s) = &symbol {
        tops.insert(s.clone(), Top::default());
        changed.push(s.clone());
    }
    for e in entries {
        let Some(s) = e.symbol.or_else(|| symbol.clone()) else { continue };
        let top = tops.entry(s.clone()).or_default();
        let price = if e.action.as_deref() == Some("2") { None } else { e.price };
        match e.kind.as_deref() {
            Some("0") => top.bid = price,
            Some("1") => top.offer = price,
            _ => continue,
        }
        if !changed.contains(&s) {
            changed.push(s);
        }
    }
    changed
}

/// The session's ironfix callbacks: prices in, the Logon's password out. A price only
/// updates its symbol's top and marks it (the session's reader never waits for the
/// database); [`Provider::apply`] moves each marked band to its latest top, so prices
/// that come faster than bands can be written are conflated, never queued.
struct Provider<S: Store> {
    engine: Engine<S>,
    password: Option<String>,
    symbols: Mutex<HashMap<String, InstrumentId>>,
    tops: Mutex<HashMap<String, Top>>,
    changed: Mutex<BTreeSet<String>>,
    wake: tokio::sync::Notify,
    /// When the last price came (for the FIX sessions screen).
    last_price_at: Mutex<Option<DateTime<Utc>>>,
}

impl<S: Store> Provider<S> {
    fn new(engine: Engine<S>, password: Option<String>) -> Self {
        Self {
            engine,
            password,
            symbols: Mutex::default(),
            tops: Mutex::default(),
            changed: Mutex::default(),
            wake: tokio::sync::Notify::new(),
            last_price_at: Mutex::default(),
        }
    }

    fn know(&self, symbols: &[(String, InstrumentId)]) {
        *self.symbols.lock().unwrap_or_else(PoisonError::into_inner) = symbols.iter().cloned().collect();
    }

    /// Takes a snapshot or a refresh into the tops, and marks the symbols it changed.
    fn prices(&self, m: &RawMessage<'_>, snapshot: bool) {
        *self.last_price_at.lock().unwrap_or_else(PoisonError::into_inner) = Some(self.engine.clock().now());
        let (symbol, entries) = entries(m);
        let changed = apply(&mut self.tops.lock().unwrap_or_else(PoisonError::into_inner), snapshot, symbol, entries);
        if !changed.is_empty() {
            self.changed.lock().unwrap_or_else(PoisonError::into_inner).extend(changed);
            self.wake.notify_one();
        }
    }

    /// Moves, for as long as the session lives, the band of each marked symbol whose bid
    /// and offer are both known to its latest top.
    async fn apply(self: Arc<Self>) {
        loop {
            self.wake.notified().await;
            let marked = std::mem::take(&mut *self.changed.lock().unwrap_or_else(PoisonError::into_inner));
            let moves: Vec<(String, InstrumentId, Decimal, Decimal)> = {
                let tops = self.tops.lock().unwrap_or_else(PoisonError::into_inner);
                let symbols = self.symbols.lock().unwrap_or_else(PoisonError::into_inner);
                marked
                    .into_iter()
                    .filter_map(|s| {
                        let top = tops.get(&s).copied().unwrap_or_default();
                        let id = symbols.get(&s).copied()?;
                        Some((s, id, top.bid?, top.offer?))
                    })
                    .collect()
            };
            self.move_bands(moves).await;
        }
    }

    /// Moves the bands of different instruments side by side (each its own transaction;
    /// a symbol is marked once per round, so no two touch one instrument), so that one
    /// instrument's price does not wait behind the writes of all the others.
    async fn move_bands(&self, moves: Vec<(String, InstrumentId, Decimal, Decimal)>) {
        use futures::StreamExt;
        futures::stream::iter(moves)
            .for_each_concurrent(BANDS_AT_ONCE, |(symbol, id, bid, offer)| async move {
                // A price the band cannot take (off the tick, a crossed or locked book)
                // moves nothing: the band stays, and goes stale if no good price follows.
                if let Err(e) = self.engine.reference.move_band(None, id, bid, offer).await {
                    tracing::warn!(%symbol, %bid, %offer, error = %e, "market data: a price not taken");
                }
            })
            .await;
    }
}

#[async_trait]
impl<S: Store> Application for Provider<S> {
    async fn on_create(&self, _: &SessionId) {}

    async fn on_logon(&self, session: &SessionId) {
        tracing::info!(%session, "market-data session logged on");
    }

    async fn on_logout(&self, session: &SessionId) {
        tracing::info!(%session, "market-data session logged out");
    }

    async fn on_session_closed(&self, session: &SessionId, reason: &CloseReason) {
        tracing::info!(%session, ?reason, "market-data session closed");
    }

    async fn to_admin(&self, m: &mut OutboundMessage, _: &SessionId) {
        if m.msg_type().as_str() == "A"
            && let Some(p) = &self.password
        {
            m.push_str(554, p);
        }
    }

    async fn from_admin(&self, _: &RawMessage<'_>, _: &SessionId) -> Result<(), RejectReason> {
        Ok(())
    }

    async fn to_app(&self, _: &mut OutboundMessage, _: &SessionId) {}

    async fn from_app(&self, m: &RawMessage<'_>, _: &SessionId) -> Result<(), RejectReason> {
        match m.msg_type().as_str() {
            "W" => self.prices(m, true),
            "X" => self.prices(m, false),
            "Y" => tracing::warn!(
                md_req_id = m.get_field_str(262),
                reason = m.get_field_str(281),
                text = m.get_field_str(58),
                "market data: the provider refused a subscription"
            ),
            other => tracing::debug!(msg_type = other, "market data: message ignored"),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Option<Decimal> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn a_snapshot_sets_the_top_anew_and_a_refresh_changes_it() {
        let mut tops = HashMap::new();
        tops.insert("ERZ6".to_owned(), Top { bid: d("1"), offer: d("2") });
        let snap = vec![
            Entry { kind: Some("1".into()), price: d("94.80"), ..Entry::default() },
            Entry { kind: Some("0".into()), price: d("94.70"), ..Entry::default() },
        ];
        assert_eq!(apply(&mut tops, true, Some("ERZ6".into()), snap), ["ERZ6"]);
        assert_eq!(tops["ERZ6"], Top { bid: d("94.70"), offer: d("94.80") });
        // A snapshot without an offer leaves none: the old one is not kept.
        let bid_only = vec![Entry { kind: Some("0".into()), price: d("94.71"), ..Entry::default() }];
        apply(&mut tops, true, Some("ERZ6".into()), bid_only);
        assert_eq!(tops["ERZ6"], Top { bid: d("94.71"), offer: None });
        // A refresh names its symbol per entry; a delete clears that side.
        let refresh = vec![
            Entry { action: Some("1".into()), kind: Some("1".into()), symbol: Some("ERZ6".into()), price: d("94.81") },
            Entry { action: Some("0".into()), kind: Some("0".into()), symbol: Some("RXZ6".into()), price: d("0.42") },
            Entry { action: Some("2".into()), kind: Some("0".into()), symbol: Some("ERZ6".into()), price: None },
        ];
        assert_eq!(apply(&mut tops, false, None, refresh), ["ERZ6", "RXZ6"]);
        assert_eq!(tops["ERZ6"], Top { bid: None, offer: d("94.81") });
        assert_eq!(tops["RXZ6"], Top { bid: d("0.42"), offer: None });
        // An entry of another type (a trade, 269=2) changes nothing.
        let trade =
            vec![Entry { kind: Some("2".into()), symbol: Some("ERZ6".into()), price: d("94.75"), ..Entry::default() }];
        assert!(apply(&mut tops, false, None, trade).is_empty());
    }

    #[test]
    fn subscribes_to_bids_and_offers_of_each_symbol() {
        let m = subscription("UPSTAIRS-1", &["ERZ6".into(), "RXZ6".into()]);
        let fields: Vec<(u32, String)> = m
            .fields()
            .iter()
            .filter_map(|f| match f {
                ironfix_engine::OutboundField::Raw { tag, value } => {
                    Some((*tag, String::from_utf8(value.to_vec()).unwrap()))
                }
                _ => None,
            })
            .collect();
        let want = [
            (262, "UPSTAIRS-1"),
            (263, "1"),
            (264, "1"),
            (265, "1"),
            (267, "2"),
            (269, "0"),
            (269, "1"),
            (146, "2"),
            (55, "ERZ6"),
            (55, "RXZ6"),
        ];
        assert_eq!(fields, want.map(|(t, v)| (t, v.to_owned())));
    }
}
