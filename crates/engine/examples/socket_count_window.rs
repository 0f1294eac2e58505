//! The seed's socket job (`../shared/seeds`, Flink's triggers article): text from a TCP socket,
//! as Flink's `socketTextStream("localhost", 7777)`, keyed, in global windows with a purging
//! count trigger of 15 (`GlobalWindows.create()` + `PurgingTrigger.of(CountTrigger.of(15))`):
//! every 15 elements of a key, their sum, then the window starts empty again.
//!
//! Lines are `key,value`. Run it against a server of your own (`nc -lk 7777`, then type lines):
//!
//! ```text
//! cargo run -p engine --example socket_count_window -- localhost:7777
//! ```
//!
//! Without an address it starts a server of its own on a free local port that sends 40 lines
//! (keys `a` and `b`) and closes, and prints what the job computed.

use std::io::Write;
use std::net::TcpListener;

use engine::assigners::GlobalWindows;
use engine::core::GlobalWindow;
use engine::core::{MapAggregate, NumericAggregate};
use engine::stream::{Collected, DataStream};
use engine::triggers::{CountTrigger, PurgingTrigger};

type Sums = Collected<String, GlobalWindow, (String, f64), Option<f64>>;

/// `key,value` as a pair; lines that are not are dropped.
fn parse(line: String) -> Option<(String, f64)> {
    let (key, value) = line.split_once(',')?;
    Some((key.trim().to_owned(), value.trim().parse().ok()?))
}

/// The job: sum per key of every 15 elements.
fn sums_per_15(address: &str) -> Result<Sums, Box<dyn std::error::Error>> {
    let results = DataStream::socket_text_stream(address)?
        .filter_map(parse)
        .key_by(|(key, _): &(String, f64)| key.clone())
        .window(GlobalWindows::create())
        .trigger(PurgingTrigger::of(CountTrigger::of(15)?))
        .aggregate(MapAggregate::new(
            |(_, v): &(String, f64)| *v,
            NumericAggregate::Sum,
        ))?
        .collect()?;
    Ok(results)
}

/// A server on a free local port that sends `lines` to its first client, then closes.
fn serve(lines: Vec<String>) -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let address = listener.local_addr()?.to_string();
    std::thread::spawn(move || {
        if let Ok((mut client, _)) = listener.accept() {
            for line in lines {
                let _ = writeln!(client, "{line}");
            }
        }
    });
    Ok(address)
}

/// 40 lines: `a,1` .. `a,30` and `b,1` .. `b,10`, interleaved, and one that is not a pair.
fn demo_lines() -> Vec<String> {
    let mut lines: Vec<String> = (1..=30).map(|v| format!("a,{v}")).collect();
    for (i, v) in (1..=10).enumerate() {
        lines.insert(3 * i, format!("b,{v}"));
    }
    lines.insert(5, "not a pair".to_owned());
    lines
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let address = match std::env::args().nth(1) {
        Some(a) => a,
        None => serve(demo_lines())?,
    };
    let sums = sums_per_15(&address)?;
    for r in &sums.results {
        println!("{}: {:?}", r.key, r.value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_15_elements_of_a_key_give_their_sum_and_leftovers_give_nothing() {
        let sums = sums_per_15(&serve(demo_lines()).unwrap()).unwrap();
        let got: Vec<(&str, Option<f64>)> = sums
            .results
            .iter()
            .map(|r| (r.key.as_str(), r.value))
            .collect();
        // a: 1..=15 then 16..=30 (the purge starts each window empty); b has 10 elements, fewer
        // than 15: nothing, not even at the end of input (Flink's count windows never flush).
        assert_eq!(got, [("a", Some(120.0)), ("a", Some(345.0))]);
        assert_eq!(sums.metrics.elements, 40);
    }
}
