//! A real QuickFIX initiator (`tests/peers/fix_peer.py`) as a broker or an execution
//! system, and a bare FIX client for what QuickFIX would never send (malformed frames).

use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::{Peer, free_port, peer_script, python, temp_dir};

pub const WITHIN: Duration = Duration::from_secs(30);

/// A QuickFIX peer: every event it printed, and its stdin for commands.
pub struct FixPeer {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    /// Every event so far, in order.
    pub events: Vec<Value>,
    /// Which events an `expect` took already.
    taken: Vec<bool>,
}

/// The value of the first `tag` of a message event.
pub fn field(m: &Value, tag: u32) -> Option<String> {
    m["fields"].as_array()?.iter().find(|f| f[0] == tag).map(|f| f[1].as_str().unwrap_or_default().to_owned())
}

/// Every value of `tag` in a message event, in order.
pub fn fields(m: &Value, tag: u32) -> Vec<String> {
    m["fields"]
        .as_array()
        .map(|a| a.iter().filter(|f| f[0] == tag).map(|f| f[1].as_str().unwrap_or_default().to_owned()).collect())
        .unwrap_or_default()
}

pub fn is_app(m: &Value, msg_type: &str) -> bool {
    m["event"] == "app" && m["msg_type"] == msg_type
}

impl FixPeer {
    /// Logs on as `sender` with `password` to the venue's FIX port; `extra` are more
    /// arguments (e.g. `--auto-ack accept`).
    pub fn spawn(port: u16, sender: &str, password: &str, store: &Path, extra: &[&str]) -> FixPeer {
        let mut child = tokio::process::Command::new(python())
            .arg(peer_script("fix_peer.py"))
            .args(["--port", &port.to_string(), "--sender", sender, "--target", "UPSTAIRS", "--password", password])
            .arg("--store")
            .arg(store)
            .args(["--heartbeat", "5"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn fix_peer.py");
        let stdin = child.stdin.take().expect("stdin");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        FixPeer { child, stdin, lines, events: Vec::new(), taken: Vec::new() }
    }

    /// The first event no `expect` took yet that matches `pred` (taking it), reading
    /// more within `within`; panics at the deadline with what the peer said.
    pub async fn expect(&mut self, what: &str, within: Duration, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let found = self.events.iter().enumerate().position(|(i, e)| !self.taken[i] && pred(e));
            if let Some(i) = found {
                self.taken[i] = true;
                return self.events[i].clone();
            }
            if !self.read_one(deadline).await {
                panic!("no {what} within {within:?}; the peer said:\n{}", self.transcript());
            }
        }
    }

    /// Reads one event before `deadline`; false if none came.
    async fn read_one(&mut self, deadline: Instant) -> bool {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, self.lines.next_line()).await {
            Ok(Ok(Some(line))) => {
                self.events.push(serde_json::from_str(&line).unwrap_or_else(|_| panic!("peer printed {line}")));
                self.taken.push(false);
                true
            }
            _ => false,
        }
    }

    /// Reads whatever the peer says for `d`.
    pub async fn drain(&mut self, d: Duration) {
        let deadline = Instant::now() + d;
        while self.read_one(deadline).await {}
    }

    pub async fn logon(&mut self) {
        self.logon_within(WITHIN).await;
    }

    pub async fn logon_within(&mut self, within: Duration) {
        self.expect("logon", within, |e| e["event"] == "logon").await;
    }

    pub async fn command(&mut self, cmd: Value) {
        let line = format!("{cmd}\n");
        self.stdin.write_all(line.as_bytes()).await.expect("peer stdin");
        self.stdin.flush().await.expect("peer stdin");
    }

    pub async fn send(&mut self, msg_type: &str, fields: Value, groups: Value) {
        self.command(json!({"cmd": "send", "msg_type": msg_type, "fields": fields, "groups": groups})).await;
    }

    /// The peer's (next sender, next target) sequence numbers.
    pub async fn seq(&mut self) -> (u64, u64) {
        self.command(json!({"cmd": "seq"})).await;
        let e = self.expect("seq", WITHIN, |e| e["event"] == "seq").await;
        (e["next_sender"].as_u64().unwrap_or(0), e["next_target"].as_u64().unwrap_or(0))
    }

    /// Every application message of `msg_type` received so far.
    pub fn received(&self, msg_type: &str) -> Vec<Value> {
        self.events.iter().filter(|e| is_app(e, msg_type)).cloned().collect()
    }

    pub async fn stop(mut self) {
        self.command(json!({"cmd": "stop"})).await;
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }

    pub fn transcript(&self) -> String {
        self.events.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
    }
}

