//! The chunker's unit tests: cuts, headers, shares, read errors and live inputs.

use super::*;

fn chunker(text: &str, bytes: usize, header: bool) -> Chunker {
    Chunker::new(
        Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
        bytes,
        Some(b','),
        header,
        Share::ALL,
    )
}

/// Every chunk's lines, taken in order.
fn all_chunks(c: &Chunker) -> Vec<String> {
    let mut chunks = Vec::new();
    for i in 0.. {
        match c.take(i) {
            Take::Chunk(ch) => chunks.push(String::from_utf8(ch.lines).expect("utf-8")),
            _ => break,
        }
    }
    chunks
}

#[test]
fn a_quote_inside_an_unquoted_field_opens_nothing() {
    // `a"b` is taken literally by the CSV reader; the record after it is quoted over two
    // lines and must stay whole.
    let text = "t,k,v\n1,a\"b,1\n2,\"x\ny\",2\n3,c,3\n";
    let c = chunker(text, 1, true);
    let chunks = all_chunks(&c);
    assert_eq!(
        chunks,
        ["t,k,v\n", "1,a\"b,1\n", "2,\"x\ny\",2\n", "3,c,3\n"]
    );
}

#[test]
fn a_quoted_line_break_is_never_a_cut() {
    let text = "t,k,v\n1,\"a\nb\",1\n2,\"c\"\"\nd\",2\n3,e,3\n";
    let c = chunker(text, 1, true);
    let chunks = all_chunks(&c);
    assert_eq!(
        chunks,
        ["t,k,v\n", "1,\"a\nb\",1\n", "2,\"c\"\"\nd\",2\n", "3,e,3\n"]
    );
}

#[test]
fn chunks_are_whole_lines_in_any_order_of_taking() {
    let text = "t,k,v\n1,a,1\n2,b,22\n3,c,333\n4,d,4";
    let c = chunker(text, 7, true);
    // Taken out of order, as workers do.
    let Take::Chunk(two) = c.take(2) else {
        panic!("chunk 2")
    };
    let Take::Chunk(zero) = c.take(0) else {
        panic!("chunk 0")
    };
    let Take::Chunk(one) = c.take(1) else {
        panic!("chunk 1")
    };
    assert_eq!(zero.lines, b"t,k,v\n1,a,1\n");
    assert!(zero.header.is_empty());
    assert_eq!(one.lines, b"2,b,22\n");
    assert_eq!(one.header, b"t,k,v\n");
    assert_eq!(two.lines, b"3,c,333\n");
    let Take::Chunk(three) = c.take(3) else {
        panic!("chunk 3")
    };
    assert_eq!(three.lines, b"4,d,4");
    assert!(matches!(c.take(4), Take::End));
    // Handed out once.
    assert!(matches!(c.take(1), Take::End));
    let joined: Vec<u8> = [zero, one, two, three]
        .into_iter()
        .flat_map(|c| c.lines)
        .collect();
    assert_eq!(joined, text.as_bytes());
}

#[test]
fn the_header_is_the_first_non_blank_line_and_json_has_none() {
    // Chunk 0 is blank lines only; chunk 1 holds the header.
    let c = chunker("\n  \n\u{feff}t,k,v\r\n1,a,1\n2,a,2\n", 4, true);
    for (i, header) in [
        (0, &b""[..]),
        (1, b""),
        (2, b"\xEF\xBB\xBFt,k,v\r\n"),
        (3, b"\xEF\xBB\xBFt,k,v\r\n"),
    ] {
        let Take::Chunk(chunk) = c.take(i) else {
            panic!("chunk {i}")
        };
        assert_eq!(chunk.header, header, "chunk {i}");
    }
    let c = chunker("{\"t\":1}\n{\"t\":2}\n", 4, false);
    let _ = c.take(0);
    let Take::Chunk(later) = c.take(1) else {
        panic!("chunk 1")
    };
    assert!(later.header.is_empty());
    assert_eq!(
        first_line(b"\xEF\xBB\xBFt\n"),
        Some(&b"\xEF\xBB\xBFt\n"[..])
    );
    assert_eq!(first_line(b" \n\t\n"), None);
}

#[test]
fn a_process_keeps_only_its_workers_chunks() {
    let text = "t,k,v\n1,a,1\n2,b,2\n3,c,3\n4,d,4\n5,e,5\n";
    // Two processes of two workers: process 1 holds workers 2 and 3.
    let share = Share {
        threads: 2,
        process: 1,
        processes: 2,
    };
    let c = Chunker::new(
        Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
        1,
        Some(b','),
        true,
        share,
    );
    let Take::Chunk(three) = c.take(3) else {
        panic!("chunk 3")
    };
    assert_eq!(three.lines, b"3,c,3\n");
    assert_eq!(three.header, b"t,k,v\n");
    // Chunks 0 and 1 were read and dropped, not kept for anyone.
    assert_eq!(c.state.lock().pending.len(), 1);
    assert!(matches!(c.take(0), Take::End));
    let Take::Chunk(two) = c.take(2) else {
        panic!("chunk 2")
    };
    assert_eq!(two.lines, b"2,b,2\n");
    assert!(matches!(c.take(6), Take::End));
    assert!(c.state.lock().pending.is_empty());
    assert!(!share.keeps(4) && share.keeps(6) && share.keeps(7) && Share::ALL.keeps(4));
}

