//! Project automation behind `cargo xtask` (the alias lives in `.cargo/config.toml`).
//!
//! One module per subcommand: [`conformance`] runs the case files that hold the outputs real
//! Flink and Spark produced, [`bench`] runs the criterion benchmarks and prints their table and
//! the end-to-end table, [`compare`] runs `windowctl` with each sliding-window strategy on the
//! real data, [`fuzz`] runs the cargo-fuzz targets of `fuzz/`. The library form exists so that the test suite runs the same conformance harness
//! (`xtask/tests/conformance.rs`).

pub mod bench;
pub mod compare;
pub mod conformance;
pub mod fuzz;
