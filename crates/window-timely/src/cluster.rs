//! The connections between the processes of a cluster, made by this crate rather than by
//! timely's `create_sockets`, which trusts any connection (it reads a process index from it and
//! indexes a vector with it: a stray connection panics the process or replaces a peer).
//!
//! The layout is timely's: process `i` listens on its own hostfile address only (never on all
//! interfaces unless the hostfile says so) and is connected to by every process `j > i`; it
//! connects to every process `j < i`. On each connection both sides send a `Hello` (a magic, a
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

/// The protocol version: bumped when the dataflow's messages or the hello change shape.
pub const PROTOCOL_VERSION: u32 = 3;

/// How long a process waits for its peers by default (connecting and being connected to).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a connection may take to send its hello once accepted.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// The bytes of a hello before its job text: magic, version, fingerprint, processes, index,
/// the input's size and the checksum of its first bytes, the job text's length.
const HELLO_BYTES: usize = 8 + 4 + 8 + 4 + 4 + 8 + 8 + 4;

/// The longest job text a hello may carry.
const MAX_JOB_TEXT: usize = 1 << 16;

/// How many bytes of the input [`InputIdentity::head`] covers.
pub const INPUT_HEAD_BYTES: usize = 64 << 10;

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
    /// What the fingerprint covers, part by part (a name, such as `--window`, and its value),
    /// sent in the hello so that a refusal says which part differs.
    pub job: Vec<(String, String)>,
    /// The input this process reads: a peer reading another one is refused.
    pub input: InputIdentity,
    /// How long to wait for the peers (connecting, and being connected to) before failing.
    pub connect_timeout: Duration,
}

/// What the processes of a cluster compare of their input file before any data flows (a hash
/// of all of it would need it read first): its size in bytes (a `.gz` file's compressed size)
/// and a checksum of its first [`INPUT_HEAD_BYTES`] bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputIdentity {
    /// The file's size in bytes, as stored.
    pub bytes: u64,
    /// FNV-1a of its first [`INPUT_HEAD_BYTES`] bytes (as stored).
    pub head: u64,
}

impl InputIdentity {
    /// The identity of the file at `path`.
    ///
    /// # Errors
    /// The file cannot be opened or read.
    pub fn of_file(path: &std::path::Path) -> std::io::Result<Self> {
        let file = std::fs::File::open(path)?;
        let bytes = file.metadata()?.len();
        let mut head = Vec::with_capacity(INPUT_HEAD_BYTES);
        file.take(INPUT_HEAD_BYTES as u64).read_to_end(&mut head)?;
        Ok(Self {
            bytes,
            head: fnv1a(&head),
        })
    }
}

impl InputIdentity {
    /// The identity of several inputs in their order: their sizes summed, and FNV-1a of every
    /// input's size and checksum in turn (so that another file, size or order differs); one
    /// input's own identity for one.
    #[must_use]
    pub fn combined(inputs: &[InputIdentity]) -> Self {
        if let [one] = inputs {
            return *one;
        }
        let mut all = Vec::with_capacity(16 * inputs.len());
        for i in inputs {
            all.extend_from_slice(&i.bytes.to_le_bytes());
            all.extend_from_slice(&i.head.to_le_bytes());
        }
        Self {
            bytes: inputs.iter().map(|i| i.bytes).sum(),
            head: fnv1a(&all),
        }
    }
}

/// FNV-1a, 64 bits: the same on every machine and build.
#[must_use]
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h: u64, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What each side of a connection says first.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Hello {
    version: u32,
    fingerprint: u64,
    processes: u32,
    process: u32,
    input: InputIdentity,
    /// The job's parts, one `name=value` line each.
    job: String,
}

/// The job's parts as a hello carries them.
fn job_text(job: &[(String, String)]) -> String {
    job.iter()
        .map(|(name, value)| format!("{name}={}\n", value.replace('\n', " ")))
        .collect()
}

/// Reads exactly `b.len()` bytes (`got` of them are there already), refusing a wrong magic at
/// its first wrong byte (a stray client need not send a whole hello).
fn read_hello_bytes(stream: &mut TcpStream, b: &mut [u8], mut got: usize) -> Result<(), String> {
    let total = b.len();
    while got < total {
        match stream.read(&mut b[got..]) {
            Ok(0) => {
                return Err(format!(
                    "the connection closed after {got} bytes, before a whole hello"
                ))
            }
            Ok(n) => {
                got += n;
                let k = got.min(MAGIC.len());
                if b.len() >= MAGIC.len() && b[..k] != MAGIC[..k] {
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
                    "no hello within {} s (got {got} of {total} bytes)",
                    HELLO_TIMEOUT.as_secs()
                ))
            }
            Err(e) => return Err(format!("reading its hello: {e}")),
        }
    }
    Ok(())
}

