use anyhow::{Context, bail};
use clap::Parser;
use std::sync::Arc;
use upstairs::app::{self, AsyncEngineFn};
use upstairs::cli::{Cli, Command, UserCommand, UserCreateArgs};
use upstairs_domain::Role;
use upstairs_engine::accounts::BootstrapUser;
use upstairs_engine::{Engine, EngineError, Store, seed};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    upstairs::telemetry::init();
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(args.settings(false)).await,
        Command::Demo(args) => serve(args.settings(true)).await,
        Command::Migrate(db) => {
            app::migrate(&db.database_url).await?;
            println!("Migrations are up to date.");
            Ok(())
        }
        Command::User(UserCommand::Create(args)) => create_user(args).await,
        Command::Openapi => {
            println!("{}", upstairs_http::openapi_json());
            Ok(())
        }
    }
}

async fn serve(settings: app::Settings) -> anyhow::Result<()> {
    let demo = settings.demo;
    let running = app::start(settings, Arc::new(upstairs_engine::SystemClock)).await?;
    if demo {
        println!("\nUpstairs demo is running at {}", running.public_url);
        println!("Every demo login uses the password {}\n", seed::DEMO_PASSWORD);
        for l in seed::demo_logins() {
            println!("  {:<26} {:<10} {}", l.email, l.company, l.roles);
        }
        println!();
    }
    running.wait().await
}

struct Bootstrap(BootstrapUser);

impl AsyncEngineFn<()> for Bootstrap {
    async fn call<S: Store>(self, engine: Engine<S>) -> anyhow::Result<()> {
        let email = self.0.email.clone();
        match engine.bootstrap_user(self.0).await {
            Ok(u) => {
                println!("Created {} ({}) in {}", u.user.email, u.user.user_id, u.company_name);
                Ok(())
            }
            Err(EngineError::Invalid { detail, .. } | EngineError::Conflict { detail, .. }) => {
                bail!("cannot create {email}: {detail}")
            }
            Err(e) => Err(e).context("create user"),
        }
    }
}

async fn create_user(args: UserCreateArgs) -> anyhow::Result<()> {
    let mut roles = Vec::new();
    for r in &args.roles {
        match Role::parse(r) {
            Some(role) => roles.push(role),
            None => bail!(
                "unknown role {r}: use one of {}",
                Role::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")
            ),
        }
    }
    let input = BootstrapUser {
        email: args.email,
        password: args.password,
        roles,
        company_name: args.company,
        first_name: args.first_name,
        last_name: args.last_name,
        auto_accept: None,
    };
    app::with_engine(&args.db.database_url, Bootstrap(input)).await
}