#[test]
fn a_read_error_is_reported_once_where_it_happened() {
    struct Failing(u8);
    impl std::io::Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0 == 0 {
                return Err(std::io::Error::other("disk on fire"));
            }
            self.0 -= 1;
            buf[..2].copy_from_slice(b"a\n");
            Ok(2)
        }
    }
    let c = Chunker::new(
        Box::new(std::io::BufReader::new(Failing(2))),
        2,
        None,
        false,
        Share::ALL,
    );
    assert!(matches!(c.take(0), Take::Chunk(_)));
    assert!(matches!(c.take(3), Take::End));
    assert!(matches!(c.take(1), Take::Chunk(_)));
    match c.take(2) {
        Take::Failed(m) => assert_eq!(m, "disk on fire"),
        other => panic!("{other:?}"),
    }
}

/// The chunks of a live CSV input with a header (chunk size 64 KiB): `first`, then each of
/// `parts` after a pause of three times [`crate::live::FLUSH_AFTER`].
fn live_chunks(first: &[u8], parts: &[&[u8]]) -> Vec<String> {
    let (fed, send) = crate::live::tests::Fed::new(first);
    let input = std::io::BufReader::new(fed);
    let c = Chunker::new(Box::new(input), 1 << 16, Some(b','), true, Share::ALL).live_if(true);
    let parts: Vec<Vec<u8>> = parts.iter().map(|p| p.to_vec()).collect();
    let feed = std::thread::spawn(move || {
        for part in parts {
            std::thread::sleep(crate::live::FLUSH_AFTER * 3);
            send.send(part).expect("send");
        }
        std::thread::sleep(crate::live::FLUSH_AFTER * 3);
    });
    let chunks = all_chunks(&c);
    feed.join().expect("feed");
    chunks
}

#[test]
fn a_live_input_is_cut_where_it_pauses_at_a_whole_line_outside_quotes() {
    // The line goes on after a pause; then a quoted field with a line break spans a pause
    // (the line end in it is no place to cut). Far below the chunk size, each chunk ends
    // where the input paused, at its last whole record (the line cut by the first pause
    // goes on in the next chunk).
    let parts: [&[u8]; 4] = [b"a,1\n", b"3,\"x\n", b"y\",1\n", b"4,a,1\n"];
    assert_eq!(
        live_chunks(b"t,k,v\n1,a,1\n2,", &parts),
        ["t,k,v\n1,a,1\n", "2,a,1\n", "3,\"x\ny\",1\n", "4,a,1\n"]
    );
}

#[test]
fn a_live_input_that_pauses_inside_a_line_is_cut_at_its_last_whole_record() {
    // A producer's block ends inside a line; the next one inside a quoted field whose line
    // break is no record's end.
    let parts: [&[u8]; 2] = [b",1\n3,\"x\ny", b"\",1\n"];
    assert_eq!(
        live_chunks(b"t,k,v\n1,a,1\n2,a", &parts),
        ["t,k,v\n1,a,1\n", "2,a,1\n", "3,\"x\ny\",1\n"]
    );
    assert_eq!(
        last_record_end(b"1,\"a\nb\",1\n2,\"c\n", Some(b',')),
        Some(10)
    );
    assert_eq!(last_record_end(b"{}\n{", None), Some(3));
    assert_eq!(last_record_end(b"1,\"a\n", Some(b',')), None);
}

#[test]
fn a_worker_waiting_for_the_input_takes_its_chunk_read_meanwhile() {
    // Worker B asks for chunk 0 while worker A reads it; A then goes on to wait on a live
    // input for chunk 1, holding the input (a job of the fresh-user trial hung so with 3
    // workers, 1 run in 3: B waited for the input's lock, which A took again at once).
    let c = std::sync::Arc::new(chunker("", 12, false));
    let reading = c.input.lock(); // A
    let (got, taken) = std::sync::mpsc::channel();
    let b = {
        let c = std::sync::Arc::clone(&c);
        std::thread::spawn(move || got.send(c.take(0)).expect("send"))
    };
    std::thread::sleep(std::time::Duration::from_millis(50));
    {
        // A has read chunk 0 and goes on, still holding the input.
        let mut s = c.state.lock();
        s.next = 1;
        let chunk = Chunk {
            index: 0,
            header: Vec::new(),
            columns_from: Vec::new(),
            lines: b"1,a,1\n2,a,1\n".to_vec(),
            cut: None,
            end: 12,
            watermark: false,
            clock: 0,
            input: 0,
            ended_before: Vec::new(),
            last: false,
            idle: Vec::new(),
        };
        s.pending.insert(0, chunk);
    }
    let zero = taken
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("chunk 0 handed out while A holds the input");
    match zero {
        Take::Chunk(chunk) => assert_eq!(chunk.lines, b"1,a,1\n2,a,1\n"),
        other => panic!("{other:?}"),
    }
    drop(reading);
    b.join().expect("join");
}

