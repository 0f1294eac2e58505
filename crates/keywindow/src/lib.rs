//! Key windows for dense sliding windows over sparse keys (planned, issue 4).
//!
//! A sliding window of size `p` and slide `k` puts every element into `p / k` windows. When a key
//! is sparse (fewer than one element per window), almost all of those windows hold that single
//! element, and a conventional operator materialises them all. The key-window scheme of the
//! paper in `docs/keywindow.md` keeps per key only windows *created by its data*: a right key
//! window that opens at an element, and a left key window that inherits the right one's state by
//! `merge`; results are the same as the native operator's on change, at a cost of two windows per
//! element. This crate will hold that mechanism; it holds no code yet.
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
