//! {{NAME}}: a koikoi/1 bot. It reads one JSON message per line on stdin and answers requests on stdout.

mod json;

use json::Value;
use std::collections::HashSet;
use std::io::{self, BufRead, Write};

/// A decision to make: answer with one of `legal`, echoing `id`.
struct Request {
    id: i64,
    decision: String,
    field: Vec<String>,
    legal: Vec<Value>,
}

impl Request {
    fn from(m: &Value) -> Option<Request> {
        let view = m.get("view")?;
        Some(Request {
            id: m.get("id")?.as_i64()?,
            decision: m.get("decision")?.as_str()?.to_string(),
            field: view.get("field")?.as_array()?.iter().filter_map(|c| c.as_str().map(String::from)).collect(),
            legal: m.get("legal")?.as_array()?.to_vec(),
        })
    }
}

/// Debug output goes to stderr: the referee keeps it in a log file (stdout is for protocol lines only).
macro_rules! log {
    ($($arg:tt)*) => { eprintln!("[{{NAME}}] {}", format!($($arg)*)) };
}

fn month(card: &str) -> &str {
    card.split('-').next().unwrap_or(card)
}

/// The strategy: stop at the first yaku, else play a card that takes something from the field.
fn choose(r: &Request) -> Value {
    if r.decision == "koikoi" {
        if let Some(a) = r.legal.iter().find(|a| a.get("koikoi") == Some(&Value::Bool(false))) {
            return a.clone();
        }
    }
    let on_field: HashSet<&str> = r.field.iter().map(|c| month(c)).collect();
    r.legal
        .iter()
        .find(|a| {
            a.get("capture").is_some()
                || a.get("play").and_then(Value::as_str).map_or(false, |p| on_field.contains(month(p)))
        })
        .unwrap_or(&r.legal[0])
        .clone()
}

fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let m = match json::parse(&line) {
            Ok(m) => m,
            Err(e) => {
                log!("bad line: {e}");
                std::process::exit(1);
            }
        };
        let answer = match m.get("type").and_then(Value::as_str) {
            Some("hello") => {
                log!("seat {}", m.get("seat").and_then(Value::as_i64).unwrap_or(0));
                Some(r#"{"type":"hello","name":"{{NAME}}","version":"0.1","protocol":"koikoi/1"}"#.to_string())
            }
            Some("new_match") => {
                log!("new match");
                None
            }
            Some("request") => Request::from(&m)
                .map(|r| format!(r#"{{"type":"action","id":{},"action":{}}}"#, r.id, choose(&r).to_json())),
            Some("error") => {
                log!("referee: {}", m.get("message").and_then(Value::as_str).unwrap_or(""));
                None
            }
            Some("bye") => break,
            _ => None,
        };
        if let Some(a) = answer {
            writeln!(out, "{a}").expect("stdout");
            out.flush().expect("stdout"); // an answer left in a buffer never reaches the referee
        }
    }
}