#[test]
fn a_worker_waiting_on_a_live_input_holds_up_no_chunk_read_already() {
    let (fed, send) = crate::live::tests::Fed::new(b"1,a,1\n2,a,1\n3,a,1\n");
    let input = std::io::BufReader::new(fed);
    let c = std::sync::Arc::new(Chunker::new(
        Box::new(input),
        12,
        Some(b','),
        false,
        Share::ALL,
    ));
    // A worker asks for chunk 1: it reads chunk 0 (for another worker), then waits for
    // chunk 1's bytes, which have not come.
    let waiting = {
        let c = std::sync::Arc::clone(&c);
        std::thread::spawn(move || c.take(1))
    };
    std::thread::sleep(std::time::Duration::from_millis(100));
    // Chunk 0 is read already: the other worker takes it now, not when more input comes.
    let (got, taken) = std::sync::mpsc::channel();
    let other = {
        let c = std::sync::Arc::clone(&c);
        std::thread::spawn(move || got.send(c.take(0)).expect("send"))
    };
    let zero = taken
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("chunk 0 handed out while chunk 1 waits for input");
    match zero {
        Take::Chunk(chunk) => assert_eq!(chunk.lines, b"1,a,1\n2,a,1\n"),
        other => panic!("{other:?}"),
    }
    send.send(b"4,a,1\n".to_vec()).expect("send");
    drop(send);
    match waiting.join().expect("join") {
        Take::Chunk(chunk) => assert_eq!(chunk.lines, b"3,a,1\n4,a,1\n"),
        other => panic!("{other:?}"),
    }
    other.join().expect("join");
}

#[test]
fn periodic_watermarks_mark_a_chunk_an_interval_after_the_last_or_an_empty_one() {
    // An interval of 10 flush timeouts (F, 100 ms), counted from the start: the first chunk
    // (cut at F) and the second (cut at a pause at 4 F) are not marked; while the input pauses
    // on, an empty chunk carries their watermark once the interval has passed (10 F); the
    // third, cut at 16 F, is not marked (the interval counts from the empty chunk's mark), and
    // its watermark comes with another empty chunk (20 F); with nothing owed then, no empty
    // chunk follows however long the input pauses (to 30 F). A file's chunks, read at once,
    // get no mark and no empty chunk (the final watermark follows them).
    let (fed, send) = crate::live::tests::Fed::new(b"t,k,v\n1,a,1\n");
    let input = std::io::BufReader::new(fed);
    let every = crate::live::FLUSH_AFTER * 10;
    let c = Chunker::new(Box::new(input), 1 << 16, Some(b','), true, Share::ALL)
        .with_watermarks(Some(every))
        .live_if(true);
    let feed = std::thread::spawn(move || {
        std::thread::sleep(crate::live::FLUSH_AFTER * 3);
        send.send(b"2,a,1\n".to_vec()).expect("send");
        std::thread::sleep(crate::live::FLUSH_AFTER * 12);
        send.send(b"3,a,1\n".to_vec()).expect("send");
        std::thread::sleep(crate::live::FLUSH_AFTER * 15);
    });
    let mut got = Vec::new();
    for i in 0.. {
        match c.take(i) {
            Take::Chunk(ch) => {
                got.push((String::from_utf8(ch.lines).expect("utf-8"), ch.watermark))
            }
            _ => break,
        }
    }
    feed.join().expect("feed");
    let want = [
        ("t,k,v\n1,a,1\n", false),
        ("2,a,1\n", false),
        ("", true),
        ("3,a,1\n", false),
        ("", true),
    ];
    let want: Vec<(String, bool)> = want.iter().map(|(l, w)| (l.to_string(), *w)).collect();
    assert_eq!(got, want);
    let file = chunker("t,k,v\n1,a,1\n2,a,1\n3,a,1\n", 6, true).with_watermarks(Some(every));
    let marks: Vec<bool> = (0..)
        .map_while(|i| match file.take(i) {
            Take::Chunk(ch) => Some(ch.watermark),
            _ => None,
        })
        .collect();
    assert_eq!(marks, [false, false, false, false]);
}

#[test]
fn chunks_shrink_with_the_fan_out_above_256_to_4_kib() {
    // Tumbling and session windows, the default job (12) and the benchmarks' sliding job (120).
    for f in [0, 1, 12, 120, 256] {
        assert_eq!(chunk_bytes_for_fan_out(f), 64 << 10, "fan-out {f}");
    }
    // In proportion above 256: the events of a chunk times the fan-out stay the same.
    assert_eq!(chunk_bytes_for_fan_out(512), 32 << 10);
    assert_eq!(chunk_bytes_for_fan_out(1440), (64 << 10) * 256 / 1440);
    assert_eq!(chunk_bytes_for_fan_out(4096), 4 << 10);
    // The floor: sliding:1d:1s, and the largest fan-out there is.
    assert_eq!(chunk_bytes_for_fan_out(86_400), 4 << 10);
    assert_eq!(chunk_bytes_for_fan_out(u64::MAX), 4 << 10);
}
