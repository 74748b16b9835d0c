//! The demo of `upstairs demo`, outside the production engine: its data set (loaded into
//! an empty database), its market-data feed (the band simulator) and its quoting robots.
//! Everything here goes through the engine's public use cases and its store.

use rust_decimal::Decimal;
use serde_json::json;
use std::collections::HashMap;
use std::str::FromStr;
use upstairs_domain::price::{add_ticks, ticks_between};
use upstairs_domain::{AutoAccept, InstrumentId, Role};

use upstairs_engine::context::audit;
use upstairs_engine::error::EngineError;
use upstairs_engine::model::{Company, CompanyRef, Instrument, InstrumentFilter};
use upstairs_engine::ports::*;
use upstairs_engine::users::BootstrapUser;
use upstairs_engine::{Engine, Store};

/// Password of every demo login.
pub const DEMO_PASSWORD: &str = "Upstairs-Demo-1";

/// The demo companies' FIX CompIDs (two brokers, one trading firm).
pub const DEMO_FIX_COMP_IDS: [&str; 3] = ["NORTHGATE", "BALTIC", "HALYARD"];

/// The FIX password (554) of every demo company with a FIX CompID.
pub const DEMO_FIX_PASSWORD: &str = "Upstairs-FIX-1";

/// The demo trader an execution system may send orders for by FIX, and their EMS id.
pub const DEMO_EMS_TRADER: (&str, &str) = ("trader1@halyard.demo", "HHALE");

/// A demo login as the README and the start-up banner list it.
pub struct DemoLogin {
    pub email: &'static str,
    pub company: &'static str,
    pub roles: &'static str,
}

struct DemoCompany {
    name: &'static str,
    full_name: &'static str,
    types: &'static [&'static str],
    confirmations: Option<&'static str>,
    /// The first is the default broker.
    brokers: &'static [&'static str],
    /// Its FIX SenderCompID.
    fix: Option<&'static str>,
}

#[rustfmt::skip]
const COMPANIES: &[DemoCompany] = &[
    DemoCompany { name: "Northgate", full_name: "Northgate Clearing Brokers LLP", types: &["broker"], confirmations: Some("confirmations@northgate.demo"), brokers: &[], fix: Some("NORTHGATE") },
    DemoCompany { name: "Baltic", full_name: "Baltic Futures Brokers Ltd", types: &["broker"], confirmations: Some("blocks@baltic.demo"), brokers: &[], fix: Some("BALTIC") },
    DemoCompany { name: "Upstairs", full_name: "Upstairs Venue Operations Ltd", types: &[], confirmations: None, brokers: &["Northgate"], fix: None },
    DemoCompany { name: "Meridian", full_name: "Meridian Liquidity Partners LLP", types: &["liquidity-provider"], confirmations: None, brokers: &["Northgate", "Baltic"], fix: None },
    DemoCompany { name: "Ostrava", full_name: "Ostrava Market Making a.s.", types: &["liquidity-provider"], confirmations: None, brokers: &["Baltic"], fix: None },
    DemoCompany { name: "Halyard", full_name: "Halyard Capital Management LLP", types: &[], confirmations: None, brokers: &["Northgate", "Baltic"], fix: Some("HALYARD") },
    DemoCompany { name: "Kestrel", full_name: "Kestrel Trading Ltd", types: &[], confirmations: None, brokers: &["Baltic", "Northgate"], fix: None },
];

struct DemoInstrument {
    name: &'static str,
    term: &'static str,
    tick: &'static str,
    min_block: i64,
    bid: &'static str,
    offer: &'static str,
    exchange_id: &'static str,
    exchange: &'static str,
    mic: &'static str,
    currency: &'static str,
    bbg: &'static str,
    sandbox: bool,
    reversed: bool,
}

