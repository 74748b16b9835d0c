//! Command line: every flag can also come from the `UPSTAIRS_*` variable shown.

use chrono::NaiveTime;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

use crate::app::{Settings, defaults};
use upstairs_domain::calendar::{self, Calendar};
use upstairs_engine::defaults as engine_defaults;

#[derive(Parser, Debug)]
#[command(
    name = "upstairs",
    version,
    about = "Upstairs: a venue for block trades and RFQs in futures and calendar spreads"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve the web app, the API and the realtime socket.
    Serve(ServeArgs),
    /// Serve with the demo data set (loaded into an empty database), always open.
    Demo(ServeArgs),
    /// Run the database migrations and exit.
    Migrate(DbArgs),
    /// Copy a SQLite database while the venue runs (PostgreSQL: use pg_dump).
    Backup(BackupArgs),
    /// Manage users from the shell (bootstrap the first admin).
    #[command(subcommand)]
    User(UserCommand),
    /// Print the OpenAPI document.
    Openapi,
}

#[derive(Args, Debug, Clone)]
pub struct DbArgs {
    /// sqlite://PATH (created if missing) or postgres://…
    #[arg(long, env = "UPSTAIRS_DATABASE_URL", default_value = defaults::DATABASE_URL, hide_env_values = true)]
    pub database_url: String,
}