impl Hello {
    fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(HELLO_BYTES + self.job.len());
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&self.version.to_le_bytes());
        b.extend_from_slice(&self.fingerprint.to_le_bytes());
        b.extend_from_slice(&self.processes.to_le_bytes());
        b.extend_from_slice(&self.process.to_le_bytes());
        b.extend_from_slice(&self.input.bytes.to_le_bytes());
        b.extend_from_slice(&self.input.head.to_le_bytes());
        let job = &self.job.as_bytes()[..self.job.len().min(MAX_JOB_TEXT)];
        b.extend_from_slice(&(job.len() as u32).to_le_bytes());
        b.extend_from_slice(job);
        b
    }

    /// Reads a hello from `stream`; the error says what was wrong (not the address).
    fn read(stream: &mut TcpStream) -> Result<Hello, String> {
        let mut b = [0u8; HELLO_BYTES];
        // Magic and version first: a process of another version may send a hello of another
        // length.
        read_hello_bytes(stream, &mut b[..12], 0)?;
        let u32_at = |b: &[u8], i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |b: &[u8], i: usize| {
            let mut f = [0u8; 8];
            f.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(f)
        };
        let version = u32_at(&b, 8);
        if version != PROTOCOL_VERSION {
            return Err(format!(
                "it speaks protocol version {version}, this process {PROTOCOL_VERSION} (run the \
                 same windowctl everywhere)"
            ));
        }
        read_hello_bytes(stream, &mut b, 12)?;
        let len = u32_at(&b, 44) as usize;
        if len > MAX_JOB_TEXT {
            return Err(format!("its hello's job text is {len} bytes long"));
        }
        let mut job = vec![0u8; len];
        // The job text has no magic to check: read it as a part of its own.
        let mut got = 0;
        while got < len {
            match stream.read(&mut job[got..]) {
                Ok(0) => return Err("the connection closed within its hello".into()),
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("reading its hello: {e}")),
            }
        }
        Ok(Hello {
            version,
            fingerprint: u64_at(&b, 12),
            processes: u32_at(&b, 20),
            process: u32_at(&b, 24),
            input: InputIdentity {
                bytes: u64_at(&b, 28),
                head: u64_at(&b, 36),
            },
            job: String::from_utf8_lossy(&job).into_owned(),
        })
    }

    /// Checks a peer's hello against ours: the error says what differs.
    fn check(&self, ours: &Hello) -> Result<(), String> {
        let them = format!("process {}", self.process);
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
        if self.input.bytes != ours.input.bytes {
            return Err(format!(
                "the input differs: {} bytes here, {} bytes at {them} (every process must \
                 read the same files, in the same order)",
                ours.input.bytes, self.input.bytes
            ));
        }
        if self.input.head != ours.input.head {
            return Err(format!(
                "the input differs: both are {} bytes, but their first {} KiB are not the same \
                 (of each file; checksum {:016x} here, {:016x} at {them}); every process must \
                 read the same files, in the same order",
                ours.input.bytes,
                INPUT_HEAD_BYTES >> 10,
                ours.input.head,
                self.input.head
            ));
        }
        if self.fingerprint != ours.fingerprint {
            return Err(format!(
                "it runs another job ({}): start every process with the same job, input format, \
                 --late-output (given to every process or none), --on-error, --workers, \
                 --processes and --checkpoint-dir with --checkpoint-interval (given to every \
                 process or none)",
                job_difference(&ours.job, &self.job, &them)
            ));
        }
        Ok(())
    }
}

/// What differs between the job texts `ours` and `theirs` (of `them`), part by part.
fn job_difference(ours: &str, theirs: &str, them: &str) -> String {
    fn parts(text: &str) -> Vec<(&str, &str)> {
        text.lines()
            .map(|l| l.split_once('=').unwrap_or((l, "")))
            .collect()
    }
    fn short(v: &str) -> String {
        const MAX: usize = 300;
        if v.len() <= MAX {
            return v.to_string();
        }
        let mut end = MAX;
        while !v.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &v[..end])
    }
    let (ours, theirs) = (parts(ours), parts(theirs));
    let mut diffs = Vec::new();
    for (name, value) in &ours {
        match theirs.iter().find(|(n, _)| n == name) {
            Some((_, v)) if v == value => {}
            Some((_, v)) => diffs.push(format!(
                "{name}: `{}` here, `{}` at {them}",
                short(value),
                short(v)
            )),
            None => diffs.push(format!(
                "{name}: `{}` here, not sent by {them}",
                short(value)
            )),
        }
    }
    for (name, value) in &theirs {
        if !ours.iter().any(|(n, _)| n == name) {
            diffs.push(format!("{name}: `{}` at {them}, not here", short(value)));
        }
    }
    if diffs.is_empty() {
        format!("its fingerprint differs from this process's, {them} sent no part that differs")
    } else {
        diffs.join("; ")
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
        input: cluster.input,
        job: job_text(&cluster.job),
    };
    let ours = &ours;
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
    ours: &Hello,
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
    ours: &Hello,
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
        // Answered before it is checked, so that the other side can say what differs too
        // (a wrong hello fails this process anyway: the answer gives nothing away that the
        // connection's other uses would not).
        let answered = stream.write_all(&ours.encode());
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
        answered.map_err(|e| fail(format!("sending the hello: {e}")))?;
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
            job: vec![("--window".into(), format!("job {fingerprint}"))],
            input: InputIdentity::default(),
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
        assert!(
            err.contains("--window: `job 7` here, `job 8` at process 1"),
            "{err}"
        );
        // The peer got the answer before the refusal: it says what differs too.
        assert!(err_peer.contains("process 0"), "{err_peer}");
        assert!(
            err_peer.contains("--window: `job 8` here, `job 7` at process 0"),
            "{err_peer}"
        );
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
            input: InputIdentity::default(),
            job: job_text(&[("--window".into(), "job 7".into())]),
        };
        s.write_all(&hello.encode()).expect("write");
        let err = listening.join().expect("thread").expect_err("refused");
        assert!(err.contains("it says it is process 5"), "{err}");
    }
}
