//! The venue's FIX 4.4 gateway (ADR 0025): an acceptor, on the `ironfix-engine` crate,
//! for brokers (TradeCaptureReports out, their acks in) and execution systems
//! (NewOrderSingle and OrderCancelRequest in, ExecutionReports out). One listener serves
//! every company: a Logon is routed by its SenderCompID to that company's session,
//! whose sequence numbers and sent frames live in the venue's database ([`store`]).
//!
//! The binary sees only [`FixGateway`]; ironfix's types stay in this crate.

mod app;
mod dictionary;
pub mod market_data;
pub mod messages;
pub mod provider;
mod store;

use async_trait::async_trait;
use ironfix_core::message::MsgType;
use ironfix_core::types::CompId;
use ironfix_engine::outcome::NotSentReason;
use ironfix_engine::registry::{LogonIdentity, LookupError, SessionLookup};
use ironfix_engine::tls::rustls;
use ironfix_engine::{
    Acceptor, AcceptorRegistry, Connection, GapPolicy, OutboundMessage, SendOutcome, SessionConfig, StoreFailurePolicy,
};
use ironfix_store::MemoryStore;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinHandle;
use upstairs_domain::CompanyId;
use upstairs_engine::fix::{FIX_HOLD, FIX_HOLD_RENEW};
use upstairs_engine::model::FixOutboxMessage;
use upstairs_engine::{Engine, Store};

use crate::app::{Carried, Shared, VenueApp};
use crate::store::DbStore;

pub const BEGIN_STRING: &str = "FIX.4.4";
/// How many connections may be in their Logon at once; more are closed at once.
const HANDSHAKES: usize = 64;
/// How many companies' sessions the gateway holds.
const MAX_SESSIONS: usize = 10_000;
const LOGON_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one store call may take before it counts as failed (longer than the
/// database's own lock and busy waits).
const STORE_TIMEOUT: Duration = Duration::from_secs(15);
/// How many messages, and how many bytes of them, may wait above a sequence gap.
const GAP_QUEUE_MESSAGES: usize = 1_000;
const GAP_QUEUE_BYTES: usize = 4 * 1024 * 1024;

/// Where and how the gateway listens.
#[derive(Clone, Debug)]
pub struct FixSettings {
    pub bind: String,
    /// The venue's CompID: the TargetCompID every Logon must name.
    pub comp_id: String,
    /// A PEM certificate chain and key: TLS on the FIX port.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// How often a session looks at its outbox unrung ([`OUTBOX_POLL`]): a commit rings it,
    /// on any node; the poll finds what a lost announcement did not say.
    pub outbox_poll: Duration,
}

/// How often a session looks at its outbox when nothing rang it.
pub const OUTBOX_POLL: Duration = Duration::from_secs(1);

/// A running FIX gateway, whatever FIX engine is behind it.
#[async_trait]
pub trait FixGateway: Send + Sync {
    /// The address it accepts connections on.
    fn local_addr(&self) -> SocketAddr;
    /// Stops accepting, logs every session out and waits for them to close.
    async fn stop(&self);
}

/// Binds the FIX port and starts accepting sessions.
pub async fn start<S: Store>(engine: Engine<S>, settings: FixSettings) -> std::io::Result<Box<dyn FixGateway>> {
    let tls = settings.tls.as_ref().map(|(cert, key)| tls_config(cert, key)).transpose()?;
    let venue = CompId::new(&settings.comp_id)
        .map_err(|e| std::io::Error::other(format!("FIX CompID {}: {e}", settings.comp_id)))?;
    let listener = TcpListener::bind(&settings.bind).await?;
    let addr = listener.local_addr()?;
    if let Err(e) = engine.fix.fix_log_off_all().await {
        tracing::warn!(error = %e, "could not mark the FIX sessions logged off");
    }
    let shared = Arc::new(Shared::new(settings.outbox_poll));
    let registry = AcceptorRegistry::new()
        .with_lookup(Arc::new(Lookup { engine: engine.clone(), venue, shared: shared.clone() }))
        .with_max_sessions(MAX_SESSIONS)
        .with_logon_timeout(LOGON_TIMEOUT);
    let (stop, stopped) = watch::channel(false);
    let live = Arc::new(Mutex::new(Vec::new()));
    let accept = tokio::spawn(accept_loop(engine, Arc::new(registry), listener, tls, stopped, live.clone(), shared));
    tracing::info!(%addr, comp_id = %settings.comp_id, tls = settings.tls.is_some(), "FIX gateway is listening");
    Ok(Box::new(Running { addr, stop, accept: Mutex::new(Some(accept)), live }))
}

struct Running {
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    accept: Mutex<Option<JoinHandle<()>>>,
    live: Arc<Mutex<Vec<Connection>>>,
}

#[async_trait]
impl FixGateway for Running {
    fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    async fn stop(&self) {
        let _ = self.stop.send(true);
        let accept = self.accept.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(a) = accept {
            let _ = a.await;
        }
        let live: Vec<Connection> = self.live.lock().unwrap_or_else(PoisonError::into_inner).drain(..).collect();
        for c in &live {
            let _ = c.logout_with_text("The venue is shutting down").await;
        }
        for c in &live {
            let _ = tokio::time::timeout(Duration::from_secs(5), c.wait_closed()).await;
        }
    }
}

fn tls_config(cert: &PathBuf, key: &PathBuf) -> std::io::Result<Arc<rustls::ServerConfig>> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let bad = |what: &str, e: &dyn std::fmt::Display| std::io::Error::other(format!("FIX TLS {what}: {e}"));
    let certs = CertificateDer::pem_file_iter(cert)
        .map_err(|e| bad("certificate", &e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad("certificate", &e))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| bad("key", &e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad("protocols", &e))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| bad("certificate", &e))?;
    Ok(Arc::new(config))
}

