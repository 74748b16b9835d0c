//! SmtpMailer against a real SMTP server: aiosmtpd, run by `tests/peers/smtp_sink.py`.
//!
//! Needs the Python peers (`make test-deps`); the interpreter is `$UPSTAIRS_TEST_PYTHON`
//! or `<workspace>/.venv/bin/python`. Without it these tests fail, they never skip.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use upstairs_engine::Mailer;
use upstairs_engine::model::{EmailTemplate, OutgoingEmail};
use upstairs_mail::{MailSettings, SmtpMailer};

const READY_DEADLINE: Duration = Duration::from_secs(30);
const DELIVERY_DEADLINE: Duration = Duration::from_secs(15);

fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    // crates/mail → the workspace.
    manifest.ancestors().nth(2).unwrap_or(manifest).to_path_buf()
}

fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("UPSTAIRS_TEST_PYTHON").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        assert!(p.exists(), "UPSTAIRS_TEST_PYTHON={} does not exist; unset it or run `make test-deps`", p.display());
        return p;
    }
    let venv = workspace_root().join(".venv/bin/python");
    assert!(
        venv.exists(),
        "the SMTP test peer needs Python with aiosmtpd: run `make test-deps` \
         (creates {} from tests/peers/requirements.txt) or set UPSTAIRS_TEST_PYTHON",
        venv.display()
    );
    venv
}

/// A running `smtp_sink.py`: it stops when dropped (stdin closes, and it is killed).
struct Sink {
    _child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Sink {
    async fn start(auth: Option<&str>) -> Sink {
        let dir = tempfile::tempdir().expect("tempdir");
        let script = workspace_root().join("tests/peers/smtp_sink.py");
        let mut cmd = Command::new(python());
        cmd.arg(&script).arg(dir.path());
        if let Some(auth) = auth {
            cmd.arg("--auth").arg(auth);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn smtp_sink.py");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let port = tokio::time::timeout(READY_DEADLINE, async {
            while let Some(line) = lines.next_line().await.expect("read sink stdout") {
                if let Some(port) = line.strip_prefix("READY ") {
                    return port.trim().parse::<u16>().expect("port number");
                }
            }
            panic!(
                "smtp_sink.py exited before READY (see its stderr above); \
                 is aiosmtpd installed? run `make test-deps`"
            );
        })
        .await
        .expect("smtp_sink.py did not print READY in time");
        Sink { _child: child, port, dir }
    }

    fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Waits until `n` messages arrived and returns them, keyed by Message-ID.
    async fn messages(&self, n: usize) -> HashMap<String, Received> {
        let deadline = Instant::now() + DELIVERY_DEADLINE;
        loop {
            let files = eml_files(self.dir.path());
            if files.len() >= n {
                return files
                    .iter()
                    .map(|f| Received::parse(&std::fs::read(f).expect("read message")))
                    .map(|m| (m.header("Message-ID").expect("Message-ID").to_owned(), m))
                    .collect();
            }
            assert!(Instant::now() < deadline, "{} of {n} messages arrived in {DELIVERY_DEADLINE:?}", files.len());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn eml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read sink dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "eml"))
        .collect();
    files.sort();
    files
}

/// A message as the sink stored it: envelope lines, then the raw message.
struct Received {
    raw: String,
    headers: Vec<(String, String)>,
}

