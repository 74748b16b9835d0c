//! Command line: every flag can also come from the `UPSTAIRS_*` variable shown.

use chrono::{NaiveDate, NaiveTime};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

use crate::app::Settings;
use upstairs_domain::calendar::Calendar;

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
    /// Manage users from the shell (bootstrap the first admin).
    #[command(subcommand)]
    User(UserCommand),
    /// Print the OpenAPI document.
    Openapi,
}

#[derive(Args, Debug, Clone)]
pub struct DbArgs {
    /// sqlite://PATH (created if missing) or postgres://…
    #[arg(long, env = "UPSTAIRS_DATABASE_URL", default_value = "sqlite://data/upstairs.db", hide_env_values = true)]
    pub database_url: String,
}

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    #[arg(long, env = "UPSTAIRS_BIND", default_value = "127.0.0.1:8080")]
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
    #[arg(long, env = "UPSTAIRS_MAIL_DIR", default_value = "data/outbox")]
    pub mail_dir: PathBuf,
    #[arg(long, env = "UPSTAIRS_MAIL_FROM", default_value = "Upstairs <no-reply@upstairs.local>")]
    pub mail_from: String,
    /// The built web app.
    #[arg(long, env = "UPSTAIRS_WEB_DIR", default_value = "web/dist")]
    pub web_dir: PathBuf,
    /// Keep the venue open around the clock (always on in `demo`).
    #[arg(long, env = "UPSTAIRS_ALWAYS_OPEN", default_value_t = false)]
    pub always_open: bool,
    /// Browser tests only: the clock reads this file (an RFC 3339 instant stops it there,
    /// a number of seconds runs it ahead of the wall clock). Never set it in production.
    #[arg(long, env = "UPSTAIRS_CLOCK_FILE", hide = true)]
    pub clock_file: Option<std::path::PathBuf>,
    /// Opening time of the trading day, `HH:MM` in Europe/London.
    #[arg(long, env = "UPSTAIRS_OPEN_TIME", default_value = "09:00", value_parser = parse_time)]
    pub open_time: NaiveTime,
    /// Closing time of the trading day, `HH:MM` in Europe/London.
    #[arg(long, env = "UPSTAIRS_CLOSE_TIME", default_value = "17:00", value_parser = parse_time)]
    pub close_time: NaiveTime,
    /// Days the venue is closed, `YYYY-MM-DD`, comma-separated.
    #[arg(long, env = "UPSTAIRS_HOLIDAYS", value_delimiter = ',', value_parser = parse_date)]
    pub holidays: Vec<NaiveDate>,
    #[arg(long, env = "UPSTAIRS_SUPPORT_EMAIL", default_value = "support@upstairs.example")]
    pub support_email: String,
    #[arg(long, env = "UPSTAIRS_SUPPORT_PHONE", default_value = "+44 20 7946 0000")]
    pub support_phone: String,
}

impl ServeArgs {
    pub fn settings(self, demo: bool) -> anyhow::Result<Settings> {
        anyhow::ensure!(
            self.open_time < self.close_time,
            "the opening time {} must be before the closing time {}",
            self.open_time.format("%H:%M"),
            self.close_time.format("%H:%M")
        );
        let defaults = Calendar::default();
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
                parent_orders_from: defaults.parent_orders_from.min(self.open_time),
                ..defaults
            },
            support_email: self.support_email,
            support_phone: self.support_phone,
            demo,
            scheduler_poll: Duration::from_secs(1),
            clock_file: self.clock_file,
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
    /// 10–30 characters with upper and lower case, a digit and one of !@#$%^&+=-
    #[arg(long, env = "UPSTAIRS_USER_PASSWORD", hide_env_values = true)]
    pub password: String,
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

fn parse_time(s: &str) -> Result<NaiveTime, String> {
    NaiveTime::parse_from_str(s.trim(), "%H:%M").map_err(|_| format!("'{s}' is not a time like 09:00"))
}

fn parse_date(s: &str) -> Result<NaiveDate, String> {
    NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").map_err(|_| format!("'{s}' is not a date like 2026-12-25"))
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

    #[test]
    fn the_calendar_is_configuration() {
        let s = serve_args(&["--open-time", "08:00", "--close-time", "16:30", "--holidays", "2026-12-25,2026-12-28"])
            .unwrap()
            .settings(false)
            .unwrap();
        let t = |h, m| NaiveTime::from_hms_opt(h, m, 0).unwrap();
        let d = |m, day| NaiveDate::from_ymd_opt(2026, m, day).unwrap();
        assert_eq!((s.calendar.open, s.calendar.close), (t(8, 0), t(16, 30)));
        assert_eq!(s.calendar.holidays, vec![d(12, 25), d(12, 28)]);
        assert_eq!(s.calendar.parent_orders_from, t(5, 30));
        assert!(!s.calendar.always_open);

        let early = serve_args(&["--open-time", "05:00"]).unwrap().settings(false).unwrap();
        assert_eq!(early.calendar.parent_orders_from, t(5, 0), "parent orders are never later than the opening");
        assert!(serve_args(&[]).unwrap().settings(true).unwrap().calendar.always_open, "the demo is always open");
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
