//! `e2e_inputs DIR EVENTS`: writes the generated inputs of the end-to-end table
//! (`benches::e2e::write_inputs`) into `DIR` and prints `name path` per file
//! (`flink_csv`, `zipf_csv`, `flink_jsonl`).

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(dir), Some(Ok(events)), 2) = (
        args.first().map(PathBuf::from),
        args.get(1).map(|n| n.replace('_', "").parse::<usize>()),
        args.len(),
    ) else {
        eprintln!("usage: e2e_inputs DIR EVENTS");
        return ExitCode::from(2);
    };
    match benches::e2e::write_inputs(&dir, events) {
        Ok(inputs) => {
            println!("flink_csv {}", inputs.flink_csv.display());
            println!("zipf_csv {}", inputs.zipf_csv.display());
            println!("flink_jsonl {}", inputs.flink_jsonl.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("e2e_inputs: {}: {e}", dir.display());
            ExitCode::FAILURE
        }
    }
}