impl Received {
    fn parse(bytes: &[u8]) -> Received {
        let raw = String::from_utf8(bytes.to_vec()).expect("7-bit message");
        let head = raw.split("\r\n\r\n").next().expect("headers").to_owned();
        let mut headers: Vec<(String, String)> = Vec::new();
        for line in head.split("\r\n") {
            if line.starts_with([' ', '\t']) {
                let last = headers.last_mut().expect("folded line after a header");
                last.1.push(' ');
                last.1.push_str(line.trim());
            } else if let Some((name, value)) = line.split_once(':') {
                headers.push((name.to_owned(), value.trim().to_owned()));
            }
        }
        Received { raw, headers }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

fn settings() -> MailSettings {
    MailSettings {
        product_name: "Upstairs".into(),
        from: "Upstairs <no-reply@upstairs.local>".into(),
        support_email: "support@upstairs.example".into(),
        support_phone: "+44 20 7946 0000".into(),
    }
}

fn reset_email(id: &str, to: &str) -> OutgoingEmail {
    OutgoingEmail {
        message_id: format!("<{id}@localhost>"),
        to: to.into(),
        template: EmailTemplate::PasswordReset {
            first_name: "Jane".into(),
            link: format!("http://localhost:8080/reset-password?hash={}", "ab12".repeat(16)),
        },
    }
}

fn activation_email(id: &str, to: &str) -> OutgoingEmail {
    OutgoingEmail {
        message_id: format!("<{id}@localhost>"),
        to: to.into(),
        template: EmailTemplate::AccountActivation {
            first_name: "Bob".into(),
            link: format!("http://localhost:8080/account-activate?hash={}", "cd34".repeat(16)),
        },
    }
}

fn link_of(email: &OutgoingEmail) -> &str {
    email.template.links()[0]
}

#[tokio::test]
async fn delivers_reset_and_activation_e_mails_to_a_real_smtp_server() {
    let sink = Sink::start(None).await;
    let mailer = SmtpMailer::from_url(&sink.url(), settings()).expect("mailer");
    let reset = reset_email("0193a5b2-0001-7e4f-9a0b-1c2d3e4f5a6b", "jane.doe@broker.example");
    let activation = activation_email("0193a5b2-0002-7e4f-9a0b-1c2d3e4f5a6b", "bob@bank.example");
    mailer.send(&reset).await.expect("reset sent");
    mailer.send(&activation).await.expect("activation sent");

    let received = sink.messages(2).await;
    let cases = [
        (&reset, "jane.doe@broker.example", "Reset your Upstairs password"),
        (&activation, "bob@bank.example", "Activate your Upstairs account"),
    ];
    for (sent, to, subject) in cases {
        let got = received.get(&sent.message_id).expect("message with its Message-ID");
        assert_eq!(got.header("X-Sink-Mail-From"), Some("no-reply@upstairs.local"));
        assert_eq!(got.header("X-Sink-Rcpt-To"), Some(to));
        assert_eq!(got.header("To"), Some(to));
        assert_eq!(got.header("From"), Some("Upstairs <no-reply@upstairs.local>"));
        assert_eq!(got.header("Subject"), Some(subject));
        assert!(got.header("Date").is_some());
        let link = link_of(sent);
        assert!(got.raw.contains(&format!("\r\n{link}\r\n")), "link verbatim on its own line:\n{}", got.raw);
    }
}

#[tokio::test]
async fn authenticates_with_the_credentials_in_the_url() {
    let sink = Sink::start(Some("relay-user:pa@ss/w0rd")).await;
    let url = format!("smtp://relay-user:pa%40ss%2Fw0rd@127.0.0.1:{}?insecure_auth=true", sink.port);
    let mailer = SmtpMailer::from_url(&url, settings()).expect("mailer");
    let email = reset_email("0193a5b2-0003-7e4f-9a0b-1c2d3e4f5a6b", "jane.doe@broker.example");
    mailer.send(&email).await.expect("sent with AUTH");

    let received = sink.messages(1).await;
    let got = received.get(&email.message_id).expect("delivered");
    assert_eq!(got.header("X-Sink-Auth-Login"), Some("relay-user"));

    let wrong = format!("smtp://relay-user:wrong-s3cret@127.0.0.1:{}?insecure_auth=true", sink.port);
    let mailer = SmtpMailer::from_url(&wrong, settings()).expect("mailer");
    let err = mailer.send(&email).await.expect_err("wrong password refused");
    assert!(!err.contains("wrong-s3cret"), "password in error: {err}");
    assert!(err.contains("relay-user:***@127.0.0.1"), "{err}");
    assert!(err.contains("535"), "refused by the server, not timed out: {err}");
}

#[tokio::test]
async fn required_starttls_is_not_downgraded_to_plain_text() {
    // aiosmtpd here offers no STARTTLS: a relay that should encrypt but does not is an error.
    let sink = Sink::start(None).await;
    let url = format!("smtp://127.0.0.1:{}?tls=starttls", sink.port);
    let mailer = SmtpMailer::from_url(&url, settings()).expect("mailer");
    let email = reset_email("0193a5b2-0004-7e4f-9a0b-1c2d3e4f5a6b", "jane.doe@broker.example");
    assert!(mailer.send(&email).await.is_err());
    assert!(eml_files(sink.dir.path()).is_empty(), "nothing sent in clear text");
}

#[tokio::test]
async fn nothing_listening_is_a_quick_error_the_outbox_can_retry() {
    // A port that was free a moment ago: nothing listens there.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let url = format!("smtp://user:t0p-secret@127.0.0.1:{port}?insecure_auth=true");
    let mailer = SmtpMailer::from_url(&url, settings()).expect("mailer");
    let email = reset_email("0193a5b2-0005-7e4f-9a0b-1c2d3e4f5a6b", "jane.doe@broker.example");

    let started = Instant::now();
    let err = mailer.send(&email).await.expect_err("nothing listens");
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert!(!err.contains("t0p-secret"), "password in error: {err}");
    assert!(err.contains(&format!("127.0.0.1:{port}")), "names the relay: {err}");
}

#[tokio::test]
async fn a_relay_that_never_answers_fails_within_the_send_timeout() {
    // Accepts connections (the kernel's backlog) but never says 220.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let mailer = SmtpMailer::from_url(&format!("smtp://127.0.0.1:{port}"), settings())
        .expect("mailer")
        .with_send_timeout(Duration::from_millis(500));
    let email = reset_email("0193a5b2-0006-7e4f-9a0b-1c2d3e4f5a6b", "jane.doe@broker.example");

    let started = Instant::now();
    let err = mailer.send(&email).await.expect_err("silent relay");
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert!(err.contains("no answer within"), "{err}");
    drop(listener);
}
