#![allow(clippy::unwrap_used)]
//! `upstairs backup`: a SQLite copy taken while the venue serves and writes is whole and
//! serves as it was; PostgreSQL is pointed at pg_dump.

mod support;

use reqwest::StatusCode;
use serde_json::json;
use std::sync::Arc;
use support::*;
use upstairs::app;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_copy_taken_while_serving_serves_as_it_was() {
    balanced_after(copy_while_serving()).await
}

async fn company(app: &TestApp, admin: &str, name: String) -> StatusCode {
    let body = json!({"name": name, "full_name": format!("{name} Ltd"), "roles": ["broker"],
                      "trade_confirmation_email": "desk@broker.test", "trade_confirmation_via_email_enabled": true});
    app.post("/api/admin/companies", Some(admin), body).await.0
}

async fn copy_while_serving() {
    let app = Arc::new(TestApp::spawn(Backend::Sqlite).await);
    let admin = app.admin_token().await;
    assert_eq!(company(&app, &admin, "Before".into()).await, StatusCode::CREATED);
    // Writes go on while the copy is taken.
    let writing = {
        let (app, admin) = (app.clone(), admin.clone());
        tokio::spawn(async move {
            for i in 0..30 {
                assert_eq!(company(&app, &admin, format!("During {i}")).await, StatusCode::CREATED);
            }
        })
    };
    let to = app.dir.path().join("copy.db");
    app::backup(&app.database_url, &to).await.unwrap();
    writing.await.unwrap();
    let again = app::backup(&app.database_url, &to).await.unwrap_err().to_string();
    assert!(again.contains("exists already"), "{again}");
    let pg = app::backup("postgres://postgres@127.0.0.1:5432/test", &to).await.unwrap_err().to_string();
    assert!(pg.contains("pg_dump"), "{pg}");

    // The copy serves, with the admin's session and whatever was committed when it was taken.
    let copy_url = format!("sqlite://{}", to.display());
    let copy = app.spawn_node_with(|s| s.database_url = copy_url).await;
    let (s, page) = copy.get("/api/admin/companies?size=100", Some(&admin)).await;
    assert_eq!(s, StatusCode::OK, "{page}");
    let names: Vec<&str> = page["items"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"Before"), "{names:?}");
    let during = names.iter().filter(|n| n.starts_with("During ")).count();
    // A prefix of the writes: During 0 … During k-1, none missing in between.
    for i in 0..during {
        assert!(names.contains(&format!("During {i}").as_str()), "a whole snapshot: {names:?}");
    }
    copy.stop().await;
    Arc::into_inner(app).unwrap().stop().await;
}