#[rustfmt::skip]
const INSTRUMENTS: &[DemoInstrument] = &[
    DemoInstrument { name: "Euribor 3M Dec26-Mar27", term: "Dec26-Mar27", tick: "0.005", min_block: 500, bid: "-0.040", offer: "-0.015", exchange_id: "I", exchange: "ICE Futures Europe", mic: "IFEU", currency: "EUR", bbg: "ERZ6ERH7 Comdty", sandbox: false, reversed: false },
    DemoInstrument { name: "SONIA 3M Mar27-Jun27", term: "Mar27-Jun27", tick: "0.005", min_block: 500, bid: "0.050", offer: "0.075", exchange_id: "SO3", exchange: "ICE Futures Europe", mic: "IFEU", currency: "GBP", bbg: "SFIH7SFIM7 Comdty", sandbox: false, reversed: false },
    DemoInstrument { name: "Euro-Bund Dec26-Mar27", term: "Dec26-Mar27", tick: "0.01", min_block: 1000, bid: "0.42", offer: "0.52", exchange_id: "FGBL", exchange: "Eurex", mic: "XEUR", currency: "EUR", bbg: "RXZ6RXH7 Comdty", sandbox: false, reversed: true },
    DemoInstrument { name: "Brent Crude Dec26-Jun27", term: "Dec26-Jun27", tick: "0.01", min_block: 100, bid: "1.18", offer: "1.28", exchange_id: "B", exchange: "ICE Futures Europe", mic: "IFEU", currency: "USD", bbg: "COZ6COM7 Comdty", sandbox: false, reversed: false },
    DemoInstrument { name: "Euro Stoxx 50 Dec26", term: "Dec26", tick: "1", min_block: 250, bid: "5512", offer: "5522", exchange_id: "FESX", exchange: "Eurex", mic: "XEUR", currency: "EUR", bbg: "VGZ6 Index", sandbox: false, reversed: false },
    DemoInstrument { name: "Euribor 3M Jun27-Sep27 Sandbox", term: "Jun27-Sep27", tick: "0.005", min_block: 500, bid: "-0.010", offer: "0.015", exchange_id: "I", exchange: "ICE Futures Europe", mic: "IFEU", currency: "EUR", bbg: "ERM7ERU7 Comdty", sandbox: true, reversed: false },
];

struct DemoUser {
    email: &'static str,
    first: &'static str,
    last: &'static str,
    company: &'static str,
    roles: &'static [Role],
    auto_accept: Option<AutoAccept>,
}

#[rustfmt::skip]
const USERS: &[DemoUser] = &[
    DemoUser { email: "admin@upstairs.demo", first: "Ada", last: "Admin", company: "Upstairs", roles: &[Role::UpstairsAdmin], auto_accept: Some(AutoAccept::Instant) },
    DemoUser { email: "sales@upstairs.demo", first: "Sam", last: "Sales", company: "Upstairs", roles: &[Role::UpstairsSales], auto_accept: Some(AutoAccept::Instant) },
    DemoUser { email: "trader1@halyard.demo", first: "Hannah", last: "Hale", company: "Halyard", roles: &[Role::Trader], auto_accept: Some(AutoAccept::AcceptWithDelay) },
    DemoUser { email: "trader2@halyard.demo", first: "Hugo", last: "Hart", company: "Halyard", roles: &[Role::Trader], auto_accept: None },
    DemoUser { email: "admin@halyard.demo", first: "Helen", last: "Holt", company: "Halyard", roles: &[Role::CompanyAdmin], auto_accept: Some(AutoAccept::Instant) },
    DemoUser { email: "trader1@kestrel.demo", first: "Kai", last: "Keller", company: "Kestrel", roles: &[Role::Trader], auto_accept: Some(AutoAccept::Instant) },
    DemoUser { email: "trader2@kestrel.demo", first: "Kira", last: "Knox", company: "Kestrel", roles: &[Role::Trader], auto_accept: Some(AutoAccept::RejectWithDelay) },
    DemoUser { email: "quotes@meridian.demo", first: "Mia", last: "Moreau", company: "Meridian", roles: &[Role::Trader], auto_accept: Some(AutoAccept::Instant) },
    DemoUser { email: "quotes@ostrava.demo", first: "Otto", last: "Novak", company: "Ostrava", roles: &[Role::Trader], auto_accept: Some(AutoAccept::Instant) },
    DemoUser { email: "sandbox@kestrel.demo", first: "Sid", last: "Sandoval", company: "Kestrel", roles: &[Role::Sandbox], auto_accept: Some(AutoAccept::Instant) },
];

