//! The connections between the processes of a cluster, made by this crate rather than by
//! timely's `create_sockets`, which trusts any connection (it reads a process index from it and
//! indexes a vector with it: a stray connection panics the process or replaces a peer).
//!
//! The layout is timely's: process `i` listens on its own hostfile address only (never on all
//! interfaces unless the hostfile says so) and is connected to by every process `j > i`; it
//! connects to every process `j < i`. On each connection both sides send a [`Hello`] (a magic, a
//! protocol version, the job's fingerprint, the process count and the sender's index) and check
//! the other's: anything unexpected (another program, another job, an index out of range or
//! already connected) fails the process with an error naming the remote address and what was
//! wrong, before any data of the job flows. There is no authentication or encryption: run a
//! cluster on loopback or a trusted network only (`docs/scale-out.md`).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// The first bytes of a hello: "window-timely", version 1 of the framing.
const MAGIC: [u8; 8] = *b"wndtmly\x01";

/// The protocol version: bumped when the dataflow's messages change shape.
pub const PROTOCOL_VERSION: u32 = 1;

/// How long a process waits for its peers by default (connecting and being connected to).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a connection may take to send its hello once accepted.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// The bytes of a hello: magic, version, fingerprint, processes, index.
const HELLO_BYTES: usize = 8 + 4 + 8 + 4 + 4;

/// How a process of a cluster finds its peers and proves it runs the same job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// This process's index, from 0 (process 0 writes the output).
    pub process: usize,
    /// Every process's `host:port`, by index (the hostfile's lines).
    pub addresses: Vec<String>,
    /// A hash of what must be the same in every process (the job, the workers per process, the
    /// process count, the chunk size): a peer with another one is refused.
    pub fingerprint: u64,
    /// How long to wait for the peers (connecting, and being connected to) before failing.
    pub connect_timeout: Duration,
}

/// What each side of a connection says first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Hello {
    version: u32,
    fingerprint: u64,
    processes: u32,
    process: u32,
}

impl Hello {
    fn encode(self) -> [u8; HELLO_BYTES] {
        let mut b = [0u8; HELLO_BYTES];
        b[..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&self.version.to_le_bytes());
        b[12..20].copy_from_slice(&self.fingerprint.to_le_bytes());
        b[20..24].copy_from_slice(&self.processes.to_le_bytes());
        b[24..28].copy_from_slice(&self.process.to_le_bytes());
        b
    }

