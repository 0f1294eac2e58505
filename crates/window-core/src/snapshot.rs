//! Snapshots of a computation's state, the building block of checkpoints.
//!
//! A stream job survives a crash by writing, now and then, everything its computations hold to
//! a *snapshot*, and after a restart by rebuilding each computation from its configuration and
//! loading the snapshot into it (Flink's checkpointed keyed state and timers, restored through
//! `StateInitializationContext`). A rebuilt computation then gives exactly the output the
//! original would have given on the rest of the input.
//!
//! The contract of [`crate::WindowComputation::snapshot`] and
//! [`crate::WindowComputation::restore`]:
//! - a snapshot is taken between two calls of the computation (never in the middle of one), and
//!   holds the computation's whole state: window contents, trigger states, timers, the
//!   watermark, processing time, the counters;
//! - it does not hold the configuration (assigner, trigger, function, lateness ...): the
//!   restoring side builds the computation from the same configuration and checks that it is the
//!   same one (a checkpoint's job fingerprint does that for `windowctl`); an implementation still
//!   refuses a snapshot whose kind or shape it can see is not its own;
//! - the bytes are an implementation's own encoding (the crates of this workspace use serde with
//!   `postcard`), versioned by the checkpoint that carries them, not by the computation.

use std::fmt;

/// Why a snapshot could not be taken or loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotError {
    /// This computation cannot write its state to a snapshot; the text names it.
    Unsupported(String),
    /// The bytes are not a snapshot this computation can load (torn, of another kind of
    /// computation, or of another configuration); the text says what did not fit. The
    /// computation is unchanged when this is returned.
    Invalid(String),
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotError::Unsupported(what) => {
                write!(f, "{what} cannot write its state to a checkpoint")
            }
            SnapshotError::Invalid(why) => write!(f, "not a snapshot of this computation: {why}"),
        }
    }
}

impl std::error::Error for SnapshotError {}