#[derive(Args, Debug, Clone)]
pub struct BackupArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// The copy to write: a new file.
    #[arg(long)]
    pub to: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    #[arg(long, env = "UPSTAIRS_BIND", default_value = defaults::BIND)]
    pub bind: String,
    #[command(flatten)]
    pub db: DbArgs,
    /// Base of links in e-mails [default: http://localhost:<port>]
    #[arg(long, env = "UPSTAIRS_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// smtp://[user:pass@]host:port (or smtps://); unset writes .eml files instead.
    #[arg(long, env = "UPSTAIRS_SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<String>,
    /// Folder for .eml files when no SMTP URL is set.
    #[arg(long, env = "UPSTAIRS_MAIL_DIR", default_value = defaults::MAIL_DIR)]
    pub mail_dir: PathBuf,
    #[arg(long, env = "UPSTAIRS_MAIL_FROM", default_value = engine_defaults::MAIL_FROM)]
    pub mail_from: String,
    /// The built web app.
    #[arg(long, env = "UPSTAIRS_WEB_DIR", default_value = defaults::WEB_DIR)]
    pub web_dir: PathBuf,
    /// Keep the venue open around the clock (always on in `demo`).
    #[arg(long, env = "UPSTAIRS_ALWAYS_OPEN", default_value_t = false)]
    pub always_open: bool,
    /// Browser tests only: the clock reads this file (an RFC 3339 instant stops it there,
    /// a number of seconds runs it ahead of the wall clock). Never set it in production.
    #[arg(long, env = "UPSTAIRS_CLOCK_FILE", hide = true)]
    pub clock_file: Option<std::path::PathBuf>,
    /// Opening time of the trading day, `HH:MM` in Europe/London.
    #[arg(long, env = "UPSTAIRS_OPEN_TIME", default_value = calendar::DEFAULT_OPEN, value_parser = parse_time)]
    pub open_time: NaiveTime,
    /// Closing time of the trading day, `HH:MM` in Europe/London.
    #[arg(long, env = "UPSTAIRS_CLOSE_TIME", default_value = calendar::DEFAULT_CLOSE, value_parser = parse_time)]
    pub close_time: NaiveTime,
    /// Days the venue is closed, `YYYY-MM-DD` or `YYYY-MM-DD=Name` (the screens say the
    /// name), comma-separated.
    #[arg(long, env = "UPSTAIRS_HOLIDAYS", value_delimiter = ',', value_parser = calendar::Holiday::parse)]
    pub holidays: Vec<calendar::Holiday>,
    #[arg(long, env = "UPSTAIRS_SUPPORT_EMAIL", default_value = engine_defaults::SUPPORT_EMAIL)]
    pub support_email: String,
    #[arg(long, env = "UPSTAIRS_SUPPORT_PHONE", default_value = engine_defaults::SUPPORT_PHONE)]
    pub support_phone: String,
    /// `demo` only: serve the demo on an address other hosts can reach. Its logins and
    /// their password are in the README, so it listens on loopback unless told this.
    #[arg(long, env = "UPSTAIRS_DEMO_PUBLIC", default_value_t = false)]
    pub public: bool,
    /// `demo` only: every this many seconds one of the demo's trading robots rests or
    /// takes liquidity (0: they do not trade).
    #[arg(long, env = "UPSTAIRS_DEMO_ROBOTS_EVERY", default_value_t = 10)]
    pub demo_robots_every: u64,
    /// Each user's order, match-request, RFQ and quote writes per second, per kind
    /// (0: no throttle); over it the answer is 429 with Retry-After.
    #[arg(long, env = "UPSTAIRS_WRITES_PER_SECOND", default_value_t = upstairs_engine::ratelimit::DEFAULT_WRITES_PER_SECOND)]
    pub writes_per_second: u32,
    /// How many of those writes a user may send at once before the rate applies.
    #[arg(long, env = "UPSTAIRS_WRITE_BURST", default_value_t = upstairs_engine::ratelimit::DEFAULT_WRITE_BURST)]
    pub write_burst: u32,
    /// `/api` requests this node handles at once; one more waits up to 250 ms for a
    /// place, then answers 429 with Retry-After (sign-in has its own queue).
    #[arg(long, env = "UPSTAIRS_MAX_IN_FLIGHT", default_value_t = upstairs_http::MAX_IN_FLIGHT)]
    pub max_in_flight: usize,
    /// Reverse proxies (addresses or CIDR blocks, comma-separated) whose X-Forwarded-For
    /// names the client for sign-in limits and the audit trail; none by default.
    #[arg(long, env = "UPSTAIRS_TRUSTED_PROXIES", value_delimiter = ',', value_parser = parse_proxy)]
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Where the FIX gateway listens (`host:port`); unset: no FIX.
    #[arg(long, env = "UPSTAIRS_FIX_BIND")]
    pub fix_bind: Option<String>,
    /// The venue's FIX CompID: the TargetCompID of every Logon.
    #[arg(long, env = "UPSTAIRS_FIX_COMP_ID", default_value = defaults::FIX_COMP_ID)]
    pub fix_comp_id: String,
    /// A PEM certificate chain: TLS on the FIX port (with --fix-tls-key).
    #[arg(long, env = "UPSTAIRS_FIX_TLS_CERT", requires = "fix_tls_key")]
    pub fix_tls_cert: Option<PathBuf>,
    /// The certificate's PEM private key.
    #[arg(long, env = "UPSTAIRS_FIX_TLS_KEY", requires = "fix_tls_cert")]
    pub fix_tls_key: Option<PathBuf>,
    /// The market-data provider's FIX acceptor (`host:port`): the venue logs on to it and
    /// moves each band from its prices (ADR 0049); unset: bands move only by hand.
    #[arg(long, env = "UPSTAIRS_MD_CONNECT")]
    pub md_connect: Option<String>,
    /// The venue's CompID on the market-data session.
    #[arg(long, env = "UPSTAIRS_MD_SENDER_COMP_ID", default_value = "UPSTAIRS-MD")]
    pub md_sender_comp_id: String,
    /// The provider's CompID.
    #[arg(long, env = "UPSTAIRS_MD_TARGET_COMP_ID", default_value = "PROVIDER")]
    pub md_target_comp_id: String,
    /// The Password (554) of the market-data Logon.
    #[arg(long, env = "UPSTAIRS_MD_PASSWORD", hide_env_values = true)]
    pub md_password: Option<String>,
    /// TLS to the market-data provider: a PEM file of the authorities that sign its
    /// certificate (unset: no TLS).
    #[arg(long, env = "UPSTAIRS_MD_TLS_CA")]
    pub md_tls_ca: Option<PathBuf>,
    /// The name the provider's certificate must carry (default: the host of --md-connect).
    #[arg(long, env = "UPSTAIRS_MD_TLS_SERVER_NAME", requires = "md_tls_ca")]
    pub md_tls_server_name: Option<String>,
    /// The largest order of any kind (parent order, child order, take, RFQ, quote), in
    /// lots: at most 10^12, the ceiling the database keeps (ADR 0027).
    #[arg(long, env = "UPSTAIRS_MAX_ORDER_QUANTITY", default_value_t = upstairs_domain::quantity::DEFAULT_MAX_ORDER_QUANTITY,
          value_parser = clap::value_parser!(i64).range(1..=upstairs_domain::quantity::QUANTITY_CEILING))]
    pub max_order_quantity: i64,
    /// Seconds a trader's connections (web sessions, or their firm's FIX session) may all
    /// be gone before their working orders are pulled, when they chose it (ADR 0043).
    #[arg(long, env = "UPSTAIRS_DISCONNECT_GRACE", default_value_t = upstairs_engine::defaults::DISCONNECT_GRACE_SECS,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub disconnect_grace: u64,
    /// Where `/metrics` is served (`host:port`), apart from the app's port (which answers
    /// it 404); `off` (or empty): nowhere. Keep it on loopback or a private network.
    #[arg(long, env = "UPSTAIRS_METRICS_BIND", default_value = defaults::METRICS_BIND)]
    pub metrics_bind: String,
}