    /// Reads a hello from `stream`; the error says what was wrong (not the address).
    fn read(stream: &mut TcpStream) -> Result<Hello, String> {
        let mut b = [0u8; HELLO_BYTES];
        let mut got = 0;
        while got < HELLO_BYTES {
            match stream.read(&mut b[got..]) {
                Ok(0) => {
                    return Err(format!(
                        "the connection closed after {got} bytes, before a whole hello \
                         ({HELLO_BYTES} bytes)"
                    ))
                }
                Ok(n) => {
                    got += n;
                    // Refused at its first wrong byte: a stray client need not send 28 bytes.
                    let k = got.min(MAGIC.len());
                    if b[..k] != MAGIC[..k] {
                        return Err("it is not a window-timely process (its first bytes are \
                                    not the hello's magic)"
                            .into());
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(format!(
                        "no hello within {} s (got {got} of {HELLO_BYTES} bytes)",
                        HELLO_TIMEOUT.as_secs()
                    ))
                }
                Err(e) => return Err(format!("reading its hello: {e}")),
            }
        }
        if b[..8] != MAGIC {
            return Err(
                "it is not a window-timely process (its first bytes are not the hello's magic)"
                    .into(),
            );
        }
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let mut f = [0u8; 8];
        f.copy_from_slice(&b[12..20]);
        Ok(Hello {
            version: u32_at(8),
            fingerprint: u64::from_le_bytes(f),
            processes: u32_at(20),
            process: u32_at(24),
        })
    }

    /// Checks a peer's hello against ours: the error says what differs.
    fn check(self, ours: Hello) -> Result<(), String> {
        if self.version != ours.version {
            return Err(format!(
                "it speaks protocol version {}, this process {} (run the same windowctl \
                 everywhere)",
                self.version, ours.version
            ));
        }
        if self.processes != ours.processes {
            return Err(format!(
                "it was started with --processes {}, this process with {}",
                self.processes, ours.processes
            ));
        }
        if self.fingerprint != ours.fingerprint {
            return Err(format!(
                "it runs another job (fingerprint {:016x}, here {:016x}): start every process \
                 with the same job, input format, --workers and --processes",
                self.fingerprint, ours.fingerprint
            ));
        }
        Ok(())
    }
}

/// Why the cluster could not be connected.
fn refused(addr: Option<SocketAddr>, what: &str) -> String {
    match addr {
        Some(a) => format!("connection from {a}: {what}"),
        None => what.to_string(),
    }
}

/// Connects this process to every other one of `cluster`, in timely's layout: the result holds
/// a stream for each other process, by index, and `None` at this process's index (what
/// `initialize_networking_from_sockets` takes).
///
/// # Errors
/// The own address cannot be bound; a peer cannot be reached or does not connect within
/// [`Cluster::connect_timeout`]; a connection's hello is not a peer's of the same job (the
/// message names the remote address and what was wrong).
pub fn connect(cluster: &Cluster) -> Result<Vec<Option<TcpStream>>, String> {
    let n = cluster.addresses.len();
    let me = cluster.process;
    if me >= n {
        return Err(format!("process {me} of {n}: no such process"));
    }
    let ours = Hello {
        version: PROTOCOL_VERSION,
        fingerprint: cluster.fingerprint,
        processes: u32::try_from(n).map_err(|_| "too many processes".to_string())?,
        process: u32::try_from(me).map_err(|_| "too many processes".to_string())?,
    };
    let deadline = Instant::now() + cluster.connect_timeout;
    // Bound before connecting anywhere, so that higher processes find it as soon as possible.
    let listener = if me + 1 < n {
        let own = &cluster.addresses[me];
        let l = TcpListener::bind(own.as_str())
            .map_err(|e| format!("listening on {own} (line {} of the hostfile): {e}", me + 1))?;
        l.set_nonblocking(true)
            .map_err(|e| format!("listening on {own}: {e}"))?;
        Some(l)
    } else {
        None
    };
    let (lower, higher) = std::thread::scope(|s| {
        let lower = s.spawn(|| connect_lower(cluster, ours, deadline));
        let higher = match &listener {
            Some(l) => accept_higher(l, cluster, ours, deadline),
            None => Ok(Vec::new()),
        };
        let lower = lower
            .join()
            .unwrap_or_else(|_| Err("the connecting thread panicked".into()));
        (lower, higher)
    });
    let mut sockets = lower?;
    sockets.push(None);
    sockets.extend(higher?.into_iter().map(Some));
    Ok(sockets)
}

/// Connects to every process below this one, retrying until the deadline.
fn connect_lower(
    cluster: &Cluster,
    ours: Hello,
    deadline: Instant,
) -> Result<Vec<Option<TcpStream>>, String> {
    let mut out = Vec::with_capacity(cluster.process);
    for (index, address) in cluster.addresses.iter().enumerate().take(cluster.process) {
        let mut stream = connect_retrying(address, index, cluster.connect_timeout, deadline)?;
        let at = stream.peer_addr().ok();
        let fail = |what: String| {
            format!(
                "connection to process {index} at {}: {what}",
                at.map_or_else(|| address.clone(), |a| a.to_string())
            )
        };
        stream
            .write_all(&ours.encode())
            .map_err(|e| fail(format!("sending the hello: {e}")))?;
        stream
            .set_read_timeout(Some(HELLO_TIMEOUT.max(remaining(deadline))))
            .map_err(|e| fail(e.to_string()))?;
        let theirs = Hello::read(&mut stream).map_err(fail)?;
        theirs.check(ours).map_err(fail)?;
        if theirs.process as usize != index {
            return Err(fail(format!(
                "it says it is process {}, the hostfile's line {} is process {index}",
                theirs.process,
                index + 1
            )));
        }
        stream
            .set_read_timeout(None)
            .map_err(|e| fail(e.to_string()))?;
        stream.set_nodelay(true).map_err(|e| fail(e.to_string()))?;
        out.push(Some(stream));
    }
    Ok(out)
}

/// The time left until `deadline` (at least 1 ms).
fn remaining(deadline: Instant) -> Duration {
    deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1))
}

