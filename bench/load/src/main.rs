//! Open-loop mixed load against Upstairs nodes (issue 15's capacity figures), driven by
//! `bench/capacity.py`, which builds the venue and reads what this prints.
//!
//! `upstairs-load WORLD.json RATE SECONDS OUT_IDS`: sends RATE operations per second for
//! SECONDS, each on its own schedule whether or not the earlier ones answered (so a slow
//! server cannot slow the load down and hide its own latency), spread round-robin over
//! the nodes. Each operation is one of: a child order resting one lot (`order`), a book
//! read (`book`), a take of one lot (`take`), the responder's accept of a take (`accept`),
//! in the world's proportions; a take with nothing known to rest becomes an order, an
//! accept with nothing pending a book read. Latency is from the operation's scheduled
//! time to its answer. Prints one JSON summary on stdout and writes the ids of every
//! acknowledged order, one per line, to OUT_IDS (the driver checks each is stored).

use anyhow::{Context, Result, bail};
use rand::Rng;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Deserialize)]
struct World {
    nodes: Vec<String>,
    broker_id: String,
    /// The price every order rests and every take reaches, as exact text.
    price: String,
    lot: i64,
    /// Weights of order, book, take, accept.
    mix: [u32; 4],
    pairs: Vec<Pair>,
}

/// One instrument with one seller resting on it and one buyer taking from it, so the
/// seller is the responder of every take on it.
#[derive(Deserialize)]
struct Pair {
    instrument_id: String,
    seller: String,
    seller_parent: String,
    buyer: String,
    buyer_parent: String,
}

#[derive(Default)]
struct PairState {
    /// Lots acknowledged as resting and not yet taken (as far as this client knows).
    resting: i64,
    /// Takes waiting for the seller's accept.
    pending: VecDeque<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Order,
    Book,
    Take,
    Accept,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Order => "order",
            Kind::Book => "book",
            Kind::Take => "take",
            Kind::Accept => "accept",
        }
    }
}

#[derive(Default)]
struct Tally {
    /// Microseconds from schedule to answer, per kind.
    latencies: BTreeMap<Kind, Vec<u64>>,
    statuses: BTreeMap<(Kind, u16), u64>,
    /// Transport failures (no HTTP answer at all).
    failed: BTreeMap<Kind, u64>,
    acknowledged: Vec<String>,
}

struct Shared {
    world: World,
    client: reqwest::Client,
    price: Value,
    pairs: Vec<Mutex<PairState>>,
    tally: Mutex<Tally>,
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, world, rate, seconds, out] = args.as_slice() else {
        bail!("usage: upstairs-load WORLD.json RATE SECONDS OUT_IDS");
    };
    let world: World = serde_json::from_str(&std::fs::read_to_string(world).context("read the world")?)?;
    let rate: f64 = rate.parse().context("RATE")?;
    let seconds: f64 = seconds.parse().context("SECONDS")?;
    if world.nodes.is_empty() || world.pairs.is_empty() || rate <= 0.0 {
        bail!("a world needs nodes and pairs, and a positive rate");
    }
    let price = Value::Number(serde_json::Number::from_str(&world.price).context("price")?);
    let client = reqwest::Client::builder().pool_max_idle_per_host(4096).timeout(Duration::from_secs(90)).build()?;
    let pairs = world.pairs.iter().map(|_| Mutex::default()).collect();
    let shared = Arc::new(Shared { world, client, price, pairs, tally: Mutex::default() });

    let total = (rate * seconds).round() as u64;
    let start = Instant::now();
    let mut tasks = Vec::with_capacity(total as usize);
    let mut late = 0u64;
    for i in 0..total {
        let due = start + Duration::from_secs_f64(i as f64 / rate);
        let now = Instant::now();
        if due > now {
            tokio::time::sleep_until(due.into()).await;
        } else if now - due > Duration::from_millis(10) {
            late += 1;
        }
        let shared = shared.clone();
        tasks.push(tokio::spawn(async move { operate(&shared, i as usize, due).await }));
    }
    for t in tasks {
        t.await?;
    }
    let elapsed = start.elapsed().as_secs_f64();
    let tally = std::mem::take(&mut *shared.tally.lock().expect("tally"));
    std::fs::write(out, tally.acknowledged.join("\n"))?;
    println!("{}", summary(&tally, total, elapsed, late));
    Ok(())
}

