#![allow(clippy::unwrap_used)]
//! The engine's features and the one order they depend on each other in (ADR 0032),
//! checked on the source: a feature on its own service names no later feature, nor the
//! `Engine` facade; the shared core names no feature; and no type grows past its bound
//! of methods. The web app's features are held to the same rule by its layering lint.

use std::collections::BTreeMap;
use std::path::Path;

/// The shared core: every feature may use it, it uses none of them.
const CORE: &[&str] = &[
    "core",
    "book",
    "calendars",
    "cache",
    "clock",
    "context",
    "error",
    "events",
    "fanout",
    "keyed",
    "ports",
    "presence",
    "ratelimit",
    "reports",
    "security",
];

/// The features, each after every feature it calls: (module, its service type).
const FEATURES: &[(&str, &str)] = &[
    ("accounts", "Accounts"),
    ("users", "Users"),
    ("counterparties", "Counterparties"),
    ("notifications", "Notifications"),
    ("orders", "Orders"),
    ("confirmations", "Confirmations"),
    ("allocations", "Allocations"),
    ("matches", "Matches"),
    ("rfqs", "Rfqs"),
    ("reference", "Reference"),
    ("exchanges", "Exchanges"),
    ("withdrawals", "Withdrawals"),
    ("kill_switch", "KillSwitch"),
    ("disconnects", "Disconnects"),
    ("fix", "Fix"),
    ("newsletters", "Newsletters"),
    ("admin_orders", "AdminOrders"),
    ("action_logs", "ActionLogs"),
    ("scorecards", "Scorecards"),
    ("scheduler", "Scheduler"),
];

/// Methods one type may have (the "about 30").
const MOST_METHODS: usize = 30;

/// Every source file of the engine, a module's folder (`model/`) included.
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() { out.extend(files(&path)) } else { out.push(path) }
    }
    out
}

/// A module's code (its file, or every file of its folder), comments left out: they may
/// name anything.
fn source(module: &str) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let file = src.join(format!("{module}.rs"));
    let paths = if file.exists() { vec![file] } else { files(&src.join(module)) };
    assert!(!paths.is_empty(), "no source for {module}");
    let text: String = paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect::<Vec<_>>()
        .join("\n");
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

fn names_word(code: &str, word: &str) -> bool {
    code.match_indices(word).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + word.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !part(before) && !part(after)
    })
}

/// Whether `code` reaches `module`: a path into it, or its service type.
fn reaches(code: &str, module: &str, service: &str) -> bool {
    code.contains(&format!("crate::{module}::"))
        || code.contains(&format!("crate::{module};"))
        || code.contains(&format!("crate::{{{module}"))
        || names_type(code, service)
}

/// `name` as a service type: `Orders<S>`, or a field of a `service!` declaration
/// (`orders: Orders`); not an enum variant sharing the name (`Write::Orders`).
fn names_type(code: &str, name: &str) -> bool {
    code.match_indices(name).any(|(i, _)| {
        let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        let after = code[i + name.len()..].chars().next();
        !part(code[..i].chars().next_back()) && !part(after) && (after == Some('<') || code[..i].ends_with(": "))
    })
}

#[test]
fn every_module_of_the_engine_is_in_the_core_or_a_feature() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let listed: Vec<&str> = CORE.iter().copied().chain(FEATURES.iter().map(|f| f.0)).chain(["lib", "model"]).collect();
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let module = name.trim_end_matches(".rs");
        assert!(listed.contains(&module), "{name}: say in tests/layering.rs whether it is the core or which feature");
    }
}

#[test]
fn a_feature_reaches_no_later_feature_nor_the_engine() {
    let mut broken = Vec::new();
    for (i, (module, service)) in FEATURES.iter().enumerate() {
        let code = source(module);
        if names_word(&code, "Engine") {
            broken.push(format!("{module} ({service}) names Engine"));
        }
        for (later, later_service) in &FEATURES[i + 1..] {
            if reaches(&code, later, later_service) {
                broken.push(format!("{module} reaches {later}, which comes after it"));
            }
        }
    }
    assert!(broken.is_empty(), "{broken:#?}");
}

#[test]
fn the_core_reaches_no_feature() {
    let mut broken = Vec::new();
    for module in CORE.iter().chain(&["model"]) {
        let code = source(module);
        for (feature, service) in FEATURES {
            if reaches(&code, feature, service) {
                broken.push(format!("{module} (core) reaches {feature}"));
            }
        }
    }
    assert!(broken.is_empty(), "{broken:#?}");
}

/// `<S: Store> Engine<S> {` without the leading generic parameters.
fn without_generics(rest: &str) -> &str {
    if !rest.starts_with('<') {
        return rest;
    }
    let mut depth = 0;
    for (i, c) in rest.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            return &rest[i + 1..];
        }
    }
    rest
}

/// Methods per type over every `impl Type` block (not trait impls) of the engine.
fn methods_per_type() -> BTreeMap<String, usize> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut count = BTreeMap::new();
    for path in files(&dir) {
        let text = std::fs::read_to_string(path).unwrap();
        let mut current: Option<String> = None;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("impl") {
                current = None;
                let head = without_generics(rest).trim();
                if line.ends_with('{') && !head.contains(" for ") {
                    let name: String = head.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    current = Some(name);
                }
            } else if line.starts_with('}') {
                current = None;
            } else if let Some(name) = &current {
                let l = line.trim_start();
                let indent = line.len() - l.len();
                let l = l.trim_start_matches("pub(crate) ").trim_start_matches("pub ").trim_start_matches("async ");
                if indent == 4 && l.starts_with("fn ") {
                    *count.entry(name.clone()).or_insert(0) += 1;
                }
            }
        }
    }
    count
}

#[test]
fn no_type_has_more_than_about_thirty_methods() {
    let count = methods_per_type();
    eprintln!("methods per type: {count:?}");
    let over: Vec<_> = count.iter().filter(|(_, n)| **n > MOST_METHODS).collect();
    assert!(over.is_empty(), "split these by feature: {over:?}");
}