/// An address or a CIDR block.
fn parse_proxy(s: &str) -> Result<ipnet::IpNet, String> {
    let s = s.trim();
    s.parse::<ipnet::IpNet>()
        .or_else(|_| s.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("{s} is not an IP address or CIDR block (e.g. 10.0.0.0/8)"))
}

/// Whether `bind` (`host:port`) listens on this host only.
fn loopback_only(bind: &str) -> bool {
    match bind.parse::<std::net::SocketAddr>() {
        Ok(addr) => addr.ip().is_loopback(),
        Err(_) => bind.rsplit_once(':').is_some_and(|(host, _)| host.eq_ignore_ascii_case("localhost")),
    }
}

impl ServeArgs {
    pub fn settings(self, demo: bool) -> anyhow::Result<Settings> {
        anyhow::ensure!(
            self.open_time < self.close_time,
            "the opening time {} must be before the closing time {}",
            self.open_time.format("%H:%M"),
            self.close_time.format("%H:%M")
        );
        let metrics_bind = Some(self.metrics_bind.trim())
            .filter(|b| !b.is_empty() && !b.eq_ignore_ascii_case("off"))
            .map(str::to_owned);
        for bind in std::iter::once(&self.bind).chain(&self.fix_bind).chain(&metrics_bind) {
            anyhow::ensure!(
                !demo || self.public || loopback_only(bind),
                "upstairs demo listens on loopback only (127.0.0.1, ::1 or localhost): its logins and \
                 password are published in the README. Pass --public to serve it on {bind} anyway",
            );
        }
        let fix = self.fix_bind.filter(|b| !b.trim().is_empty()).map(|bind| upstairs_fix::FixSettings {
            bind,
            comp_id: self.fix_comp_id,
            tls: self.fix_tls_cert.zip(self.fix_tls_key),
            outbox_poll: upstairs_fix::OUTBOX_POLL,
        });
        let market_data = self.md_connect.filter(|c| !c.trim().is_empty()).map(|connect| {
            let mut m = upstairs_fix::market_data::MarketDataSettings::new(
                connect,
                self.md_sender_comp_id,
                self.md_target_comp_id,
            );
            m.password = self.md_password.filter(|p| !p.is_empty());
            m.tls = self.md_tls_ca.map(|ca| upstairs_fix::market_data::MarketDataTls {
                ca,
                server_name: self.md_tls_server_name.filter(|n| !n.trim().is_empty()),
            });
            m
        });
        let defaults = Settings::default();
        Ok(Settings {
            bind: self.bind,
            database_url: self.db.database_url,
            public_url: self.public_url.filter(|u| !u.trim().is_empty()),
            smtp_url: self.smtp_url.filter(|u| !u.trim().is_empty()),
            mail_dir: self.mail_dir,
            mail_from: self.mail_from,
            web_dir: Some(self.web_dir),
            calendar: Calendar {
                open: self.open_time,
                close: self.close_time,
                holidays: self.holidays,
                always_open: self.always_open || demo,
                // Parent orders open at 05:30, or with the venue when it opens earlier.
                parent_orders_from: defaults.calendar.parent_orders_from.min(self.open_time),
                ..defaults.calendar
            },
            support_email: self.support_email,
            support_phone: self.support_phone,
            demo,
            demo_robots_every: Some(Duration::from_secs(self.demo_robots_every)).filter(|d| demo && !d.is_zero()),
            scheduler_poll: defaults.scheduler_poll,
            clock_file: self.clock_file,
            rate_limits: upstairs_engine::ratelimit::Limits {
                writes_per_second: self.writes_per_second,
                write_burst: self.write_burst,
                ..defaults.rate_limits
            },
            trusted_proxies: self.trusted_proxies,
            server_limits: upstairs_http::server::ServerLimits {
                max_in_flight: self.max_in_flight,
                ..defaults.server_limits
            },
            fix,
            market_data,
            max_order_quantity: self.max_order_quantity,
            disconnect_grace: Duration::from_secs(self.disconnect_grace),
            metrics_bind,
        })
    }
}

