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
use upstairs_engine::model::{Company, CompanyAccount, CompanyRef, Instrument, InstrumentFilter};
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

/// The demo's exchanges: MIC, name, time zone, open, close, parent orders from, and the
/// 2026 and 2027 holidays (the UK's for ICE Futures Europe's financials, Eurex's own).
type DemoExchange =
    (&'static str, &'static str, &'static str, &'static str, &'static str, &'static str, &'static [&'static str]);
const EXCHANGES: &[DemoExchange] = &[
    (
        "IFEU",
        "ICE Futures Europe",
        "Europe/London",
        "07:30",
        "18:00",
        "05:30",
        &[
            "2026-12-25=Christmas Day",
            "2026-12-28=Boxing Day (substitute day)",
            "2027-01-01=New Year's Day",
            "2027-03-26=Good Friday",
            "2027-03-29=Easter Monday",
            "2027-05-03=Early May bank holiday",
            "2027-05-31=Spring bank holiday",
            "2027-08-30=Summer bank holiday",
            "2027-12-27=Christmas Day (substitute day)",
            "2027-12-28=Boxing Day (substitute day)",
        ],
    ),
    (
        "XEUR",
        "Eurex",
        "Europe/Berlin",
        "08:00",
        "22:00",
        "07:30",
        &[
            "2026-12-24=Christmas Eve",
            "2026-12-25=Christmas Day",
            "2026-12-31=New Year's Eve",
            "2027-01-01=New Year's Day",
            "2027-03-26=Good Friday",
            "2027-03-29=Easter Monday",
            "2027-12-24=Christmas Eve",
            "2027-12-31=New Year's Eve",
        ],
    ),
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
    DemoInstrument { name: "Euribor 3M Dec26-Mar27", term: "Dec26-Mar27", tick: "0.005", min_block: 500, bid: "-0.040", offer: "0.010", exchange_id: "I", exchange: "ICE Futures Europe", mic: "IFEU", currency: "EUR", bbg: "ERZ6ERH7 Comdty", sandbox: false, reversed: false },
    DemoInstrument { name: "SONIA 3M Mar27-Jun27", term: "Mar27-Jun27", tick: "0.005", min_block: 500, bid: "0.050", offer: "0.100", exchange_id: "SO3", exchange: "ICE Futures Europe", mic: "IFEU", currency: "GBP", bbg: "SFIH7SFIM7 Comdty", sandbox: false, reversed: false },
    DemoInstrument { name: "Euro-Bund Dec26-Mar27", term: "Dec26-Mar27", tick: "0.01", min_block: 1000, bid: "0.42", offer: "0.52", exchange_id: "FGBL", exchange: "Eurex", mic: "XEUR", currency: "EUR", bbg: "RXZ6RXH7 Comdty", sandbox: false, reversed: true },
    DemoInstrument { name: "Brent Crude Dec26-Jun27", term: "Dec26-Jun27", tick: "0.01", min_block: 100, bid: "1.18", offer: "1.28", exchange_id: "B", exchange: "ICE Futures Europe", mic: "IFEU", currency: "USD", bbg: "COZ6COM7 Comdty", sandbox: false, reversed: false },
    DemoInstrument { name: "Euro Stoxx 50 Dec26", term: "Dec26", tick: "1", min_block: 250, bid: "5512", offer: "5522", exchange_id: "FESX", exchange: "Eurex", mic: "XEUR", currency: "EUR", bbg: "VGZ6 Index", sandbox: false, reversed: false },
    DemoInstrument { name: "Euribor 3M Jun27-Sep27 Sandbox", term: "Jun27-Sep27", tick: "0.005", min_block: 500, bid: "-0.010", offer: "0.040", exchange_id: "I", exchange: "ICE Futures Europe", mic: "IFEU", currency: "EUR", bbg: "ERM7ERU7 Comdty", sandbox: true, reversed: false },
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
/// The demo firms' accounts: (firm, code, name).
const ACCOUNTS: &[(&str, &str, &str)] = &[
    ("Halyard", "HAL-MACRO", "Halyard Global Macro Fund"),
    ("Halyard", "HAL-RATES", "Halyard Rates Opportunities"),
    ("Halyard", "HAL-PROP", "Halyard proprietary book"),
    ("Kestrel", "KES-MAIN", "Kestrel main book"),
    ("Kestrel", "KES-CLIENT", "Kestrel client facilitation"),
    ("Meridian", "MER-MM", "Meridian market making"),
    ("Ostrava", "OST-MM", "Ostrava market making"),
];

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
        // The trading firms' accounts, which their traders allocate trades to (ADR 0045).
        for (code, name) in ACCOUNTS.iter().filter(|(firm, ..)| *firm == d.name).map(|(_, code, name)| (code, name)) {
            tx.insert_account(&CompanyAccount::open(c.company_id, code, name, now)).await?;
        }
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
            // The demo provider's Symbol (55) for it: the Bloomberg ticker (ADR 0049).
            exchange_instrument_id: d.bbg.split(' ').next().map(str::to_owned),
            bbg_code: Some(d.bbg.into()),
            country: if d.mic == "XEUR" { "DE".into() } else { "GB".into() },
            currency: d.currency.into(),
            min_tick_price: dec(d.bid)?,
            max_tick_price: dec(d.offer)?,
            active: true,
            is_sandbox: d.sandbox,
            reversed_spread: d.reversed,
            band_seen_at: now,
            // The demo provider repeats every price every few seconds (ADR 0048).
            prices_stale_after: Some(DEMO_STALE_AFTER),
            prices_stale: false,
            created_at: now,
            updated_at: now,
        };
        tx.insert_instrument(&i).await?;
        // Its band from now on, as an operator's instrument has it (the chart and the
        // scorecards read it before the demo's walk first moves it).
        tx.record_band(&i, now).await?;
        audit(&mut tx, now, None, "instrument", Some(i.instrument_id.0), "demo_seed", json!({"name": i.name})).await?;
    }
    // The two exchanges' calendars (ADR 0052); the demo itself runs always open.
    for (mic, name, zone, open, close, from, holidays) in EXCHANGES {
        let calendar = upstairs_domain::calendar::Calendar::from_stored(
            zone,
            open,
            close,
            from,
            "Mon,Tue,Wed,Thu,Fri",
            &holidays.join("\n"),
        )
        .map_err(|e| EngineError::Internal(format!("demo exchange {mic}: {e}")))?;
        let e = upstairs_engine::model::Exchange {
            mic: (*mic).into(),
            name: (*name).into(),
            calendar,
            created_at: now,
            updated_at: now,
        };
        tx.save_exchange(&e).await?;
        audit(&mut tx, now, None, "exchange", None, "demo_seed", json!({"mic": mic})).await?;
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
        // A quarter of the band inside each edge: never a crossed book, and never outside
        // the band as the simulator moves it.
        let ticks_in = ticks_inside(i);
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
                min_execution: None,
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
                min_execution: None,
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

/// How many ticks inside each edge of a demo band its seeded orders rest, and how far
/// the demo's band wanders from its fair value: never further than that, so the seeded
/// orders stay inside the band however long the demo runs.
pub fn ticks_inside(i: &Instrument) -> i64 {
    (ticks_between(i.min_tick_price, i.max_tick_price, i.tick_size).unwrap_or(4) / 4).max(1)
}

/// How long a demo instrument goes without a price before it is stale: ten of the demo
/// provider's steps.
pub const DEMO_STALE_AFTER: i32 = 30;

/// The demo's market-data simulator: each band moves around a fair value (the seeded
/// band's low end; the first seen one for an instrument the demo did not seed), mean
/// reverting and never more than [`ticks_inside`] ticks from it.
#[derive(Default)]
pub struct BandSimulator {
    fair: HashMap<InstrumentId, Decimal>,
    /// Each band as the walk last set it (the venue's at first sight).
    bands: HashMap<InstrumentId, (Decimal, Decimal)>,
}

/// The band's next move in ticks, from its drift from the fair value, the farthest it
/// may go, and a roll of 0..10: it leans back toward the fair value (four in ten toward,
/// two away), rests at the edge of its reach half the time and never passes it.
pub fn band_step(drift: i64, reach: i64, roll: u32) -> i64 {
    let toward = -drift.signum();
    if drift == 0 {
        match roll {
            0..=2 => -1,
            3..=5 => 1,
            _ => 0,
        }
    } else if drift.abs() >= reach {
        if roll < 5 { toward } else { 0 }
    } else {
        match roll {
            0..=3 => toward,
            4..=5 => -toward,
            _ => 0,
        }
    }
}

impl BandSimulator {
    /// Every instrument's band after one more step of its walk, by [`band_step`] ticks
    /// keeping its width (moved or not: a provider repeats its prices).
    pub fn step(
        &mut self,
        instruments: &[Instrument],
        rng: &mut impl rand::Rng,
    ) -> Vec<(InstrumentId, Decimal, Decimal)> {
        instruments
            .iter()
            .map(|i| {
                let id = i.instrument_id;
                let seeded = INSTRUMENTS.iter().find(|d| d.name == i.name).and_then(|d| dec(d.bid).ok());
                let fair = *self.fair.entry(id).or_insert(seeded.unwrap_or(i.min_tick_price));
                let (min, max) = *self.bands.entry(id).or_insert((i.min_tick_price, i.max_tick_price));
                let drift = ticks_between(fair, min, i.tick_size).unwrap_or(0);
                let step = band_step(drift, ticks_inside(i), rng.gen_range(0..10));
                let next = (add_ticks(min, i.tick_size, step), add_ticks(max, i.tick_size, step));
                self.bands.insert(id, next);
                (id, next.0, next.1)
            })
            .collect()
    }
}

/// The active instruments the demo's walk moves.
pub async fn walked_instruments<S: Store>(engine: &Engine<S>) -> Result<Vec<Instrument>, EngineError> {
    let mut tx = engine.store().read().await?;
    let f = InstrumentFilter { active: Some(true), page: 0, size: 500, ..InstrumentFilter::default() };
    Ok(tx.instruments(&f).await?.items)
}

/// The demo providers quote an RFQ this long after it was sent (the n-th provider a
/// little later than the one before), so a newcomer sees quotes arrive one by one.
const DEMO_QUOTE_AFTER: chrono::Duration = chrono::Duration::seconds(3);

/// The demo's quoting robot: each liquidity provider's first trader quotes every RFQ
/// still awaiting their response a few seconds after it was sent, priced inside the
/// band (the n-th provider n ticks inside it), for the whole quantity, and quotes again
/// when the band has moved onto or past a live quote; returns how many quotes it sent. A
/// provider's login may quote by hand first, or requote after.
pub async fn demo_quote_step<S: Store>(engine: &Engine<S>) -> Result<usize, EngineError> {
    use upstairs_domain::order::Direction;
    use upstairs_domain::rfq::ResponseState;
    use upstairs_engine::model::QuoteSide;
    use upstairs_engine::rfqs::Answer;
    let now = engine.clock().now();
    let providers =
        engine.store().single().await?.companies_of_type(upstairs_engine::model::COMPANY_LIQUIDITY_PROVIDER).await?;
    let mut sent = 0;
    for (n, company) in providers.iter().enumerate() {
        let n = i64::try_from(n).unwrap_or(0);
        let Some(actor) = first_trader(engine, company).await? else { continue };
        let mut due = Vec::new();
        for rfq in engine.rfqs.incoming_rfqs(&actor, Some(ResponseState::AwaitingResponse), None).await? {
            if rfq.created_at + DEMO_QUOTE_AFTER * (n as i32 + 1) <= now {
                due.push(rfq);
            }
        }
        for rfq in engine.rfqs.incoming_rfqs(&actor, Some(ResponseState::Responded), None).await? {
            let i = engine.cached_instrument(rfq.instrument_id).await?;
            let quoted = [&rfq.response.buy, &rfq.response.sell];
            // At the band's edge, one more move would leave it outside: quote again now.
            if quoted.into_iter().flatten().any(|q| q.price <= i.min_tick_price || q.price >= i.max_tick_price) {
                due.push(rfq);
            }
        }
        for rfq in due {
            let i = engine.cached_instrument(rfq.instrument_id).await?;
            let inside = (n + 1).min(ticks_between(i.min_tick_price, i.max_tick_price, i.tick_size).unwrap_or(0) / 2);
            let bid = QuoteSide { price: add_ticks(i.min_tick_price, i.tick_size, inside), quantity: rfq.quantity };
            let offer = QuoteSide { price: add_ticks(i.max_tick_price, i.tick_size, -inside), quantity: rfq.quantity };
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

/// What one step of the demo's trading robots did.
#[derive(Debug, PartialEq, Eq)]
pub enum RobotMove {
    /// Nothing this time (no robot, no instrument, or what it wanted was not there).
    Idle,
    /// Rested a new order (after cancelling the one it had there, if any).
    Rested,
    /// Sent a match request to another robot's resting order.
    Took,
}

/// The demo's trading robots, so that the books stay alive: the liquidity providers'
/// first traders (the first buying, the second selling, and so on). Each step one robot,
/// on one instrument, either takes the minimum block from another robot's order at the
/// best price, when no one else's order is at that price or better (the seeded orders
/// of the README's tour are never taken), or keeps one order resting in its half of the
/// band (never crossing the book), placing it again when the band has left it, and now
/// and then anyway.
pub async fn demo_trade_step<S: Store>(engine: &Engine<S>, rng: &mut impl rand::Rng) -> Result<RobotMove, EngineError> {
    use rand::seq::SliceRandom;
    use upstairs_domain::order::{Direction, OrderState};
    use upstairs_domain::quantity::Quantity;
    use upstairs_engine::matches::Take;
    use upstairs_engine::model::{OrderFilter, ParentState};
    use upstairs_engine::orders::{NewOrder, NewParentOrder};
    let providers =
        engine.store().single().await?.companies_of_type(upstairs_engine::model::COMPANY_LIQUIDITY_PROVIDER).await?;
    let robots: Vec<_> = providers.iter().map(|c| c.company_id).collect();
    let Some((n, company)) = providers.iter().enumerate().collect::<Vec<_>>().choose(rng).copied() else {
        return Ok(RobotMove::Idle);
    };
    let Some(actor) = first_trader(engine, company).await? else { return Ok(RobotMove::Idle) };
    let direction = if n % 2 == 0 { Direction::Buy } else { Direction::Sell };
    let instruments = {
        let mut tx = engine.store().read().await?;
        let f =
            InstrumentFilter { active: Some(true), is_sandbox: Some(false), page: 0, size: 500, ..Default::default() };
        tx.instruments(&f).await?.items
    };
    let Some(i) = instruments.choose(rng) else { return Ok(RobotMove::Idle) };
    let quantity =
        |blocks: i64| Quantity::new(i.min_quantity * blocks).map_err(|e| EngineError::Internal(e.to_string()));
    let parents = engine.orders.parent_orders(&actor, &[ParentState::Active]).await?;
    let parent = match parents
        .into_iter()
        .find(|p| p.view.parent.instrument_id == i.instrument_id && p.view.parent.direction == direction)
    {
        Some(p) => p,
        None => {
            let new = NewParentOrder {
                direction: Some(direction),
                instrument_id: i.instrument_id,
                quantity: quantity(100)?,
                broker_instructions: None,
                min_execution: None,
                idempotency: None,
                fix_cl_ord_id: None,
            };
            engine.orders.create_parent_order(&actor, new).await?
        }
    };
    let parent_id = parent.view.parent.parent_order_id;
    let Some(broker) = parent.eligible_brokers.first().map(|b| b.company_id) else { return Ok(RobotMove::Idle) };

    if rng.gen_ratio(1, 5) {
        // The best price facing this robot inside the band, and who rests there or better.
        let facing = {
            let edge = if direction == Direction::Buy { i.max_tick_price } else { i.min_tick_price };
            engine.store().single().await?.orders_facing(parent_id, actor.user.company_id, edge, None).await?
        };
        let in_play: Vec<_> = facing.iter().map(|f| &f.order).filter(|o| i.in_band(o.price)).collect();
        let best = match direction {
            Direction::Buy => in_play.iter().map(|o| o.price).min(),
            Direction::Sell => in_play.iter().map(|o| o.price).max(),
        };
        let Some(best) = best else { return Ok(RobotMove::Idle) };
        let reached = |o: &&&upstairs_engine::model::ChildOrder| match direction {
            Direction::Buy => o.price <= best,
            Direction::Sell => o.price >= best,
        };
        if !in_play.iter().filter(reached).all(|o| robots.contains(&o.company_id)) {
            return Ok(RobotMove::Idle);
        }
        let take = Take {
            requesting_parent_order_id: parent_id,
            price: best,
            quantity: quantity(1)?,
            requesting_broker_id: broker,
            residual: false,
            dry_run: false,
            idempotency: None,
        };
        return match engine.matches.take(&actor, take).await {
            Ok(_) => Ok(RobotMove::Took),
            // The order went meanwhile, or the parent has too little left: next time.
            Err(EngineError::Conflict { .. } | EngineError::Invalid { .. } | EngineError::NotFound(_)) => {
                Ok(RobotMove::Idle)
            }
            Err(e) => Err(e),
        };
    }

    let filter =
        OrderFilter { parent_order_id: Some(parent_id), states: vec![OrderState::Working], ..OrderFilter::default() };
    let working = engine.orders.orders(&actor, filter).await?;
    let stays = working.iter().any(|o| i.in_band(o.order.price)) && !rng.gen_ratio(1, 3);
    if stays {
        return Ok(RobotMove::Idle);
    }
    for o in &working {
        engine.withdrawals.cancel_order(&actor, o.order.order_id).await?;
    }
    // Anywhere in its half of the band, short of the best order facing it: the book is
    // never crossed, and a robot's order is often the best, for the other robot to take.
    let half = ticks_between(i.min_tick_price, i.max_tick_price, i.tick_size).unwrap_or(0) / 2;
    let ticks = rng.gen_range(0..half.max(1));
    let rows = engine.store().single().await?.book_rows(i.instrument_id).await?;
    let facing = rows.iter().filter(|r| r.direction != direction).map(|r| r.price);
    let price = match direction {
        Direction::Buy => {
            let p = add_ticks(i.min_tick_price, i.tick_size, ticks);
            facing.min().map_or(p, |best| p.min(add_ticks(best, i.tick_size, -1)))
        }
        Direction::Sell => {
            let p = add_ticks(i.max_tick_price, i.tick_size, -ticks);
            facing.max().map_or(p, |best| p.max(add_ticks(best, i.tick_size, 1)))
        }
    };
    if !i.in_band(price) {
        return Ok(RobotMove::Idle);
    }
    let order = NewOrder {
        parent_order_id: parent_id,
        quantity: quantity(rng.gen_range(1..=4))?,
        price,
        residual: true,
        iceberg: false,
        min_execution: None,
        broker_id: broker,
        instrument_id: None,
        direction: None,
        idempotency: None,
    };
    match engine.orders.create_order(&actor, order).await {
        Ok(_) => Ok(RobotMove::Rested),
        // The band moved between the read and the write, or the parent is spent.
        Err(EngineError::Conflict { .. } | EngineError::Invalid { .. }) => Ok(RobotMove::Idle),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use std::sync::Arc;
    use upstairs_domain::calendar::Calendar;
    use upstairs_domain::match_request::MatchRequestState;
    use upstairs_domain::order::{Direction, OrderState};
    use upstairs_domain::quantity::Quantity;
    use upstairs_engine::context::Actor;
    use upstairs_engine::matches::{Take, TakeOutcome};
    use upstairs_engine::model::{OrderFilter, ParentState};
    use upstairs_engine::{BroadcastPublisher, EngineConfig, ManualClock};

    /// One step of the walk, straight into the engine (as the demo provider's prices
    /// reach it over FIX).
    async fn simulate_band_step<S: Store>(
        engine: &Engine<S>,
        sim: &mut BandSimulator,
        rng: &mut StdRng,
    ) -> Result<(), EngineError> {
        let instruments = walked_instruments(engine).await?;
        for (id, min, max) in sim.step(&instruments, rng) {
            engine.reference.move_band(None, id, min, max).await?;
        }
        Ok(())
    }

    #[test]
    fn the_band_leans_back_to_its_fair_value_and_never_passes_its_reach() {
        for reach in 1..=3 {
            for drift in -reach..=reach {
                let steps: Vec<i64> = (0..10).map(|roll| band_step(drift, reach, roll)).collect();
                assert!(steps.iter().all(|s| (drift + s).abs() <= reach), "{drift}/{reach}: {steps:?}");
                let toward = steps.iter().filter(|s| **s == -drift.signum() && drift != 0).count();
                let away = steps.iter().filter(|s| **s == drift.signum() && drift != 0).count();
                assert!(drift == 0 || toward > away, "{drift}/{reach}: {steps:?}");
            }
        }
        // A long walk visits every place within its reach, and spends most time near fair.
        let mut rng = StdRng::seed_from_u64(7);
        let (mut drift, mut at) = (0i64, HashMap::<i64, u32>::new());
        for _ in 0..100_000 {
            drift += band_step(drift, 2, rng.gen_range(0..10));
            *at.entry(drift).or_default() += 1;
        }
        assert_eq!(at.len(), 5, "{at:?}");
        assert!(at[&0] > at[&2] && at[&0] > at[&-2], "{at:?}");
    }

    async fn actor<S: Store>(engine: &Engine<S>, email: &str) -> Actor {
        let u = engine.store().single().await.unwrap().user_by_email(email).await.unwrap().expect(email);
        Actor { user: u.user, company_name: u.company_name, session_id: upstairs_domain::SessionId::new() }
    }

    /// An hour of `make run`: 1,200 band moves (one every 3 s) and 360 robot steps (one
    /// every 10 s). The seeded orders are still inside their bands and untouched; the
    /// robots rested and traded with each other; the README's tour still works: Halyard
    /// takes Kestrel's offer, and Kestrel accepts a demo provider's one-way quote.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_hour_of_the_demo_keeps_its_liquidity_in_play() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("demo.db").display());
        let store = upstairs_store::SqliteStore::connect(&url).await.unwrap();
        let start = chrono::DateTime::parse_from_rfc3339("2026-11-24T10:00:00Z").unwrap().to_utc();
        let clock = Arc::new(ManualClock::new(start));
        let mailer =
            upstairs_mail::mailer_from_config(None, &dir.path().join("mail"), upstairs_mail::MailSettings::default())
                .unwrap();
        let config = EngineConfig {
            demo: true,
            calendar: Calendar { always_open: true, ..Calendar::default() },
            ..Default::default()
        };
        let engine = Engine::new(store, clock.clone(), Arc::new(BroadcastPublisher::new(16)), mailer, config);
        assert!(seed_demo(&engine).await.unwrap());
        let (halyard, kestrel) =
            (actor(&engine, "trader1@halyard.demo").await, actor(&engine, "trader1@kestrel.demo").await);
        let working = |who: Actor| {
            let engine = &engine;
            async move {
                let f = OrderFilter { states: vec![OrderState::Working], ..OrderFilter::default() };
                engine.orders.orders(&who, f).await.unwrap()
            }
        };
        let seeded = [working(halyard.clone()).await, working(kestrel.clone()).await].concat();
        assert_eq!(seeded.len(), 10, "a bid and an offer on each of five instruments");

        let (mut sim, mut rng) = (BandSimulator::default(), StdRng::seed_from_u64(2026));
        let mut moves = Vec::new();
        for second in (0..3600).step_by(3) {
            clock.set(start + chrono::Duration::seconds(second));
            simulate_band_step(&engine, &mut sim, &mut rng).await.unwrap();
            if second % 10 < 3 {
                moves.push(demo_trade_step(&engine, &mut rng).await.unwrap());
                for o in &seeded {
                    let rows = engine.store().single().await.unwrap().book_rows(o.order.instrument_id).await.unwrap();
                    let best = |d: Direction| rows.iter().filter(move |r| r.direction == d).map(|r| r.price);
                    let (bid, offer) = (best(Direction::Buy).max().unwrap(), best(Direction::Sell).min().unwrap());
                    assert!(bid < offer, "at {second} s a crossed book: {rows:?}");
                }
            }
            // The job loop answers match requests by their responders' preferences.
            engine.scheduler.run_due_timers().await.unwrap();
            for o in &seeded {
                let i = engine.cached_instrument(o.order.instrument_id).await.unwrap();
                assert!(i.in_band(o.order.price), "at {second} s {} left its band: {i:?}", o.order.price);
            }
        }
        let count = |m: RobotMove| moves.iter().filter(|x| **x == m).count();
        println!(
            "robots: {} rested, {} took, {} idle",
            count(RobotMove::Rested),
            count(RobotMove::Took),
            count(RobotMove::Idle)
        );
        assert!(count(RobotMove::Rested) >= 20 && count(RobotMove::Took) >= 10, "{moves:?}");
        assert_eq!([working(halyard.clone()).await, working(kestrel.clone()).await].concat().len(), 10, "none taken");
        // The robots traded with each other: each robot has matched quantity.
        for email in ["quotes@meridian.demo", "quotes@ostrava.demo"] {
            let robot = actor(&engine, email).await;
            let parents = engine.orders.parent_orders(&robot, &[ParentState::Active]).await.unwrap();
            assert!(parents.iter().any(|p| p.view.matched > 0), "{email} traded");
        }

        // The tour: Halyard takes at Kestrel's Euribor offer, which is accepted at once.
        let offer = seeded
            .iter()
            .find(|o| o.order.company_id == kestrel.user.company_id && o.order.direction == Direction::Sell)
            .unwrap();
        let parents = engine.orders.parent_orders(&halyard, &[ParentState::Active]).await.unwrap();
        let buy = parents.iter().find(|p| p.view.parent.instrument_id == offer.order.instrument_id).unwrap();
        let i = engine.cached_instrument(offer.order.instrument_id).await.unwrap();
        let take = Take {
            requesting_parent_order_id: buy.view.parent.parent_order_id,
            price: offer.order.price,
            quantity: Quantity::new(i.min_quantity).unwrap(),
            requesting_broker_id: buy.eligible_brokers[0].company_id,
            residual: false,
            dry_run: false,
            idempotency: None,
        };
        let TakeOutcome::Requested(requests) = engine.matches.take(&halyard, take).await.unwrap() else { panic!() };
        engine.scheduler.run_due_timers().await.unwrap();
        assert!(!requests.is_empty());
        for r in requests {
            // Kestrel's, or a robot's resting at that price or better: each answers at once.
            let answered = engine.matches.match_request(&halyard, r.match_request_id).await.unwrap();
            assert_eq!(answered.state, MatchRequestState::Accepted, "{answered:?}");
        }

        // A one-way RFQ: both providers quote, the band moves on, they quote again when it
        // leaves them; the best quote is accepted.
        let sell = engine.orders.parent_orders(&kestrel, &[ParentState::Active]).await.unwrap();
        let sell = sell.iter().find(|p| p.view.parent.instrument_id == i.instrument_id).unwrap();
        let providers = engine
            .store()
            .single()
            .await
            .unwrap()
            .companies_of_type(upstairs_engine::model::COMPANY_LIQUIDITY_PROVIDER)
            .await
            .unwrap();
        let rfq = upstairs_engine::rfqs::NewRfq {
            parent_order_id: sell.view.parent.parent_order_id,
            quantity: Quantity::new(i.min_quantity).unwrap(),
            two_way: false,
            anonymous: false,
            liquidity_provider_ids: providers.iter().map(|c| c.company_id).collect(),
            expires_in_seconds: 300,
            broker_id: None,
            idempotency: None,
        };
        let rfq = engine.rfqs.create_rfq(&kestrel, rfq).await.unwrap().rfq;
        let mut now = start + chrono::Duration::seconds(3600);
        for _ in 0..40 {
            now += chrono::Duration::seconds(3);
            clock.set(now);
            simulate_band_step(&engine, &mut sim, &mut rng).await.unwrap();
            demo_quote_step(&engine).await.unwrap();
        }
        let view = engine.rfqs.rfq(&kestrel, rfq.rfq_id).await.unwrap();
        let i = engine.cached_instrument(i.instrument_id).await.unwrap();
        let quotes: Vec<_> = view.responses.iter().filter_map(|(r, _)| r.buy.map(|q| (r.rfq_response_id, q))).collect();
        assert_eq!(quotes.len(), 2, "{view:?}");
        assert!(
            quotes.iter().all(|(_, q)| i.in_band(q.price) && q.price > i.min_tick_price),
            "inside {i:?}: {quotes:?}"
        );
        let (best, quote) = quotes.iter().max_by_key(|(_, q)| q.price).unwrap();
        let done = engine.rfqs.accept_quote(&kestrel, rfq.rfq_id, *best, Some(*quote)).await.unwrap();
        assert!(done.responses.iter().any(|(r, _)| r.match_request_id.is_some()), "{done:?}");
    }
}