pub fn demo_logins() -> Vec<DemoLogin> {
    USERS
        .iter()
        .map(|u| DemoLogin { email: u.email, company: u.company, roles: u.roles.first().map_or("", |r| r.as_str()) })
        .collect()
}

fn dec(s: &str) -> Result<Decimal, EngineError> {
    Decimal::from_str(s).map_err(|e| EngineError::Internal(format!("demo decimal {s}: {e}")))
}

/// Loads the demo data set when the database has no company yet; returns whether it did.
pub async fn seed_demo<S: Store>(engine: &Engine<S>) -> Result<bool, EngineError> {
    {
        let mut tx = engine.store().read().await?;
        if tx.count_companies().await? > 0 {
            return Ok(false);
        }
    }
    let now = engine.clock().now();
    let mut tx = engine.store().write().await?;
    let mut made: Vec<Company> = Vec::new();
    for d in COMPANIES {
        let brokers: Vec<CompanyRef> = d
            .brokers
            .iter()
            .filter_map(|b| made.iter().find(|m| m.name == *b))
            .map(|b| CompanyRef { company_id: b.company_id, name: b.name.clone() })
            .collect();
        let c = Company {
            full_name: d.full_name.into(),
            roles: d.types.iter().map(|t| (*t).to_owned()).collect(),
            trade_confirmation_email: d.confirmations.map(str::to_owned),
            trade_confirmation_via_email_enabled: d.confirmations.is_some(),
            default_broker: brokers.first().cloned(),
            brokers,
            fix_comp_id: d.fix.map(str::to_owned),
            fix_password_hash: match d.fix {
                Some(_) => Some(engine.hash_password(DEMO_FIX_PASSWORD.into()).await?),
                None => None,
            },
            ..Company::named(d.name, now)
        };
        tx.insert_company(&c).await?;
        audit(&mut tx, now, None, "company", Some(c.company_id.0), "demo_seed", json!({"name": c.name})).await?;
        made.push(c);
    }
    for d in INSTRUMENTS {
        let i = Instrument {
            instrument_id: InstrumentId::new(),
            name: d.name.into(),
            term: d.term.into(),
            description: format!("{} block", d.name),
            min_quantity: d.min_block,
            tick_size: dec(d.tick)?,
            exchange_tick_size: Some(dec(d.tick)?),
            exchange_id: d.exchange_id.into(),
            exchange: d.exchange.into(),
            exchange_iso_code: d.mic.into(),
            exchange_instrument_id: None,
            bbg_code: Some(d.bbg.into()),
            country: if d.mic == "XEUR" { "DE".into() } else { "GB".into() },
            currency: d.currency.into(),
            min_tick_price: dec(d.bid)?,
            max_tick_price: dec(d.offer)?,
            active: true,
            is_sandbox: d.sandbox,
            reversed_spread: d.reversed,
            created_at: now,
            updated_at: now,
        };
        tx.insert_instrument(&i).await?;
        audit(&mut tx, now, None, "instrument", Some(i.instrument_id.0), "demo_seed", json!({"name": i.name})).await?;
    }
    tx.commit().await?;
    let mut users = Vec::new();
    for u in USERS {
        users.push(
            engine
                .users
                .bootstrap_user(BootstrapUser {
                    email: u.email.into(),
                    password: DEMO_PASSWORD.into(),
                    roles: u.roles.to_vec(),
                    company_name: u.company.into(),
                    first_name: u.first.into(),
                    last_name: u.last.into(),
                    auto_accept: u.auto_accept,
                })
                .await?,
        );
    }
    if let Some(u) = users.iter_mut().find(|u| u.user.email == DEMO_EMS_TRADER.0) {
        u.user.ems_trader_id = Some(DEMO_EMS_TRADER.1.into());
        u.user.fix_integration = true;
        let mut tx = engine.store().write().await?;
        tx.update_user(&u.user).await?;
        tx.commit().await?;
    }
    seed_demo_orders(engine, &users).await?;
    Ok(true)
}