/// Waits until the sessions screen's numbers for `comp_id` are the peer's, mirrored (a
/// heartbeat may pass between the two reads); returns the screen's row.
pub async fn seqs_agree(app: &super::TestApp, admin: &str, comp_id: &str, peer: &mut FixPeer) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (_, sessions) = app.get("/api/admin/fix-sessions", Some(admin)).await;
        let row = sessions["items"].as_array().into_iter().flatten().find(|i| i["fix_comp_id"] == comp_id).cloned();
        let row = row.unwrap_or_else(|| panic!("no session row for {comp_id}: {sessions}"));
        let (peer_out, peer_in) = peer.seq().await;
        if (row["next_target_seq"].as_u64(), row["next_sender_seq"].as_u64()) == (Some(peer_out), Some(peer_in)) {
            return row;
        }
        assert!(Instant::now() < deadline, "{comp_id}: venue {row}, peer {peer_out} out, {peer_in} in");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits until the sessions screen shows `comp_id` logged off.
pub async fn logged_off(app: &super::TestApp, admin: &str, comp_id: &str) {
    session_becomes(app, admin, comp_id, "LOGGED_OFF").await
}

/// Polls the sessions screen until `comp_id`'s session is in `want` (within 10 s).
pub async fn session_becomes(app: &super::TestApp, admin: &str, comp_id: &str, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, sessions) = app.get("/api/admin/fix-sessions", Some(admin)).await;
        let row = sessions["items"].as_array().into_iter().flatten().find(|i| i["fix_comp_id"] == comp_id).cloned();
        let state = row.unwrap_or_else(|| panic!("no session row for {comp_id}: {sessions}"))["state"].clone();
        if state == want {
            return;
        }
        assert!(Instant::now() < deadline, "{comp_id} still {state}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A NewOrderSingle's fields and its Parties group naming `trader`.
pub fn new_order(cl_ord_id: &str, side: &str, qty: i64, symbol: &str, trader: &str) -> (Value, Value) {
    let fields = json!([
        [11, cl_ord_id],
        [54, side],
        [38, qty.to_string()],
        [40, "1"],
        [55, symbol],
        [60, "20260303-10:00:00.000"]
    ]);
    let groups = json!([{"count": 453, "delim": 448, "entries": [[[448, trader], [447, "D"], [452, "11"]]]}]);
    (fields, groups)
}

/// A FIX frame: BeginString, BodyLength, the fields, CheckSum.
pub fn frame(fields: &[(u32, &str)]) -> Vec<u8> {
    let body: String = fields.iter().map(|(t, v)| format!("{t}={v}\x01")).collect();
    let head = format!("8=FIX.4.4\x019={}\x01", body.len());
    let sum = head.bytes().chain(body.bytes()).fold(0u32, |s, b| s + u32::from(b)) % 256;
    format!("{head}{body}10={sum:03}\x01").into_bytes()
}

/// A bare FIX client on a TCP socket: writes what it is given, reads whole frames.
pub struct RawFix {
    stream: TcpStream,
    buf: Vec<u8>,
    pub seq: u64,
    sender: String,
}

impl RawFix {
    pub async fn connect(port: u16, sender: &str) -> RawFix {
        let stream = TcpStream::connect(("127.0.0.1", port)).await.expect("connect to the FIX port");
        RawFix { stream, buf: Vec::new(), seq: 1, sender: sender.to_owned() }
    }

    /// [`RawFix::connect`] from the source address `source` (any of 127.0.0.0/8 is this
    /// machine on Linux), so the venue sees another client.
    pub async fn connect_from(port: u16, sender: &str, source: &str) -> RawFix {
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        let from: std::net::SocketAddr = format!("{source}:0").parse().expect("a source address");
        socket.bind(from).unwrap_or_else(|e| panic!("bind to {source}: {e}"));
        let stream = socket.connect(([127, 0, 0, 1], port).into()).await.expect("connect to the FIX port");
        RawFix { stream, buf: Vec::new(), seq: 1, sender: sender.to_owned() }
    }

    /// Everything the venue says until it closes the connection, and how it closes it;
    /// None when it is still open after `within`.
    pub async fn until_closed(&mut self, within: Duration) -> Option<Closed> {
        let deadline = Instant::now() + within;
        loop {
            let mut chunk = [0u8; 4096];
            let left = deadline.saturating_duration_since(Instant::now());
            let error = match tokio::time::timeout(left, self.stream.read(&mut chunk)).await {
                Ok(Ok(0)) => None,
                Ok(Ok(n)) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    continue;
                }
                Ok(Err(e)) => Some(e.kind()),
                Err(_) => return None,
            };
            return Some(Closed { said: String::from_utf8_lossy(&self.buf).replace('\x01', "|"), error });
        }
    }

    /// Sends a message with a correct header and the next sequence number.
    pub async fn send(&mut self, msg_type: &str, body: &[(u32, &str)]) {
        let seq = self.seq.to_string();
        let now = chrono::Utc::now().format("%Y%m%d-%H:%M:%S%.3f").to_string();
        let mut fields: Vec<(u32, &str)> =
            vec![(35, msg_type), (34, &seq), (49, &self.sender), (52, &now), (56, "UPSTAIRS")];
        fields.extend_from_slice(body);
        self.seq += 1;
        self.write(&frame(&fields)).await;
    }

    pub async fn write(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.expect("write to the FIX port");
    }

    /// The next frame's fields, or None when the venue closed the connection or said
    /// nothing within `within`.
    pub async fn next(&mut self, within: Duration) -> Option<Vec<(u32, String)>> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(end) = find_frame_end(&self.buf) {
                let frame: Vec<u8> = self.buf.drain(..end).collect();
                let text = String::from_utf8_lossy(&frame).into_owned();
                return Some(
                    text.split('\x01')
                        .filter(|f| !f.is_empty())
                        .filter_map(|f| f.split_once('='))
                        .map(|(t, v)| (t.parse().unwrap_or(0), v.to_owned()))
                        .collect(),
                );
            }
            let mut chunk = [0u8; 4096];
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.stream.read(&mut chunk)).await {
                Ok(Ok(n)) if n > 0 => self.buf.extend_from_slice(&chunk[..n]),
                _ => return None,
            }
        }
    }

    /// Reads frames until one of `msg_type` comes, skipping heartbeats.
    pub async fn expect(&mut self, msg_type: &str, within: Duration) -> Vec<(u32, String)> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self.next(left).await.unwrap_or_else(|| panic!("no {msg_type} within {within:?}"));
            if tag(&m, 35).as_deref() == Some(msg_type) {
                return m;
            }
        }
    }
}

