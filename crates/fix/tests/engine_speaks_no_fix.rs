#![allow(clippy::unwrap_used)]
//! The engine writes reports as data and `crates/fix` alone writes FIX (ADR 0030). This
//! test reads every Rust file under `crates/engine/src` and fails on what FIX looks like
//! in Rust:
//!
//! - a name of `crates/fix/src/messages.rs`'s constants (tags such as `SIDE` or
//!   `TRADE_REPORT_ID`, MsgTypes, party roles), read from that file, so a tag added there
//!   is guarded here too;
//! - a `tag::` path or a `mod tag`;
//! - tag=value lists: `(u32, String)` or `(u32, &str)`;
//! - the marks of a frame: `FIX.4`, `8=FIX`, an SOH (`\x01`, `0x01`);
//! - MsgType literals no other code would write: `"AE"`, `"AR"`, and a one-character
//!   literal beside a `msg_type` (`msg_type == "8"` and the like).
//!
//! Names and literals are matched as whole tokens, so `ORDER_ID` does not match inside
//! `PARENT_ORDER_ID`. Comments are skipped: prose may name FIX messages.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The names of the constants `crates/fix` writes FIX with.
fn fix_names() -> Vec<String> {
    let messages = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/messages.rs");
    let text = std::fs::read_to_string(messages).unwrap();
    let names: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub const "))
        .filter_map(|l| l.split(':').next())
        .map(str::to_owned)
        .collect();
    assert!(names.len() > 40, "the tag table was not found in messages.rs: {names:?}");
    names
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether `word` stands in `line` as a token of its own.
fn has_token(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// The lines of `source` that write FIX, as `line: text`.
fn offences(source: &str, names: &[String]) -> Vec<String> {
    let patterns =
        ["tag::", "mod tag", "(u32, String)", "(u32, &str)", "FIX.4", "8=FIX", "\\x01", "0x01", "\"AE\"", "\"AR\""];
    source
        .lines()
        .enumerate()
        .map(|(n, l)| (n + 1, l.split("//").next().unwrap_or_default()))
        .filter(|(_, code)| {
            patterns.iter().any(|p| code.contains(p))
                || names.iter().any(|n| has_token(code, n))
                || (code.contains("msg_type") && code.split('"').skip(1).step_by(2).any(|lit| lit.len() == 1))
        })
        .map(|(n, l)| format!("{n}: {}", l.trim()))
        .collect()
}

#[test]
fn the_engine_writes_no_fix() {
    let names = fix_names();
    let engine = Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/src");
    let mut files = Vec::new();
    rust_files(&engine, &mut files);
    assert!(files.len() > 10, "crates/engine/src was not found at {}", engine.display());
    let found: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let source = std::fs::read_to_string(f).unwrap();
            offences(&source, &names).into_iter().map(move |o| format!("{}:{o}", f.display()))
        })
        .collect();
    assert!(found.is_empty(), "FIX belongs in crates/fix (ADR 0030), found in the engine:\n{}", found.join("\n"));
}

/// The guard sees what the engine used to write, and lets ordinary code through.
#[test]
fn the_guard_catches_fix() {
    let names = fix_names();
    for fix in [
        "pub mod tag {",
        "    pub const SIDE: u32 = 54;",
        "f.push((tag::SIDE, side(d).into()));",
        "fields: Vec<(u32, String)>,",
        "if msg_type == \"8\" {",
        "let t = \"AE\";",
        "let r = ROLE_EXECUTING_FIRM;",
        "frame.split(|b| *b == 0x01)",
    ] {
        assert_eq!(offences(fix, &names).len(), 1, "not caught: {fix}");
    }
    for fine in [
        "let id = p.parent_order_id;",
        "// A TradeCaptureReport (35=AE) goes to the broker.",
        "let side = o.direction;",
        "pub struct TradeReport {",
        "let kind = \"trade\";",
    ] {
        assert!(offences(fine, &names).is_empty(), "caught wrongly: {fine}");
    }
}