/// Resting orders from the demo traders so the books are not empty: on each
/// non-sandbox instrument, a bid and an offer inside the band.
async fn seed_demo_orders<S: Store>(
    engine: &Engine<S>,
    users: &[upstairs_engine::model::UserView],
) -> Result<(), EngineError> {
    use upstairs_domain::order::{Direction, OrderState};
    use upstairs_domain::{OrderId, ParentOrderId};
    use upstairs_engine::model::{ChildOrder, ParentOrder, ParentState};
    let now = engine.clock().now();
    let trader = |email: &str| users.iter().find(|u| u.user.email == email).map(|u| u.user.clone());
    let (Some(halyard), Some(kestrel)) = (trader("trader1@halyard.demo"), trader("trader1@kestrel.demo")) else {
        return Ok(());
    };
    let mut tx = engine.store().write().await?;
    let instruments = tx
        .instruments(&InstrumentFilter { is_sandbox: Some(false), page: 0, size: 100, ..InstrumentFilter::default() })
        .await?
        .items;
    for i in &instruments {
        // A quarter of the band inside each edge: never a crossed book.
        let width = ticks_between(i.min_tick_price, i.max_tick_price, i.tick_size).unwrap_or(4);
        let ticks_in = (width / 4).max(1);
        for (user, direction) in [(&halyard, Direction::Buy), (&kestrel, Direction::Sell)] {
            let broker = tx.company(user.company_id).await?.and_then(|c| c.default_broker).map(|b| b.company_id);
            let Some(broker_id) = broker else { continue };
            let parent = ParentOrder {
                parent_order_id: ParentOrderId::new(),
                company_id: user.company_id,
                created_by: user.user_id,
                instrument_id: i.instrument_id,
                direction,
                quantity: i.min_quantity * 10,
                broker_instructions: None,
                state: ParentState::Active,
                created_at: now,
                updated_at: now,
            };
            tx.insert_parent_order(&parent).await?;
            let price = match direction {
                Direction::Buy => add_ticks(i.min_tick_price, i.tick_size, ticks_in),
                Direction::Sell => add_ticks(i.max_tick_price, i.tick_size, -ticks_in),
            };
            tx.insert_order(&ChildOrder {
                order_id: OrderId::new(),
                parent_order_id: parent.parent_order_id,
                company_id: user.company_id,
                created_by: user.user_id,
                instrument_id: i.instrument_id,
                direction,
                state: OrderState::Working,
                price,
                quantity: i.min_quantity * 3,
                iceberg: false,
                residual: true,
                broker_id,
                created_at: now,
                updated_at: now,
            })
            .await?;
        }
    }
    audit(&mut tx, now, None, "order", None, "demo_seed", json!({"instruments": instruments.len()})).await?;
    tx.commit().await?;
    for i in &instruments {
        engine.publish_book(i.instrument_id);
    }
    Ok(())
}

/// The demo's market-data simulator: remembers where each band started so the random
/// walk stays within a realistic distance of it.
#[derive(Default)]
pub struct BandSimulator {
    start: HashMap<InstrumentId, Decimal>,
}

/// How far (in ticks) the simulated band may wander from where it started.
const MAX_DRIFT_TICKS: i64 = 12;

