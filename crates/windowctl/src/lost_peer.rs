//! A process of a cluster (`--processes`) whose peer dies (`kill -9`, a crash, a broken
//! network) mid-run. timely 0.32 has no error for it: its network threads panic ("timely
//! communication error: reading data: socket closed" on `timely:recv-P`, a write error on
//! `timely:send-P`, `P` the peer's process index), then every worker ("MergeQueue poisoned.")
//! and the main thread joining them ("Send thread panic"). [`install`] puts a panic hook in
//! place for the cluster's run that turns the first of these panics into one error line naming
//! the peer and exit 1, instead of a panic message and backtrace per thread. Any other panic
//! keeps the default hook.

use std::sync::atomic::{AtomicBool, Ordering};

/// The exit code of a process that lost a peer (as any failed job).
const LOST_EXIT: i32 = 1;

/// Whether a lost peer was reported already (the other threads' panics then wait for the
/// exit).
static REPORTED: AtomicBool = AtomicBool::new(false);

/// Installs the panic hook of a cluster's process `me` whose processes listen on `addresses`
/// (the hostfile's, by index). Call it once the cluster is checked, before the job runs.
pub(crate) fn install(addresses: Vec<String>, me: usize) {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("");
        let thread = std::thread::current();
        let Some(line) = lost_peer(thread.name().unwrap_or(""), message, &addresses, me) else {
            default(info);
            return;
        };
        if REPORTED.swap(true, Ordering::SeqCst) {
            // Another thread reports it and ends the process: wait for that.
            loop {
                std::thread::park();
            }
        }
        eprintln!("windowctl: error: {line}");
        std::process::exit(LOST_EXIT);
    }));
}

/// The error line for a panic with `message` on the thread named `thread`, if it is timely's
/// network failing: the lost peer named by its index and its hostfile address when the thread
/// says which (`timely:recv-P`, `timely:send-P`); `None` for any other panic.
pub(crate) fn lost_peer(
    thread: &str,
    message: &str,
    addresses: &[String],
    me: usize,
) -> Option<String> {
    let network = message.starts_with("timely communication error:");
    let after = message == "MergeQueue poisoned."
        || message.starts_with("Send thread panic")
        || message.starts_with("Recv thread panic");
    if !network && !after {
        return None;
    }
    let peer = thread
        .strip_prefix("timely:recv-")
        .or_else(|| thread.strip_prefix("timely:send-"))
        .and_then(|p| p.parse::<usize>().ok())
        .filter(|_| network);
    let whom = match peer {
        Some(p) => match addresses.get(p) {
            Some(address) => format!("process {p} ({address})"),
            None => format!("process {p}"),
        },
        None => "another process of the cluster".to_owned(),
    };
    let why = if network {
        message
    } else {
        "its connection failed"
    };
    let output = if me == 0 {
        "its output is incomplete, maybe cut within a row"
    } else {
        "process 0's output is incomplete"
    };
    Some(format!(
        "process {me} lost the connection to {whom}: {why}; that process died or the network \
         between them failed, and the job cannot go on without it ({output}); start every \
         process again"
    ))
}

#[cfg(test)]
mod tests {
    use super::lost_peer;

    #[test]
    fn timely_network_panics_name_the_peer_and_others_are_left_alone() {
        let hosts = ["127.0.0.1:7000".to_owned(), "127.0.0.1:7001".to_owned()];
        let line = lost_peer(
            "timely:recv-1",
            "timely communication error: reading data: socket closed",
            &hosts,
            0,
        )
        .expect("a lost peer");
        assert!(
            line.starts_with(
                "process 0 lost the connection to process 1 (127.0.0.1:7001): timely \
                 communication error: reading data: socket closed;"
            ),
            "{line}"
        );
        let line =
            lost_peer("timely:work-0", "MergeQueue poisoned.", &hosts, 1).expect("a lost peer");
        assert!(
            line.contains("to another process of the cluster: its connection failed")
                && line.contains("process 0's output is incomplete"),
            "{line}"
        );
        assert_eq!(lost_peer("main", "index out of bounds", &hosts, 0), None);
        assert_eq!(
            lost_peer(
                "timely:recv-1",
                "Clean shutdown followed by data.",
                &hosts,
                0
            ),
            None
        );
    }
}
