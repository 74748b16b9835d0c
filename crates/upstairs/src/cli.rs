//! Command line: every flag can also come from the `UPSTAIRS_*` variable shown.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

use crate::app::Settings;

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
    #[arg(long, env = "UPSTAIRS_SUPPORT_EMAIL", default_value = "support@upstairs.example")]
    pub support_email: String,
    #[arg(long, env = "UPSTAIRS_SUPPORT_PHONE", default_value = "+44 20 7946 0000")]
    pub support_phone: String,
}

impl ServeArgs {
    pub fn settings(self, demo: bool) -> Settings {
        Settings {
            bind: self.bind,
            database_url: self.db.database_url,
            public_url: self.public_url.filter(|u| !u.trim().is_empty()),
            smtp_url: self.smtp_url.filter(|u| !u.trim().is_empty()),
            mail_dir: self.mail_dir,
            mail_from: self.mail_from,
            web_dir: Some(self.web_dir),
            always_open: self.always_open || demo,
            support_email: self.support_email,
            support_phone: self.support_phone,
            demo,
            scheduler_poll: Duration::from_secs(1),
        }
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