/// Moves the band of every active instrument by -1, 0 or +1 tick (keeping its width),
/// leaning back toward where it started once it has drifted far.
pub async fn simulate_band_step<S: Store>(engine: &Engine<S>, sim: &mut BandSimulator) -> Result<usize, EngineError> {
    use rand::Rng;
    let instruments = {
        let mut tx = engine.store().read().await?;
        let f = InstrumentFilter { active: Some(true), page: 0, size: 500, ..InstrumentFilter::default() };
        tx.instruments(&f).await?.items
    };
    let mut moved = 0;
    for i in instruments {
        let start = *sim.start.entry(i.instrument_id).or_insert(i.min_tick_price);
        let drift = ticks_between(start, i.min_tick_price, i.tick_size).unwrap_or(0);
        let step: i64 = match drift {
            d if d >= MAX_DRIFT_TICKS => -1,
            d if d <= -MAX_DRIFT_TICKS => 1,
            _ => rand::thread_rng().gen_range(-1..=1),
        };
        if step == 0 {
            continue;
        }
        let min = add_ticks(i.min_tick_price, i.tick_size, step);
        let max = add_ticks(i.max_tick_price, i.tick_size, step);
        engine.reference.move_band(None, i.instrument_id, min, max).await?;
        moved += 1;
    }
    Ok(moved)
}

/// The demo providers quote an RFQ this long after it was sent (the n-th provider a
/// little later than the one before), so a newcomer sees quotes arrive one by one.
const DEMO_QUOTE_AFTER: chrono::Duration = chrono::Duration::seconds(3);

/// The demo's quoting robot: each liquidity provider's first trader quotes every RFQ
/// still awaiting their response a few seconds after it was sent, priced inside the
/// band (the n-th provider n ticks inside it), for the whole quantity; returns how
/// many quotes it sent. A provider's login may quote by hand first, or requote after.
pub async fn demo_quote_step<S: Store>(engine: &Engine<S>) -> Result<usize, EngineError> {
    use upstairs_domain::order::Direction;
    use upstairs_domain::rfq::ResponseState;
    use upstairs_engine::rfqs::Answer;
    let now = engine.clock().now();
    let providers =
        engine.store().single().await?.companies_of_type(upstairs_engine::model::COMPANY_LIQUIDITY_PROVIDER).await?;
    let mut sent = 0;
    for (n, company) in providers.iter().enumerate() {
        let n = i64::try_from(n).unwrap_or(0);
        let Some(actor) = first_trader(engine, company).await? else { continue };
        let waiting = engine.rfqs.incoming_rfqs(&actor, Some(ResponseState::AwaitingResponse), None).await?;
        for rfq in waiting.into_iter().filter(|r| r.created_at + DEMO_QUOTE_AFTER * (n as i32 + 1) <= now) {
            let i = engine.cached_instrument(rfq.instrument_id).await?;
            let inside = (n + 1).min(ticks_between(i.min_tick_price, i.max_tick_price, i.tick_size).unwrap_or(0) / 2);
            let bid = upstairs_engine::model::QuoteSide {
                price: add_ticks(i.min_tick_price, i.tick_size, inside),
                quantity: rfq.quantity,
            };
            let offer = upstairs_engine::model::QuoteSide {
                price: add_ticks(i.max_tick_price, i.tick_size, -inside),
                quantity: rfq.quantity,
            };
            let (buy, sell) = match rfq.direction {
                None => (Some(bid), Some(offer)),
                Some(Direction::Buy) => (None, Some(offer)),
                Some(Direction::Sell) => (Some(bid), None),
            };
            match engine.rfqs.answer_rfq(&actor, rfq.rfq_id, Answer::Quote { buy, sell, broker_id: None }, None).await {
                Ok(_) => sent += 1,
                // Answered by hand meanwhile, or the RFQ ended: nothing to do.
                Err(EngineError::Conflict { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(sent)
}

/// The first active trader of `company`, as the robot acts for them.
async fn first_trader<S: Store>(
    engine: &Engine<S>,
    company: &Company,
) -> Result<Option<upstairs_engine::context::Actor>, EngineError> {
    let mut tx = engine.store().read().await?;
    let users = tx
        .users(&upstairs_engine::model::UserFilter {
            email: None,
            company_id: Some(company.company_id),
            active: Some(true),
            page: 0,
            size: 50,
        })
        .await?
        .items;
    Ok(users
        .into_iter()
        .find(|u| upstairs_domain::has_permission(&u.user.roles, upstairs_domain::Permission::Trade))
        .map(|u| upstairs_engine::context::Actor {
            user: u.user,
            company_name: u.company_name,
            session_id: upstairs_domain::SessionId::new(),
        }))
}
