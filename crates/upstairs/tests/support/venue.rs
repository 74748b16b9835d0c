//! A venue to trade in: two trading firms (Halyard, Kestrel) using one broker (Baltic), a
//! trader in each (and a second, limited one at Halyard), one instrument with the band
//! 94.70-94.80 on a 0.01 tick and a minimum block of 500, on a trading Tuesday in London.

use chrono::{DateTime, Utc};
use reqwest::StatusCode;
use serde_json::{Value, json};
use upstairs::app;

use super::{Backend, TestApp};

pub const PW: &str = "Orders-Pass-1";

/// Tuesday 3 March 2026, 10:00 in London (GMT).
pub fn tuesday_10am() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-03-03T10:00:00Z").unwrap().with_timezone(&Utc)
}

/// Where the broker's trade confirmations go.
pub const BROKER_DESK: &str = "confirm@baltic.test";

pub struct Venue {
    pub app: TestApp,
    pub a: String,
    pub b: String,
    pub a_admin_limited: String,
    pub instrument: String,
    pub broker: String,
}

/// Two trading firms (A, B) using one broker, a trader in each, one instrument with the
/// band 94.70–94.80 on a 0.01 tick and a minimum block of 500.
pub async fn venue(backend: Backend) -> Venue {
    venue_with(backend, |_| {}).await
}

/// The venue with the app's settings tweaked (e.g. a job loop that polls seldom).
pub async fn venue_with(backend: Backend, tweak: impl FnOnce(&mut app::Settings)) -> Venue {
    let app = TestApp::spawn_at_with(backend, tuesday_10am(), tweak).await;
    let admin = app.admin_token().await;
    let (_, broker) = app
        .post(
            "/api/admin/companies",
            Some(&admin),
            json!({"name": "Baltic", "full_name": "Baltic Ltd", "roles": ["broker"],
                   "trade_confirmation_email": BROKER_DESK, "trade_confirmation_via_email_enabled": true}),
        )
        .await;
    let brokers = json!([{"company_id": broker["company_id"]}]);
    for name in ["Halyard", "Kestrel"] {
        let (s, v) = app.post("/api/admin/companies", Some(&admin), json!({"name": name, "full_name": format!("{name} LLP"), "brokers": brokers, "default_broker": brokers[0]})).await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
    }
    app::bootstrap_user(&app.database_url, "a@halyard.test", PW, &["trader"], "Halyard").await.unwrap();
    app::bootstrap_user(&app.database_url, "b@kestrel.test", PW, &["trader"], "Kestrel").await.unwrap();
    app::bootstrap_user(&app.database_url, "small@halyard.test", PW, &["trader"], "Halyard").await.unwrap();
    let (s, inst) = app
        .post("/api/admin/instruments", Some(&admin), json!({"name": "Euribor 3M Dec26-Mar27", "term": "Dec26-Mar27", "min_quantity": 500,
            "tick_size": 0.01, "exchange_id": "I", "currency": "EUR", "min_tick_price": 94.70, "max_tick_price": 94.80}))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{inst}");
    let a = app.login_remembered("a@halyard.test", PW).await;
    let b = app.login_remembered("b@kestrel.test", PW).await;
    let small = app.login_remembered("small@halyard.test", PW).await;
    let (_, me) = app.get("/api/users/me", Some(&small)).await;
    app.patch(
        &format!("/api/users/{}", me["user_id"].as_str().unwrap()),
        Some(&admin),
        json!({"parent_order_limit_multiplier": 4}),
    )
    .await;
    Venue {
        a,
        b,
        a_admin_limited: small,
        instrument: inst["instrument_id"].as_str().unwrap().into(),
        broker: broker["company_id"].as_str().unwrap().into(),
        app,
    }
}

impl Venue {
    pub async fn parent(&self, token: &str, direction: &str, quantity: i64) -> Value {
        let (s, v) = self.try_parent(token, direction, quantity).await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
        v
    }

    /// `POST /api/parent-orders` on the venue's instrument, whatever it answers.
    pub async fn try_parent(&self, token: &str, direction: &str, quantity: i64) -> (StatusCode, Value) {
        let body = json!({"direction": direction, "instrument_id": self.instrument, "quantity": quantity});
        self.app.post("/api/parent-orders", Some(token), body).await
    }