async fn accept_loop<S: Store>(
    engine: Engine<S>,
    registry: Arc<AcceptorRegistry<VenueApp<S>>>,
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    mut stopped: watch::Receiver<bool>,
    live: Arc<Mutex<Vec<Connection>>>,
    shared: Arc<Shared>,
) {
    let handshakes = Arc::new(Semaphore::new(HANDSHAKES));
    loop {
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "FIX accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = stopped.changed() => return,
        };
        let Ok(permit) = handshakes.clone().try_acquire_owned() else {
            tracing::warn!(%peer, "too many FIX Logons at once: connection closed");
            continue;
        };
        let (engine, registry, tls, live, shared) =
            (engine.clone(), registry.clone(), tls.clone(), live.clone(), shared.clone());
        tokio::spawn(async move {
            // The Logon's checks count failures per source address (`app::SOURCE`).
            let served = app::SOURCE.scope(peer.ip().to_canonical(), serve(&registry, stream, tls)).await;
            drop(permit);
            match served {
                Ok(conn) => run_session(engine, conn, live, &shared).await,
                Err(e) => tracing::info!(%peer, error = %e, "FIX connection refused"),
            }
        });
    }
}

async fn serve<S: Store>(
    registry: &AcceptorRegistry<VenueApp<S>>,
    stream: TcpStream,
    tls: Option<Arc<rustls::ServerConfig>>,
) -> Result<Connection, ironfix_engine::EngineError> {
    match tls {
        Some(config) => registry.serve_tls(stream, config).await,
        None => registry.serve(stream).await,
    }
}

/// A logged-on session: sends what the outbox holds for the company, in order, until
/// the session closes. The company is the one the session was made for (a CompID given
/// to another company since then does not change whose messages go out here).
async fn run_session<S: Store>(
    engine: Engine<S>,
    conn: Connection,
    live: Arc<Mutex<Vec<Connection>>>,
    shared: &Shared,
) {
    let Some(company) = shared.company_of(&conn.session_id().target_comp_id) else {
        let _ = conn.logout_with_text("Unknown SenderCompID").await;
        return;
    };
    live.lock().unwrap_or_else(PoisonError::into_inner).push(conn.clone());
    // Counted as present while it lives: gone for the grace period, the orders of the
    // parents it sent are pulled unless the company turned it off (ADR 0043).
    let _present = engine.presence.open_fix(company);
    let carried = shared.carried(company);
    let mut changes = engine.fix_outbox_changes(company);
    // This node's hold on the session (ADR 0026): renewed while it lives; a session whose
    // hold is lost or lapses ends, so two nodes never speak for one company.
    let mut renew = tokio::time::interval(FIX_HOLD_RENEW);
    renew.tick().await;
    // Past this without a renewal the hold may have lapsed: give the session up first.
    let hold = FIX_HOLD.to_std().unwrap_or_default().saturating_sub(FIX_HOLD_RENEW);
    let mut held_until = Instant::now() + hold;
    'send: loop {
        match engine.fix.fix_pending(company).await {
            Ok(pending) => {
                let full = pending.len() as i64 >= upstairs_engine::fix::OUTBOX_BATCH;
                let mut all_sent = true;
                for m in pending {
                    if !send(&engine, company, &conn, &carried, &m).await {
                        all_sent = false;
                        break;
                    }
                }
                // More waiting, and the session takes them: at once, not after a wait.
                if full && all_sent && !conn.is_closed() {
                    continue;
                }
            }
            Err(e) => tracing::warn!(%company, error = %e, "could not read the FIX outbox"),
        }
        // Rung, or the poll: the outbox again. A renewal of the hold reads nothing.
        let poll = tokio::time::sleep(shared.outbox_poll);
        tokio::pin!(poll);
        loop {
            tokio::select! {
                _ = changes.changed() => continue 'send,
                _ = conn.wait_closed() => break 'send,
                _ = &mut poll => continue 'send,
                _ = renew.tick() => match engine.fix.fix_renew_session(company).await {
                    Ok(true) => held_until = Instant::now() + hold,
                    Ok(false) => {
                        tracing::warn!(%company, "another node holds this FIX session now: logging out");
                        let _ = conn.logout_with_text("This session is held by another node").await;
                        break 'send;
                    }
                    Err(e) if Instant::now() >= held_until => {
                        tracing::warn!(%company, error = %e, "could not renew the FIX session's hold in time: logging out");
                        let _ = conn.logout_with_text("The venue cannot keep this session").await;
                        break 'send;
                    }
                    Err(e) => tracing::warn!(%company, error = %e, "could not renew the FIX session's hold"),
                },
            }
        }
    }
    live.lock().unwrap_or_else(PoisonError::into_inner).retain(|c| !c.is_closed());
}

