//! The benchmark table: every workload × strategy, with a counting allocator for peak state
//! memory. `cargo bench -p benches --bench table -- [--quick|--smoke] [--json FILE] [FILTER]`;
//! `cargo xtask bench` runs it after the criterion benches and adds host and git revision.

use std::process::ExitCode;

use benches::table::{run, Mode, Plan};
use peak_alloc::PeakAlloc;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

fn main() -> ExitCode {
    let mut mode = Mode::Full;
    let mut json = None;
    let mut filter = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => mode = Mode::Quick,
            "--smoke" => mode = Mode::Smoke,
            "--json" => json = args.next(),
            "--bench" => {} // cargo bench passes this to every harness = false target
            s if s.starts_with("--") => {
                eprintln!("table: unknown option {s}");
                return ExitCode::from(2);
            }
            s => filter = Some(s.to_owned()),
        }
    }
    let mut plan = Plan::new(mode);
    plan.filter = filter;
    let table = match run(&plan, &ALLOCATOR, |r| {
        eprintln!(
            "  {:<40} {:<10} {:>10} events {:>8.3} s",
            r.workload, r.strategy, r.events, r.seconds
        );
    }) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("table: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("\n{}", table.to_markdown());
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&table).expect("serializable table");
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("table: cannot write {path}: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
