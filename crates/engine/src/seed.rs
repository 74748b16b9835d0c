//! The demo data set of `upstairs demo`.

use serde_json::json;
use upstairs_domain::{AutoAccept, Role};

use crate::accounts::{BootstrapUser, audit};
use crate::error::EngineError;
use crate::model::Company;
use crate::ports::*;
use crate::{Engine, Store};

/// Password of every demo login.
pub const DEMO_PASSWORD: &str = "Upstairs-Demo-1";

/// A demo login as the README and the start-up banner list it.
pub struct DemoLogin {
    pub email: &'static str,
    pub company: &'static str,
    pub roles: &'static str,
}

/// (name, full name, company types)
const COMPANIES: &[(&str, &str, &[&str])] = &[
    ("Upstairs", "Upstairs Venue Operations Ltd", &[]),
    ("Northgate", "Northgate Clearing Brokers LLP", &["broker"]),
    ("Baltic", "Baltic Futures Brokers Ltd", &["broker"]),
    (
        "Meridian",
        "Meridian Liquidity Partners LLP",
        &["liquidity-provider"],
    ),
    (
        "Ostrava",
        "Ostrava Market Making a.s.",
        &["liquidity-provider"],
    ),
    ("Halyard", "Halyard Capital Management LLP", &[]),
    ("Kestrel", "Kestrel Trading Ltd", &[]),
];

/// (email, first, last, company, roles, auto_accept)
type DemoUser = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static [Role],
    Option<AutoAccept>,
);
const USERS: &[DemoUser] = &[
    (
        "admin@upstairs.demo",
        "Ada",
        "Admin",
        "Upstairs",
        &[Role::UpstairsAdmin],
        Some(AutoAccept::Instant),
    ),
    (
        "sales@upstairs.demo",
        "Sam",
        "Sales",
        "Upstairs",
        &[Role::UpstairsSales],
        Some(AutoAccept::Instant),
    ),
    (
        "trader1@halyard.demo",
        "Hannah",
        "Hale",
        "Halyard",
        &[Role::Trader],
        Some(AutoAccept::AcceptWithDelay),
    ),
    (
        "trader2@halyard.demo",
        "Hugo",
        "Hart",
        "Halyard",
        &[Role::Trader],
        None,
    ),
    (
        "admin@halyard.demo",
        "Helen",
        "Holt",
        "Halyard",
        &[Role::CompanyAdmin],
        Some(AutoAccept::Instant),
    ),
    (
        "trader1@kestrel.demo",
        "Kai",
        "Keller",
        "Kestrel",
        &[Role::Trader],
        Some(AutoAccept::Instant),
    ),
    (
        "trader2@kestrel.demo",
        "Kira",
        "Knox",
        "Kestrel",
        &[Role::Trader],
        Some(AutoAccept::RejectWithDelay),
    ),
    (
        "quotes@meridian.demo",
        "Mia",
        "Moreau",
        "Meridian",
        &[Role::Trader],
        Some(AutoAccept::Instant),
    ),
    (
        "sandbox@kestrel.demo",
        "Sid",
        "Sandoval",
        "Kestrel",
        &[Role::Sandbox],
        Some(AutoAccept::Instant),
    ),
];

pub fn demo_logins() -> Vec<DemoLogin> {
    USERS
        .iter()
        .map(|(email, _, _, company, roles, _)| DemoLogin {
            email,
            company,
            roles: roles.first().map_or("", |r| r.as_str()),
        })
        .collect()
}

impl<S: Store> Engine<S> {
    /// Loads the demo data set when the database has no company yet; returns whether it did.
    pub async fn seed_demo(&self) -> Result<bool, EngineError> {
        {
            let mut tx = self.store.read().await?;
            if tx.count_companies().await? > 0 {
                return Ok(false);
            }
        }
        let now = self.clock.now();
        {
            let mut tx = self.store.write().await?;
            for (name, full_name, types) in COMPANIES {
                let c = Company {
                    full_name: (*full_name).into(),
                    roles: types.iter().map(|t| (*t).to_owned()).collect(),
                    ..Company::named(name, now)
                };
                tx.insert_company(&c).await?;
                audit(
                    &mut tx,
                    now,
                    None,
                    "company",
                    Some(c.company_id.0),
                    "demo_seed",
                    json!({"name": c.name}),
                )
                .await?;
            }
            tx.commit().await?;
        }
        for (email, first, last, company, roles, auto_accept) in USERS {
            self.bootstrap_user(BootstrapUser {
                email: (*email).into(),
                password: DEMO_PASSWORD.into(),
                roles: roles.to_vec(),
                company_name: (*company).into(),
                first_name: (*first).into(),
                last_name: (*last).into(),
                auto_accept: *auto_accept,
            })
            .await?;
        }
        Ok(true)
    }
}