/// Sends one outbox message, its id carried to the store beside the frame (which marks
/// it sent as it files the frame); false when the session can take no more.
async fn send<S: Store>(
    engine: &Engine<S>,
    company: CompanyId,
    conn: &Connection,
    carried: &Carried,
    m: &FixOutboxMessage,
) -> bool {
    let message = messages::encode(&m.fix_outbox_id, &m.report);
    let Ok(msg_type) = MsgType::new(message.msg_type) else {
        tracing::error!(id = %m.fix_outbox_id, msg_type = message.msg_type, "no valid MsgType");
        return true;
    };
    let mut out = OutboundMessage::new(msg_type);
    for (t, v) in &message.fields {
        out.push_str(*t, v);
    }
    carried.put(&m.fix_outbox_id, message.msg_type);
    let outcome = conn.send_tracked(out).await;
    carried.clear();
    match outcome {
        SendOutcome::Sent { .. } => true,
        SendOutcome::NotSent { reason: NotSentReason::Invalid { detail, .. }, .. } => {
            // Never sendable (every value is cleaned, so this is a bug): set aside under
            // number 0 rather than holding up the company's queue for good.
            tracing::error!(%company, id = %m.fix_outbox_id, %detail, "a FIX outbox message cannot be encoded");
            if let Err(e) = engine.fix.fix_set_aside(company, &m.fix_outbox_id).await {
                tracing::warn!(%company, error = %e, "could not set a FIX message aside");
            }
            true
        }
        other => {
            // Not sent (the session is closing, or the frame could not be filed): the row
            // stays pending unless its filing committed, in which case a ResendRequest
            // replays it.
            tracing::info!(%company, id = %m.fix_outbox_id, outcome = ?other, "FIX message not sent now");
            false
        }
    }
}

/// Finds the session of a Logon's SenderCompID: the company's, with its database store,
/// or, for a CompID no company has, one that only refuses the Logon. That one has a
/// store too (in memory, never touched), so ironfix closes it without a reply exactly as
/// it does a wrong password: the peer cannot tell a CompID exists.
struct Lookup<S: Store> {
    engine: Engine<S>,
    venue: CompId,
    shared: Arc<Shared>,
}

#[async_trait]
impl<S: Store> SessionLookup<VenueApp<S>> for Lookup<S> {
    async fn lookup(&self, identity: &LogonIdentity) -> Result<Option<Acceptor<VenueApp<S>>>, LookupError> {
        if identity.target_comp_id() != &self.venue {
            return Ok(None);
        }
        let comp_id = identity.sender_comp_id().clone();
        let company =
            self.engine.fix.fix_company(comp_id.as_str()).await.map_err(|e| LookupError::new(e.to_string()))?;
        // The venue never resets on its own: a peer's ResetSeqNumFlag is honoured when its
        // company allows it (checked at each Logon, `VenueApp::from_admin`).
        // Messages above a gap wait for it to be filled, and are then acted on in turn (a
        // TestRequest among them is answered then, not before).
        let config = SessionConfig::new(self.venue.clone(), comp_id.clone(), BEGIN_STRING)
            .with_gap_policy(GapPolicy::Queue { max_messages: GAP_QUEUE_MESSAGES, max_bytes: GAP_QUEUE_BYTES });
        let Some(company) = company else {
            let app = VenueApp::new(self.engine.clone(), None, self.shared.clone());
            return Ok(Some(Acceptor::new(config, Arc::new(app)).with_store(Arc::new(MemoryStore::new()))));
        };
        let store = DbStore::open(self.engine.clone(), company.company_id, self.shared.carried(company.company_id))
            .await
            .map_err(|e| LookupError::new(e.to_string()))?;
        self.shared.bind(comp_id.as_str(), company.company_id);
        let app = VenueApp::new(self.engine.clone(), Some(company.company_id), self.shared.clone());
        Ok(Some(
            Acceptor::new(config, Arc::new(app))
                .with_inbound_validation(dictionary::unsupported_types())
                .with_store(Arc::new(store))
                .with_store_failure_policy(StoreFailurePolicy::CloseSession)
                .with_store_timeout(STORE_TIMEOUT),
        ))
    }
}