#[derive(Subcommand, Debug)]
pub enum UserCommand {
    /// Create a verified user with a password (and its company when none has that name).
    Create(UserCreateArgs),
}

#[derive(Args, Debug)]
pub struct UserCreateArgs {
    #[command(flatten)]
    pub db: DbArgs,
    #[arg(long)]
    pub email: String,
    /// 10–30 characters with upper and lower case, a digit and one of !@#$%^&+=-. On the
    /// command line it shows in `ps` and the shell's history: prefer --password-file.
    #[arg(
        long,
        env = "UPSTAIRS_USER_PASSWORD",
        hide_env_values = true,
        conflicts_with = "password_file",
        required_unless_present = "password_file"
    )]
    pub password: Option<String>,
    /// Read the password from this file (its first line), or from standard input with `-`.
    #[arg(long)]
    pub password_file: Option<PathBuf>,
    /// trader, upstairs-admin, company-admin, upstairs-sales or sandbox (repeatable).
    #[arg(long = "role", required = true)]
    pub roles: Vec<String>,
    #[arg(long, default_value = "Upstairs")]
    pub company: String,
    #[arg(long, default_value = "Venue")]
    pub first_name: String,
    #[arg(long, default_value = "Admin")]
    pub last_name: String,
}

impl UserCreateArgs {
    /// The password from the flag, the file, or standard input (`-`): its first line,
    /// without the line ending.
    pub fn password(&self, stdin: impl std::io::Read) -> anyhow::Result<String> {
        use std::io::BufRead;
        let text = match (&self.password, &self.password_file) {
            (Some(p), _) => return Ok(p.clone()),
            (None, Some(path)) if path.as_os_str() == "-" => {
                let mut line = String::new();
                std::io::BufReader::new(stdin).read_line(&mut line)?;
                line
            }
            (None, Some(path)) => std::fs::read_to_string(path)
                .map_err(|e| anyhow::anyhow!("cannot read the password file {}: {e}", path.display()))?,
            (None, None) => anyhow::bail!("give --password or --password-file"),
        };
        let first = text.lines().next().unwrap_or_default().to_owned();
        anyhow::ensure!(!first.is_empty(), "the password file's first line is empty");
        Ok(first)
    }
}

