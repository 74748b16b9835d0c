use clap::Parser;
use std::sync::Arc;
use upstairs::app;
use upstairs::cli::{Cli, Command, UserCommand};
use upstairs::demo as seed;

/// mimalloc, not glibc's malloc: the server allocates per request on every worker thread
/// (ADR 0053).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    upstairs::telemetry::init();
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(args.settings(false)?).await,
        Command::Demo(args) => serve(args.settings(true)?).await,
        Command::Migrate(db) => {
            app::migrate(&db.database_url).await?;
            println!("Migrations are up to date.");
            Ok(())
        }
        Command::Backup(b) => {
            app::backup(&b.db.database_url, &b.to).await?;
            println!("Wrote {}", b.to.display());
            Ok(())
        }
        Command::User(UserCommand::Create(a)) => {
            let roles: Vec<&str> = a.roles.iter().map(String::as_str).collect();
            let u = app::bootstrap_user_named(
                &a.db.database_url,
                &a.email,
                &a.password(std::io::stdin())?,
                &roles,
                &a.company,
                &a.first_name,
                &a.last_name,
            )
            .await?;
            println!("Created {} ({}) in {}", u.user.email, u.user.user_id, u.company_name);
            Ok(())
        }
        Command::Openapi => {
            println!("{}", upstairs_http::openapi_json::<upstairs_store::SqliteStore>());
            Ok(())
        }
    }
}

async fn serve(settings: app::Settings) -> anyhow::Result<()> {
    let demo = settings.demo;
    let clock: Arc<dyn upstairs_engine::Clock> = match &settings.clock_file {
        Some(path) => {
            tracing::warn!(path = %path.display(), "the clock reads this file (browser tests only)");
            Arc::new(upstairs_engine::clock::FileClock::new(path))
        }
        None => Arc::new(upstairs_engine::SystemClock),
    };
    let running = app::start(settings, clock).await?;
    if demo {
        println!("\nUpstairs demo is running at {}", running.public_url);
        println!("Every demo login uses the password {}\n", seed::DEMO_PASSWORD);
        for l in seed::demo_logins() {
            println!("  {:<26} {:<10} {}", l.email, l.company, l.roles);
        }
        if let Some(fix) = &running.fix {
            println!(
                "\nFIX 4.4 on {} (TargetCompID {}): SenderCompIDs {}, Password (554) {}",
                fix.local_addr(),
                running.fix_comp_id,
                seed::DEMO_FIX_COMP_IDS.join(", "),
                seed::DEMO_FIX_PASSWORD
            );
        }
        println!();
    }
    running.wait().await
}