fn summary(t: &Tally, sent: u64, elapsed: f64, late: u64) -> Value {
    let mut kinds = serde_json::Map::new();
    let mut all: Vec<u64> = Vec::new();
    for (kind, lat) in &t.latencies {
        let mut lat = lat.clone();
        lat.sort_unstable();
        all.extend(&lat);
        let statuses: BTreeMap<String, u64> =
            t.statuses.iter().filter(|((k, _), _)| k == kind).map(|((_, s), n)| (s.to_string(), *n)).collect();
        kinds.insert(
            kind.name().into(),
            json!({"count": lat.len(), "p50_ms": pct(&lat, 0.50), "p99_ms": pct(&lat, 0.99),
                   "max_ms": pct(&lat, 1.0), "statuses": statuses, "failed": t.failed.get(kind).copied().unwrap_or(0)}),
        );
    }
    all.sort_unstable();
    let mut statuses: BTreeMap<u16, u64> = BTreeMap::new();
    for ((_, s), n) in &t.statuses {
        *statuses.entry(*s).or_default() += n;
    }
    json!({"sent": sent, "seconds": elapsed, "late_starts": late,
           "p50_ms": pct(&all, 0.50), "p99_ms": pct(&all, 0.99), "max_ms": pct(&all, 1.0),
           "statuses": statuses.iter().map(|(s, n)| (s.to_string(), *n)).collect::<BTreeMap<_, _>>(),
           "failed": t.failed.values().sum::<u64>(), "acknowledged_orders": t.acknowledged.len(), "kinds": kinds})
}

/// The `q` quantile of sorted microseconds, in milliseconds.
fn pct(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i] as f64 / 1000.0
}

async fn operate(s: &Shared, i: usize, due: Instant) {
    let w = &s.world;
    let node = &w.nodes[i % w.nodes.len()];
    let p = rand::thread_rng().gen_range(0..w.pairs.len());
    let pair = &w.pairs[p];
    let (kind, accepting) = choose(s, p);
    let key = uuid::Uuid::new_v4().to_string();
    let request = match kind {
        Kind::Order => {
            s.client.post(format!("{node}/api/orders")).bearer_auth(&pair.seller).header("idempotency-key", &key).json(
                &json!({"parent_order_id": pair.seller_parent, "quantity": w.lot, "limit_price": s.price,
                          "residual": true, "iceberg": false, "broker_id": w.broker_id,
                          "instrument_id": pair.instrument_id, "direction": "SELL"}),
            )
        }
        Kind::Book => {
            s.client.get(format!("{node}/api/instruments/{}/book", pair.instrument_id)).bearer_auth(&pair.buyer)
        }
        Kind::Take => s
            .client
            .post(format!("{node}/api/order-match-requests"))
            .bearer_auth(&pair.buyer)
            .header("idempotency-key", &key)
            .json(&json!({"requesting_parent_order_id": pair.buyer_parent, "quantity": w.lot, "price": s.price,
                          "requesting_broker_id": w.broker_id, "dry_run": false, "residual": false})),
        Kind::Accept => s
            .client
            .patch(format!("{node}/api/order-match-requests/{}", accepting.as_deref().unwrap_or_default()))
            .bearer_auth(&pair.seller)
            .json(&json!({"state": "ACCEPTED"})),
    };
    let answer = request.send().await;
    let micros = due.elapsed().as_micros() as u64;
    let (status, body) = match answer {
        Ok(res) => {
            let status = res.status().as_u16();
            (Some(status), res.json::<Value>().await.unwrap_or(Value::Null))
        }
        Err(_) => (None, Value::Null),
    };
    {
        let mut state = s.pairs[p].lock().expect("pair");
        match (kind, status) {
            (Kind::Order, Some(201)) => state.resting += 1,
            (Kind::Take, Some(201)) => {
                for m in body.as_array().into_iter().flatten() {
                    if let Some(id) = m["order_match_request_id"].as_str() {
                        state.pending.push_back(id.to_owned());
                    }
                }
            }
            // Nothing rested after all: start again from what the server said.
            (Kind::Take, Some(409)) => state.resting = 0,
            // Not answered now (throttled, say): it can be accepted later.
            (Kind::Accept, Some(s)) if s != 200 => state.pending.extend(accepting),
            (Kind::Accept, None) => state.pending.extend(accepting),
            _ => {}
        }
    }
    let mut t = s.tally.lock().expect("tally");
    t.latencies.entry(kind).or_default().push(micros);
    match status {
        Some(code) => *t.statuses.entry((kind, code)).or_default() += 1,
        None => *t.failed.entry(kind).or_default() += 1,
    }
    if kind == Kind::Order
        && status == Some(201)
        && let Some(id) = body["order_id"].as_str()
    {
        t.acknowledged.push(id.to_owned());
    }
}

/// The next operation on pair `p`, by the world's weights, given what it holds (an
/// accept takes the oldest pending take's id with it).
fn choose(s: &Shared, p: usize) -> (Kind, Option<String>) {
    let [order, book, take, accept] = s.world.mix;
    let roll = rand::thread_rng().gen_range(0..(order + book + take + accept).max(1));
    let mut state = s.pairs[p].lock().expect("pair");
    let kind = if roll < order {
        Kind::Order
    } else if roll < order + book {
        Kind::Book
    } else if roll < order + book + take {
        Kind::Take
    } else {
        Kind::Accept
    };
    match kind {
        Kind::Take if state.resting == 0 => (Kind::Order, None),
        Kind::Take => {
            state.resting -= 1;
            (Kind::Take, None)
        }
        Kind::Accept => match state.pending.pop_front() {
            Some(id) => (Kind::Accept, Some(id)),
            None => (Kind::Book, None),
        },
        k => (k, None),
    }
}