fn parse_time(s: &str) -> Result<NaiveTime, String> {
    NaiveTime::parse_from_str(s.trim(), "%H:%M").map_err(|_| format!("'{s}' is not a time like 09:00"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serve_args(args: &[&str]) -> Result<ServeArgs, clap::Error> {
        let cli = Cli::try_parse_from([&["upstairs", "serve"], args].concat())?;
        match cli.command {
            Command::Serve(a) => Ok(a),
            _ => unreachable!("parsed serve"),
        }
    }

    /// The defaults are said once: a bare `upstairs serve` is `Settings::default()`, which
    /// takes the engine's and the mail's from the same constants.
    #[test]
    fn a_bare_serve_has_the_default_settings() {
        let from_cli = serve_args(&[]).unwrap().settings(false).unwrap();
        assert_eq!(format!("{from_cli:?}"), format!("{:?}", Settings::default()));
        let engine = upstairs_engine::EngineConfig::default();
        let mail = upstairs_mail::MailSettings::default();
        assert_eq!(
            (&from_cli.support_email, &from_cli.support_phone, &from_cli.mail_from),
            (&engine.support_email, &engine.support_phone, &mail.from)
        );
        assert_eq!((&mail.support_email, &mail.product_name), (&engine.support_email, &engine.product_name));
        assert_eq!(from_cli.calendar.open, Calendar::default().open);
        assert_eq!(from_cli.max_order_quantity, engine.max_order_quantity);
        assert_eq!(from_cli.disconnect_grace, engine.disconnect_grace);
    }

    #[test]
    fn the_calendar_is_configuration() {
        let s = serve_args(&[
            "--open-time",
            "08:00",
            "--close-time",
            "16:30",
            "--holidays",
            "2026-12-25=Christmas Day,2026-12-28",
        ])
        .unwrap()
        .settings(false)
        .unwrap();
        let t = |h, m| NaiveTime::from_hms_opt(h, m, 0).unwrap();
        let d = |m, day| chrono::NaiveDate::from_ymd_opt(2026, m, day).unwrap();
        assert_eq!((s.calendar.open, s.calendar.close), (t(8, 0), t(16, 30)));
        let holidays: Vec<_> = s.calendar.holidays.iter().map(|h| (h.date, h.name.as_deref())).collect();
        assert_eq!(holidays, vec![(d(12, 25), Some("Christmas Day")), (d(12, 28), None)]);
        assert_eq!(s.calendar.parent_orders_from, t(5, 30));
        assert!(!s.calendar.always_open);

        let early = serve_args(&["--open-time", "05:00"]).unwrap().settings(false).unwrap();
        assert_eq!(early.calendar.parent_orders_from, t(5, 0), "parent orders are never later than the opening");
        assert!(serve_args(&[]).unwrap().settings(true).unwrap().calendar.always_open, "the demo is always open");
    }

    #[test]
    fn the_demo_listens_on_loopback_unless_told_public() {
        for bind in ["127.0.0.1:8080", "[::1]:8080", "localhost:8080", "127.0.0.2:9000"] {
            serve_args(&["--bind", bind]).unwrap().settings(true).unwrap_or_else(|e| panic!("{bind}: {e}"));
        }
        for bind in ["0.0.0.0:8080", "[::]:8080", "192.0.2.10:8080", "venue.example:8080"] {
            let err = serve_args(&["--bind", bind]).unwrap().settings(true).unwrap_err().to_string();
            assert!(err.contains("Pass --public"), "{bind}: {err}");
            serve_args(&["--bind", bind, "--public"]).unwrap().settings(true).unwrap();
            serve_args(&["--bind", bind]).unwrap().settings(false).unwrap();
        }
    }

    #[test]
    fn metrics_listen_apart_on_loopback_unless_turned_off() {
        let bind = |args: &[&str]| serve_args(args).unwrap().settings(false).unwrap().metrics_bind;
        assert_eq!(bind(&[]).as_deref(), Some("127.0.0.1:9464"));
        assert_eq!(bind(&["--metrics-bind", "10.0.0.11:9464"]).as_deref(), Some("10.0.0.11:9464"));
        assert_eq!(bind(&["--metrics-bind", "off"]), None);
        assert_eq!(bind(&["--metrics-bind", ""]), None);
        let err = serve_args(&["--metrics-bind", "0.0.0.0:9464"]).unwrap().settings(true).unwrap_err();
        assert!(err.to_string().contains("Pass --public"), "the demo's metrics stay on loopback too: {err}");
    }

    fn user_create(args: &[&str]) -> Result<UserCreateArgs, clap::Error> {
        let base = ["upstairs", "user", "create", "--email", "ops@example.com", "--role", "upstairs-admin"];
        match Cli::try_parse_from([&base[..], args].concat())?.command {
            Command::User(UserCommand::Create(a)) => Ok(a),
            _ => unreachable!("parsed user create"),
        }
    }

    #[test]
    fn a_password_comes_from_the_flag_a_file_or_standard_input() {
        let none: &[u8] = b"";
        assert_eq!(user_create(&["--password", "Flag-Pass-2026"]).unwrap().password(none).unwrap(), "Flag-Pass-2026");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pw");
        std::fs::write(&file, "File-Pass-2026\nignored\n").unwrap();
        let a = user_create(&["--password-file", file.to_str().unwrap()]).unwrap();
        assert_eq!(a.password(none).unwrap(), "File-Pass-2026");
        let a = user_create(&["--password-file", "-"]).unwrap();
        assert_eq!(a.password(&b"Stdin-Pass-2026\r\n"[..]).unwrap(), "Stdin-Pass-2026");
        assert!(a.password(none).unwrap_err().to_string().contains("empty"));
        let missing = user_create(&["--password-file", "/nonexistent/pw"]).unwrap().password(none).unwrap_err();
        assert!(missing.to_string().contains("cannot read the password file"), "{missing}");
        assert!(user_create(&[]).is_err(), "one of the two is required");
        assert!(user_create(&["--password", "A-Pass-2026", "--password-file", "-"]).is_err(), "not both");
    }

    #[test]
    fn bad_calendars_are_refused_with_a_reason() {
        let err = serve_args(&["--holidays", "25/12/2026"]).unwrap_err().to_string();
        assert!(err.contains("is not a date like 2026-12-25"), "{err}");
        let err = serve_args(&["--open-time", "9am"]).unwrap_err().to_string();
        assert!(err.contains("is not a time like 09:00"), "{err}");
        let err = serve_args(&["--open-time", "17:00", "--close-time", "09:00"]).unwrap().settings(false).unwrap_err();
        assert_eq!(err.to_string(), "the opening time 17:00 must be before the closing time 09:00");
    }
}