/// How the venue ended a connection: what it said first (SOH shown as `|`), and the
/// read error that ended it (None: an orderly close).
#[derive(Debug, PartialEq, Eq)]
pub struct Closed {
    pub said: String,
    pub error: Option<std::io::ErrorKind>,
}

/// Where the first complete frame in `buf` ends (after `10=xxx<SOH>`).
fn find_frame_end(buf: &[u8]) -> Option<usize> {
    let at = buf.windows(4).position(|w| w == b"\x0110=")?;
    buf[at + 4..].iter().position(|b| *b == 0x01).map(|p| at + 4 + p + 1)
}

pub fn tag(m: &[(u32, String)], t: u32) -> Option<String> {
    m.iter().find(|(k, _)| *k == t).map(|(_, v)| v.clone())
}

/// A QuickFIX acceptor playing the market-data provider (`tests/peers/md_provider.py`).
pub struct MdProvider {
    pub peer: Peer,
    /// The port it listens on (all interfaces).
    pub port: u16,
    _store: tempfile::TempDir,
}

impl MdProvider {
    pub async fn start(password: &str) -> MdProvider {
        Self::start_with(password, &[]).await
    }

    /// [`Self::start`] with more arguments (e.g. `--tls --cert … --key …`). It picks a free
    /// port and, when another process took it first, another one. Loading QuickFIX's FIX 4.4
    /// dictionary takes seconds on a loaded machine, hence the long deadline.
    pub async fn start_with(password: &str, extra: &[&str]) -> MdProvider {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
        loop {
            let port = free_port();
            let store = temp_dir();
            let args = ["--port", &port.to_string(), "--sender", "PROVIDER", "--target", "UPSTAIRS-MD"]
                .into_iter()
                .chain(["--password", password, "--store", &store.path().display().to_string()])
                .chain(extra.iter().copied())
                .map(str::to_owned)
                .collect::<Vec<_>>();
            let mut p = MdProvider { peer: Peer::spawn("md_provider.py", &args), port, _store: store };
            loop {
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                let Some(e) = p.peer.next_json(left).await else { panic!("the provider never listened") };
                match e["event"].as_str() {
                    Some("listening") => return p,
                    Some("error") if e["text"].as_str().is_some_and(|t| t.contains("cannot listen")) => break,
                    _ => {}
                }
            }
        }
    }

    pub async fn command(&mut self, cmd: Value) {
        use tokio::io::AsyncWriteExt;
        let stdin = self.peer.child.stdin.as_mut().unwrap();
        stdin.write_all(format!("{cmd}\n").as_bytes()).await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// The next event `event` that `pred` accepts, within 15 s.
    pub async fn expect(&mut self, event: &str, pred: impl Fn(&Value) -> bool) -> Value {
        self.expect_within(event, Duration::from_secs(15), pred).await
    }

    /// The next event `event` that `pred` accepts, within `within`.
    pub async fn expect_within(&mut self, event: &str, within: Duration, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let Some(e) = self.peer.next_json(left).await else { panic!("no {event} event from the provider") };
            if e["event"] == event && pred(&e) {
                return e;
            }
        }
    }
}
