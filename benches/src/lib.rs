//! Benchmarks of the windowing engine (criterion); run through `cargo xtask bench`.
