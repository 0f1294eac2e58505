//! The progress bar over an input's bytes: drawn by the single-threaded runtime's loop between
//! batches, or by a [`Ticker`] thread of its own for the timely runtime (`--workers`), whose
//! worker threads are not ours to interrupt. Shown only when stderr is a terminal and
//! `--no-progress` is not given; indicatif draws it.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A progress bar kept up to date by a thread of its own, for a runtime whose loop is not ours
/// to tick (the timely runtime of `--workers`): every [`Ticker::PERIOD`] it sets the bar to
/// what `position` reads (bytes of the input read so far). Dropping it stops the thread and
/// clears the bar.
pub(crate) struct Ticker {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    bar: indicatif::ProgressBar,
}

impl Ticker {
    /// How often the bar is updated.
    pub(crate) const PERIOD: Duration = Duration::from_millis(100);

    /// Shows `bar`, moved to `position()` every [`Ticker::PERIOD`] until dropped.
    pub(crate) fn start(
        bar: indicatif::ProgressBar,
        position: impl Fn() -> u64 + Send + 'static,
    ) -> Ticker {
        let done = Arc::new(AtomicBool::new(false));
        let (stop, shown) = (Arc::clone(&done), bar.clone());
        let thread = std::thread::Builder::new()
            .name("windowctl-progress".to_owned())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    shown.set_position(position());
                    std::thread::park_timeout(Ticker::PERIOD);
                }
            })
            .ok();
        Ticker { done, thread, bar }
    }

    /// A ticker for the bytes the inputs' `progress` handles count, of their total size where
    /// every one's is known, when a bar is wanted (not `--no-progress`, stderr a terminal);
    /// `None` otherwise.
    pub(crate) fn for_inputs(
        no_progress: bool,
        progress: Vec<engine::io::Progress>,
    ) -> Option<Ticker> {
        wanted(no_progress).then(|| {
            let total = progress.iter().map(engine::io::Progress::total_bytes).sum();
            let bar = bar(total);
            Ticker::start(bar, move || progress.iter().map(|p| p.bytes_read()).sum())
        })
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
        self.bar.finish_and_clear();
    }
}

impl std::fmt::Debug for Ticker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ticker")
            .field("position", &self.bar.position())
            .finish()
    }
}

/// Whether a progress bar is shown: not with `--no-progress`, and only when stderr is a
/// terminal (a bar in a log file is noise).
pub(crate) fn wanted(no_progress: bool) -> bool {
    !no_progress && std::io::stderr().is_terminal()
}

/// The progress bar over the inputs' bytes (a spinner when their size is unknown).
pub(crate) fn bar(total: Option<u64>) -> indicatif::ProgressBar {
    let pb = match total {
        Some(t) => indicatif::ProgressBar::new(t),
        None => indicatif::ProgressBar::new_spinner(),
    };
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {bytes}/{total_bytes} {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    pb
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU64;

    use super::*;

    #[test]
    fn the_ticker_follows_the_position_and_stops_when_dropped() {
        let read = Arc::new(AtomicU64::new(0));
        let bar = indicatif::ProgressBar::hidden();
        let seen = Arc::clone(&read);
        let ticker = Ticker::start(bar.clone(), move || seen.load(Ordering::Relaxed));
        read.store(4096, Ordering::Relaxed);
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while bar.position() != 4096 && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(bar.position(), 4096);
        drop(ticker);
        assert!(bar.is_finished());
        // The thread is gone: the bar no longer follows.
        read.store(8192, Ordering::Relaxed);
        std::thread::sleep(Ticker::PERIOD * 3);
        assert_eq!(bar.position(), 4096);
    }
}
