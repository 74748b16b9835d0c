//! The HTTP server loop (ADR 0024): axum's `serve` with the bounds it does not set — a
//! deadline for a request's headers (which also closes idle keep-alive connections), a
//! ceiling on open connections, and a deadline for the graceful shutdown.

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::ServiceExt;

#[derive(Clone, Debug)]
pub struct ServerLimits {
    /// A request's headers must arrive within this; an idle keep-alive connection is
    /// closed after it too.
    pub header_read: Duration,
    /// Connections open at once; one more is closed as soon as it is accepted.
    pub max_connections: usize,
    /// How long a shutdown waits for requests in flight before it drops them.
    pub shutdown_deadline: Duration,
    /// `/api` requests handled at once; more wait a moment, then answer 429.
    pub max_in_flight: usize,
    /// How long an `/api` request's body may take to arrive; later, 408.
    pub body_read: Duration,
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            header_read: Duration::from_secs(10),
            max_connections: 10_000,
            shutdown_deadline: Duration::from_secs(10),
            max_in_flight: crate::MAX_IN_FLIGHT,
            body_read: crate::BODY_WAIT,
        }
    }
}

/// A connection's place under the connection ceiling. A WebSocket upgrade takes it along
/// (`take`), so an open socket counts until it closes, not only its HTTP handshake.
#[derive(Clone)]
pub struct ConnectionSlot(Arc<std::sync::Mutex<Option<tokio::sync::OwnedSemaphorePermit>>>);

impl ConnectionSlot {
    pub fn take(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }
}

/// Serves `app` until `shutdown` resolves, then lets requests in flight finish within the
/// deadline. Each request carries its peer address as `ConnectInfo<SocketAddr>`.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ServerLimits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    let open = Arc::new(Semaphore::new(limits.max_connections));
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(limits.header_read);
    builder.http2().timer(TokioTimer::new()).keep_alive_interval(Some(limits.header_read));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(c) => c,
                Err(e) => {
                    // Out of file descriptors, say: let some close before accepting again.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(permit) = open.clone().try_acquire_owned() else {
            tracing::warn!(%peer, max = limits.max_connections, "too many open connections: closing a new one");
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let slot = ConnectionSlot(Arc::new(std::sync::Mutex::new(Some(permit))));
        let held = slot.clone();
        let service = app.clone().map_request(move |mut req: axum::http::Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            req.extensions_mut().insert(held.clone());
            req.map(Body::new)
        });
        let conn = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(service))
            .into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, %peer, "connection ended with an error");
            }
            drop(slot);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(limits.shutdown_deadline) => {
            tracing::warn!(deadline = ?limits.shutdown_deadline, "requests still running at the shutdown deadline: dropped");
        }
    }
    Ok(())
}
