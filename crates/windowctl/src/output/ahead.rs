//! Syncing a checkpointed output ahead: a thread that makes the file durable in the background
//! while the job runs, so that a checkpoint's own sync finds little left to write.
//!
//! A checkpoint records an output's length only after `fsync`: what it covers must survive a
//! crash of the machine, not only of the process. Left to the checkpoint, that sync writes out
//! everything written since the last one, on the operator's path (the default job's 86 MB of
//! results took 50-90 ms at its final checkpoint). Here, every [`AHEAD_BYTES`] written, a
//! thread of its own syncs the file while the writer goes on (Linux lets writes proceed during
//! an `fsync` of the same file); the checkpoint's sync then covers at most that much. An error
//! of a background sync is kept and reported by the next checkpoint: an `fsync` error is told
//! once, so it must not be lost.

use std::fs::File;
use std::io;
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

/// Bytes written between two background syncs.
pub(super) const AHEAD_BYTES: u64 = 8 << 20;

/// The background syncer of one output file.
pub(super) struct SyncAhead {
    /// A handle on the file, to read its length.
    file: File,
    /// The length at the last request.
    requested_at: u64,
    tx: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
    error: Arc<Mutex<Option<io::Error>>>,
}

impl SyncAhead {
    /// Starts the syncer of `file` (a handle of its own is cloned).
    ///
    /// # Errors
    /// The handle cannot be cloned or the thread cannot start.
    pub(super) fn start(file: &File) -> io::Result<Self> {
        let own = file.try_clone()?;
        let requested_at = file.metadata()?.len();
        let (tx, rx) = mpsc::sync_channel::<()>(1);
        let error = Arc::new(Mutex::new(None));
        let kept = Arc::clone(&error);
        let thread = std::thread::Builder::new()
            .name("sync-ahead".to_owned())
            .spawn(move || {
                for () in rx {
                    if let Err(e) = own.sync_data() {
                        let mut slot = kept.lock().unwrap_or_else(PoisonError::into_inner);
                        slot.get_or_insert(e);
                    }
                }
            })?;
        Ok(Self {
            file: file.try_clone()?,
            requested_at,
            tx: Some(tx),
            thread: Some(thread),
            error,
        })
    }

    /// After a write: asks for a background sync when [`AHEAD_BYTES`] were written since the
    /// last request (not when one is still running: the next request comes soon enough).
    pub(super) fn wrote(&mut self) {
        let Ok(meta) = self.file.metadata() else {
            return; // the checkpoint's own sync and length read report it
        };
        if meta.len() < self.requested_at + AHEAD_BYTES {
            return;
        }
        if let Some(tx) = &self.tx {
            match tx.try_send(()) {
                Ok(()) => self.requested_at = meta.len(),
                Err(TrySendError::Full(())) | Err(TrySendError::Disconnected(())) => {}
            }
        }
    }

    /// The first error of a background sync, taken out.
    pub(super) fn take_error(&self) -> Option<io::Error> {
        self.error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

impl Drop for SyncAhead {
    fn drop(&mut self) {
        self.tx = None; // ends the thread after its current sync
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