/// A connection to `address`, tried every 100 ms until the deadline.
fn connect_retrying(
    address: &str,
    index: usize,
    timeout: Duration,
    deadline: Instant,
) -> Result<TcpStream, String> {
    let mut last = String::new();
    loop {
        let addrs: Vec<SocketAddr> = match address.to_socket_addrs() {
            Ok(a) => a.collect(),
            Err(e) => {
                return Err(format!(
                    "process {index} at {address} (line {} of the hostfile): {e}",
                    index + 1
                ))
            }
        };
        for a in &addrs {
            match TcpStream::connect_timeout(a, remaining(deadline).min(Duration::from_secs(5))) {
                Ok(s) => return Ok(s),
                Err(e) => last = e.to_string(),
            }
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "process {index} at {address} did not answer within {} s ({last}); start every \
                 process of the cluster",
                timeout.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Accepts a connection from every process above this one until the deadline, checking each
/// one's hello and answering with ours.
fn accept_higher(
    listener: &TcpListener,
    cluster: &Cluster,
    ours: Hello,
    deadline: Instant,
) -> Result<Vec<TcpStream>, String> {
    let me = cluster.process;
    let n = cluster.addresses.len();
    let mut got: Vec<Option<TcpStream>> = (me + 1..n).map(|_| None).collect();
    while got.iter().any(Option::is_none) {
        let (mut stream, addr) = match listener.accept() {
            Ok(s) => s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    let missing: Vec<String> = got
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| s.is_none())
                        .map(|(i, _)| (me + 1 + i).to_string())
                        .collect();
                    return Err(format!(
                        "process {} did not connect to {} within {} s; start every process of \
                         the cluster",
                        missing.join(", "),
                        cluster.addresses[me],
                        cluster.connect_timeout.as_secs()
                    ));
                }
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("accepting on {}: {e}", cluster.addresses[me])),
        };
        let fail = |what: String| refused(Some(addr), &what);
        stream
            .set_nonblocking(false)
            .map_err(|e| fail(e.to_string()))?;
        stream
            .set_read_timeout(Some(HELLO_TIMEOUT))
            .map_err(|e| fail(e.to_string()))?;
        let theirs = Hello::read(&mut stream).map_err(fail)?;
        theirs.check(ours).map_err(fail)?;
        let index = theirs.process as usize;
        if index <= me || index >= n {
            return Err(fail(format!(
                "it says it is process {index}, but only processes {} to {} connect to \
                 process {me}",
                me + 1,
                n - 1
            )));
        }
        let slot = &mut got[index - me - 1];
        if slot.is_some() {
            return Err(fail(format!(
                "process {index} is connected already (two processes started with --process \
                 {index}?)"
            )));
        }
        stream
            .write_all(&ours.encode())
            .map_err(|e| fail(format!("sending the hello: {e}")))?;
        stream
            .set_read_timeout(None)
            .map_err(|e| fail(e.to_string()))?;
        stream.set_nodelay(true).map_err(|e| fail(e.to_string()))?;
        *slot = Some(stream);
    }
    Ok(got.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free_port() -> String {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").to_string()
    }

    fn cluster(process: usize, addresses: &[String], fingerprint: u64) -> Cluster {
        Cluster {
            process,
            addresses: addresses.to_vec(),
            fingerprint,
            connect_timeout: Duration::from_secs(20),
        }
    }

    #[test]
    fn three_processes_connect_in_timelys_layout() {
        let addrs: Vec<String> = (0..3).map(|_| free_port()).collect();
        let joined: Vec<_> = (0..3)
            .map(|p| {
                let c = cluster(p, &addrs, 7);
                std::thread::spawn(move || connect(&c))
            })
            .collect();
        for (p, j) in joined.into_iter().enumerate() {
            let sockets = j.join().expect("thread").expect("connects");
            assert_eq!(sockets.len(), 3);
            for (i, s) in sockets.iter().enumerate() {
                assert_eq!(s.is_none(), i == p, "process {p}, socket {i}");
            }
        }
    }

    #[test]
    fn garbage_and_another_job_are_refused_naming_the_address() {
        let addrs = vec![free_port(), free_port()];
        let c = cluster(0, &addrs, 7);
        let listening = std::thread::spawn(move || connect(&c));
        let mut stray = connect_retrying(&addrs[0], 0, Duration::from_secs(20), {
            Instant::now() + Duration::from_secs(20)
        })
        .expect("stray connects");
        let local = stray.local_addr().expect("addr");
        stray.write_all(b"GET / HTTP/1.1\r\n\r\n").expect("write");
        let err = listening.join().expect("thread").expect_err("refused");
        assert!(err.contains(&local.to_string()), "{err}");
        assert!(err.contains("not a window-timely process"), "{err}");

        let addrs = vec![free_port(), free_port()];
        let c = cluster(0, &addrs, 7);
        let listening = std::thread::spawn(move || connect(&c));
        let other = cluster(1, &addrs, 8);
        let err_peer = connect(&other).expect_err("the peer sees the refusal too");
        let err = listening.join().expect("thread").expect_err("refused");
        assert!(err.contains("runs another job"), "{err}");
        assert!(err_peer.contains("process 0"), "{err_peer}");
    }

    #[test]
    fn an_index_out_of_range_is_refused() {
        let addrs = vec![free_port(), free_port()];
        let c = cluster(0, &addrs, 7);
        let listening = std::thread::spawn(move || connect(&c));
        let mut s = connect_retrying(&addrs[0], 0, Duration::from_secs(20), {
            Instant::now() + Duration::from_secs(20)
        })
        .expect("connects");
        let hello = Hello {
            version: PROTOCOL_VERSION,
            fingerprint: 7,
            processes: 2,
            process: 5,
        };
        s.write_all(&hello.encode()).expect("write");
        let err = listening.join().expect("thread").expect_err("refused");
        assert!(err.contains("it says it is process 5"), "{err}");
    }
}
