//! The job grammar and job files on arbitrary text: the window, trigger, evictor, aggregate and
//! strategy parsers, a TOML and a JSON job file, and building what parses; errors, never
//! panics.
#![no_main]

use engine::job::{build, EvictorSpec, JobAggregate, JobSpec, Strategy, TriggerSpec, WindowSpec};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // As flags: up to five parts separated by `|`.
    let mut parts = text.splitn(5, '|');
    let window = parts.next().unwrap_or("").parse::<WindowSpec>();
    let trigger = parts.next().map(str::parse::<TriggerSpec>);
    let evictor = parts.next().map(str::parse::<EvictorSpec>);
    let aggregate = parts.next().unwrap_or("sum").parse::<JobAggregate>();
    let strategy = parts.next().map(str::parse::<Strategy>);
    if let (Ok(window), Ok(aggregate)) = (window, aggregate) {
        let mut spec = JobSpec::new(window, aggregate);
        if let Some(Ok(t)) = trigger {
            spec.trigger = t;
        }
        if let Some(Ok(e)) = evictor {
            spec.evictor = Some(e);
        }
        if let Some(Ok(s)) = strategy {
            spec.strategy = s;
        }
        let _ = build::<String>(&spec);
    }
    // As job files.
    if let Ok(spec) = toml::from_str::<JobSpec>(text) {
        let _ = build::<String>(&spec);
    }
    if let Ok(spec) = serde_json::from_str::<JobSpec>(text) {
        let _ = build::<String>(&spec);
    }
});