    pub async fn child(
        &self,
        token: &str,
        parent: &Value,
        quantity: i64,
        price: f64_free::P,
        iceberg: bool,
    ) -> (StatusCode, Value) {
        self.app
            .post(
                "/api/orders",
                Some(token),
                json!({"parent_order_id": parent["parent_order_id"], "quantity": quantity,
                "limit_price": price.0, "residual": true, "iceberg": iceberg, "broker_id": self.broker,
                "instrument_id": self.instrument, "direction": parent["direction"]}),
            )
            .await
    }

    /// Makes Northgate, a new broker, `company`'s second broker beside the venue's one
    /// (to give trades up to); its id.
    pub async fn second_broker(&self, admin: &str, company: &str) -> String {
        let (s, northgate) = self
            .app
            .post(
                "/api/admin/companies",
                Some(admin),
                json!({"name": "Northgate", "full_name": "Northgate LLP", "roles": ["broker"]}),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{northgate}");
        let northgate = northgate["company_id"].as_str().unwrap().to_owned();
        let brokers = json!([{"company_id": self.broker}, {"company_id": northgate}]);
        let (s, c) =
            self.app.patch(&format!("/api/admin/companies/{company}"), Some(admin), json!({"brokers": brokers})).await;
        assert_eq!(s, StatusCode::OK, "{c}");
        northgate
    }
}

/// (state, quantity) of every child order of a parent, sorted.
pub async fn children(v: &Venue, token: &str, parent: &Value) -> Vec<(String, i64)> {
    let pid = parent["parent_order_id"].as_str().unwrap();
    let (_, orders) = v.app.get(&format!("/api/orders?parent_order_id={pid}"), Some(token)).await;
    let mut out: Vec<(String, i64)> = orders
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["state"].as_str().unwrap().to_owned(), o["quantity"].as_i64().unwrap()))
        .collect();
    out.sort();
    out
}

pub async fn quantities(v: &Venue, token: &str, parent: &Value) -> Value {
    let pid = parent["parent_order_id"].as_str().unwrap();
    let (_, view) = v.app.get(&format!("/api/parent-orders/{pid}"), Some(token)).await;
    view["quantities"].clone()
}

/// Every parent of both traders: the counters add up and equal their child orders.
pub async fn assert_balanced(v: &Venue) {
    assert_balanced_for(v, &[&v.a, &v.b]).await;
}

/// Every parent of each of `tokens`' companies: the counters add up and equal their
/// child orders.
pub async fn assert_balanced_for(v: &Venue, tokens: &[&str]) {
    for token in tokens {
        let (_, parents) = v.app.get("/api/parent-orders?state=ACTIVE,FILLED,CANCELLED", Some(token)).await;
        for parent in parents.as_array().unwrap() {
            let q = &parent["quantities"];
            let (t, w, m) =
                (q["tradable"].as_i64().unwrap(), q["working"].as_i64().unwrap(), q["matched"].as_i64().unwrap());
            assert_eq!(t + w + m, parent["quantity"].as_i64().unwrap(), "{parent}");
            let kids = children(v, token, parent).await;
            let sum = |states: &[&str]| {
                kids.iter().filter(|(s, _)| states.contains(&s.as_str())).map(|(_, q)| q).sum::<i64>()
            };
            assert_eq!(w, sum(&["WORKING", "AWAITING_MATCH", "AWAITING_RFQ_ACCEPTANCE"]), "working of {parent}");
            let matched =
                ["MATCHED", "PARTIAL_BROKER_ACCEPTED", "BROKER_ACCEPTED", "PARTIAL_BROKER_FILLED", "BROKER_FILLED"];
            assert_eq!(m, sum(&matched), "matched of {parent}");
        }
    }
}

pub async fn run_timers(v: &Venue) {
    v.app.running.as_ref().unwrap().run_due_timers().await;
}

/// Prices written as JSON numbers from their exact text (no binary floating point).
pub mod f64_free {
    #[derive(Clone, Copy)]
    pub struct P(pub &'static serde_json::value::RawValue);
    pub fn p(s: &'static str) -> P {
        let raw: Box<serde_json::value::RawValue> = serde_json::value::RawValue::from_string(s.to_owned()).unwrap();
        P(Box::leak(raw))
    }
}
#[allow(unused_imports)]
pub use f64_free::p;
