//! Resource bounds (issue 7, item 4), through the public API: hostile
//! sizes finish in linear time, on a 64 KiB stack, and the parser
//! allocates nothing (all its memory is the caller's table).
//!
//! Linear time is checked loosely, so that a busy machine cannot make the
//! test flaky: the input 10× larger must take less than 30× the time (plus
//! a small constant), in CPU time where the OS reports it. Measured times
//! are printed: run with `--nocapture`.
//!
//! The inputs are up to 100 MB: these tests are meant for an optimised
//! build, `cargo test --release -p safetensors-nano --test bounds` (about
//! 10 s); an unoptimised `cargo test` skips them.

use std::time::{Duration, Instant};

use allocation_counter::AllocationInfo;
use safetensors_nano::{Error, ErrorKind, Parser, SafeTensors, Slot};
use safetensors_nano_test_support::reference::{compare, Agreement};

/// Stack for every parse in this file.
const STACK: usize = 64 * 1024;

/// Running time of a thread: its CPU time where Linux tells it
/// (`/proc/thread-self/schedstat`, in ns), as a shared, busy machine
/// stretches wall time but not CPU time. That counter is only brought up
/// to date at scheduler ticks, so a short run can read as 0: then, and
/// whenever it is the smaller, wall time is used.
struct Clock {
    cpu: Option<Duration>,
    wall: Instant,
}

fn thread_cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

impl Clock {
    fn now() -> Clock {
        Clock {
            cpu: thread_cpu_time(),
            wall: Instant::now(),
        }
    }

    fn elapsed(&self) -> Duration {
        let wall = self.wall.elapsed();
        let cpu = self
            .cpu
            .zip(thread_cpu_time())
            .map(|(start, now)| now.saturating_sub(start));
        match cpu {
            Some(cpu) if !cpu.is_zero() => cpu.min(wall),
            _ => wall,
        }
    }
}

/// Runs `f` on a thread with a [`STACK`]-byte stack, counting the heap
/// allocations it makes and its running time.
fn bounded<R: Send>(f: impl FnOnce() -> R + Send) -> (R, Duration, AllocationInfo) {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(scope, || {
                let mut out = None;
                let start = Clock::now();
                let info = allocation_counter::measure(|| out = Some(f()));
                let elapsed = start.elapsed();
                (out.expect("ran"), elapsed, info)
            })
            .expect("spawn")
            .join()
            .expect("the parse thread panicked (stack overflow aborts the process instead)")
    })
}

/// Parses `file` into `slots` on a small stack; checks that nothing was
/// allocated; returns the tensor count or the error, and the time taken.
fn parse(file: &[u8], slots: &mut [Slot]) -> (Result<usize, Error>, Duration) {
    let (result, elapsed, info) =
        bounded(|| SafeTensors::parse(file, &mut *slots).map(|st| st.len()));
    assert_eq!(
        (info.count_total, info.bytes_max),
        (0, 0),
        "the parser allocated; its only memory must be the caller's table"
    );
    (result, elapsed)
}

/// The fastest of `runs` parses.
fn timed(file: &[u8], slots: &mut [Slot], runs: usize) -> (Result<usize, Error>, Duration) {
    let (first, mut best) = parse(file, slots);
    for _ in 1..runs {
        let (again, t) = parse(file, slots);
        assert_eq!(again, first);
        best = best.min(t);
    }
    (first, best)
}

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Loosely linear scaling: parsing `big` (about `factor` times the size
/// of `small`) takes less than 3 times as long as parsing `small`
/// `factor` times over — that is, under 3x the cost per byte. Both sides
/// are long runs measured in alternation (best of three), so a busy machine
/// slows both alike; a small constant (50 ms) absorbs timer noise.
fn assert_linear(what: &str, small: &[u8], big: &[u8], slots_needed: usize, factor: u32) {
    let mut table = slots(slots_needed);
    let expected = parse(big, &mut table).0;
    let small_result = parse(small, &mut table).0;
    // One measurement at a time: the tests of this file must not slow each other.
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (mut best_small, mut best_big) = (Duration::MAX, Duration::MAX);
    for _ in 0..3 {
        let (_, t, info) = bounded(|| {
            for _ in 0..factor {
                assert_eq!(
                    SafeTensors::parse(small, &mut table[..]).map(|st| st.len()),
                    small_result
                );
            }
        });
        assert_eq!(info.count_total, 0);
        best_small = best_small.min(t);
        let (result, t) = parse(big, &mut table);
        assert_eq!(result, expected);
        best_big = best_big.min(t);
    }
    eprintln!(
        "bounds: {what}: {best_big:?} for the {factor}x input; {:?} for 1x ({best_small:?} for {factor} runs); ratio {:.2} of 3 allowed",
        best_small / factor,
        best_big.as_secs_f64() / best_small.as_secs_f64().max(1e-9)
    );
    let limit = best_small * 3 + Duration::from_millis(50);
    assert!(
        best_big < limit,
        "{what}: the {factor}x input took {best_big:?}, over {limit:?} ({best_small:?} for {factor} runs of 1x)"
    );
}

fn file(header: &[u8], data_len: usize) -> Vec<u8> {
    let mut f = Vec::with_capacity(8 + header.len() + data_len);
    f.extend_from_slice(&(header.len() as u64).to_le_bytes());
    f.extend_from_slice(header);
    f.resize(f.len() + data_len, 0);
    f
}

fn slots(n: usize) -> Vec<Slot> {
    vec![Slot::EMPTY; n]
}

const PREFIX: &str = r#"{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":"#;

/// 100,000 nested arrays in an unknown field: rejected at the 128th open
/// container (the reference's serde_json limit), without recursion.
#[test]
#[cfg_attr(debug_assertions, ignore = "slow unoptimised: run with --release")]
fn nested_arrays_100k() {
    let build = |depth: usize| {
        let mut h = PREFIX.as_bytes().to_vec();
        h.extend(std::iter::repeat_n(b'[', depth));
        h.extend(std::iter::repeat_n(b']', depth));
        h.extend_from_slice(b"}}");
        file(&h, 1)
    };
    let big = build(100_000);
    let (result, _) = timed(&big, &mut slots(4), 1);
    let err = result.expect_err("too deep");
    assert_eq!(err.kind(), ErrorKind::NestingTooDeep);
    // The value holds 125 containers at most: header object + tensor entry + 125 = 127 open.
    assert_eq!(err.offset(), Some((PREFIX.len() + 125) as u64));
    assert_eq!(compare(&big), Agreement::Same);
    assert_linear("100,000 nested arrays", &build(10_000), &big, 4, 10);

    // Never closed, and objects instead of arrays: the same.
    let mut h = PREFIX.as_bytes().to_vec();
    for _ in 0..100_000 {
        h.extend_from_slice(br#"{"k":"#);
    }
    let (result, _) = timed(&file(&h, 1), &mut slots(4), 1);
    assert_eq!(result.unwrap_err().kind(), ErrorKind::NestingTooDeep);
}

/// Many containers at the deepest allowed level: skipping an ignored value
/// is linear in its length.
#[test]
#[cfg_attr(debug_assertions, ignore = "slow unoptimised: run with --release")]
fn deep_siblings_are_linear() {
    let build = |count: usize| {
        let mut h = PREFIX.as_bytes().to_vec();
        h.push(b'[');
        for i in 0..count {
            if i > 0 {
                h.push(b',');
            }
            h.extend(std::iter::repeat_n(b'[', 124));
            h.extend(std::iter::repeat_n(b']', 124));
        }
        h.extend_from_slice(b"]}}");
        file(&h, 1)
    };
    let big = build(40_000);
    let (result, _) = timed(&big, &mut slots(4), 1);
    assert_eq!(result, Ok(1));
    assert_linear("40,000 arrays 125 deep (10 MB)", &build(4_000), &big, 4, 10);
}

/// A 100 MB header (the default limit) of spaces.
#[test]
#[cfg_attr(debug_assertions, ignore = "slow unoptimised: run with --release")]
fn spaces_100mb() {
    let limit = safetensors_nano::HEADER_LIMIT as usize;
    let padded = |n: usize| {
        let mut h = b"{}".to_vec();
        h.resize(n, b' ');
        file(&h, 0)
    };
    let big = padded(limit);
    let (result, _) = timed(&big, &mut slots(0), 1);
    assert_eq!(result, Ok(0));
    assert_linear(
        "100 MB header: {} then spaces",
        &padded(limit / 10),
        &big,
        0,
        10,
    );

    // Spaces first, then the object.
    let mut h = vec![b' '; limit - 2];
    h.extend_from_slice(b"{}");
    let (result, t) = timed(&file(&h, 0), &mut slots(0), 1);
    assert_eq!(result, Ok(0));
    eprintln!("bounds: 100 MB header: spaces then {{}}: {t:?}");

    // Nothing but spaces: the error is at the end.
    let only = file(&vec![b' '; limit], 0);
    let (result, t) = timed(&only, &mut slots(0), 1);
    let err = result.unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::UnexpectedEnd { .. }));
    assert_eq!(err.offset(), Some(limit as u64));
    eprintln!("bounds: 100 MB header of spaces only: {t:?}");

    // One byte more is refused from the length prefix alone.
    let mut over = ((limit + 1) as u64).to_le_bytes().to_vec();
    over.extend_from_slice(b"{}");
    let (result, _) = timed(&over, &mut slots(0), 1);
    assert!(matches!(
        result.unwrap_err().kind(),
        ErrorKind::HeaderTooLarge { .. }
    ));
}

/// A header of `n` one-byte tensors listed in a scrambled order.
fn many_tensors(n: usize) -> Vec<u8> {
    let mut h = String::with_capacity(n * 64);
    h.push('{');
    for k in 0..n {
        // A permutation of 0..n (7919 is prime and does not divide 10^k).
        let i = (k * 7919) % n;
        if k > 0 {
            h.push(',');
        }
        h.push_str(&format!(
            r#""t{i}":{{"dtype":"U8","shape":[1],"data_offsets":[{i},{}]}}"#,
            i + 1
        ));
    }
    h.push('}');
    file(h.as_bytes(), n)
}

/// 1,000,000 tensors in a heap-backed table of exactly 1,000,000 slots
/// (32 MB, the caller's): parsed with no allocation, all reachable.
#[test]
#[cfg_attr(debug_assertions, ignore = "slow unoptimised: run with --release")]
fn one_million_tensors() {
    const N: usize = 1_000_000;
    let big = many_tensors(N);
    eprintln!(
        "bounds: 1,000,000 tensors: header of {} bytes",
        big.len() - N - 8
    );
    let mut table = slots(N);
    let (result, _) = timed(&big, &mut table, 1);
    assert_eq!(result, Ok(N));
    let st = SafeTensors::parse(&big, &mut table[..]).expect("valid");
    assert_eq!(
        st.tensor("t999999").map(|t| t.data_offsets()),
        Some((999_999, 1_000_000))
    );
    assert_eq!(st.tensor("t0").map(|t| t.data_offsets()), Some((0, 1)));
    assert!(st.tensor("t1000000").is_none());
    let mut next = 0;
    for t in st.iter() {
        assert_eq!(t.data_offsets().0, next);
        next += 1;
    }
    assert_eq!(next, N as u64);

    // One slot short: the error says how many are needed.
    let (result, _) = timed(&big, &mut table[..N - 1], 1);
    assert_eq!(
        result.unwrap_err().kind(),
        ErrorKind::CapacityExceeded {
            capacity: (N - 1) as u64,
            needed: N as u64
        }
    );

    drop(table);
    assert_linear("1,000,000 tensors", &many_tensors(N / 10), &big, N, 10);
}

fn long_name_file(names: &[String]) -> Vec<u8> {
    let mut h = String::from("{");
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            h.push(',');
        }
        h.push_str(&format!(
            r#""{name}":{{"dtype":"U8","shape":[1],"data_offsets":[{i},{}]}}"#,
            i + 1
        ));
    }
    h.push('}');
    file(h.as_bytes(), names.len())
}

/// Names of 1 MB, plain and escaped.
#[test]
#[cfg_attr(debug_assertions, ignore = "slow unoptimised: run with --release")]
fn names_of_1mb() {
    const MB: usize = 1 << 20;
    let plain_a = "a".repeat(MB);
    let plain_b = format!("{}b", "a".repeat(MB - 1));
    let escaped = "\\u0041".repeat(MB / 6);
    let big = long_name_file(&[plain_a.clone(), plain_b.clone(), escaped.clone()]);
    let (result, _) = timed(&big, &mut slots(3), 1);
    assert_eq!(result, Ok(3));
    let st = SafeTensors::parse(&big, slots(3)).expect("valid");
    assert_eq!(st.tensor(&plain_a).map(|t| t.data_offsets()), Some((0, 1)));
    assert_eq!(st.tensor(&plain_b).map(|t| t.data_offsets()), Some((1, 2)));
    let decoded = "A".repeat(MB / 6);
    let t = st.tensor(&decoded).expect("found by its decoded name");
    assert_eq!(t.name().decoded_len(), MB / 6);
    assert!(t.name() == decoded.as_str());

    // The same 1 MB name twice (once escaped) is a duplicate.
    let dup = long_name_file(&[decoded.clone(), escaped.clone()]);
    let (result, _) = timed(&dup, &mut slots(2), 1);
    assert_eq!(result.unwrap_err().kind(), ErrorKind::DuplicateTensorName);

    let tenth = |s: &str| s[..s.len() / 10].to_owned();
    let small = long_name_file(&[
        tenth(&plain_a),
        format!("{}b", tenth(&plain_a)),
        "\\u0041".repeat(MB / 60),
    ]);
    assert_linear("names of 1 MB", &small, &big, 3, 10);
}

fn shape_file(dims: &[u64], dtype: &str, len: u64) -> Vec<u8> {
    let shape: Vec<String> = dims.iter().map(u64::to_string).collect();
    let h = format!(
        r#"{{"t":{{"dtype":"{dtype}","shape":[{}],"data_offsets":[0,{len}]}}}}"#,
        shape.join(",")
    );
    file(h.as_bytes(), len as usize)
}

/// Shapes of 10,000 dimensions.
#[test]
#[cfg_attr(debug_assertions, ignore = "slow unoptimised: run with --release")]
fn shapes_of_10k_dims() {
    const RANK: usize = 10_000;
    let ones = shape_file(&[1; RANK], "F32", 4);
    let (result, _) = timed(&ones, &mut slots(1), 1);
    assert_eq!(result, Ok(1));
    let st = SafeTensors::parse(&ones, slots(1)).expect("valid");
    let shape = st.tensor("t").expect("t").shape();
    assert_eq!((shape.rank(), shape.element_count()), (RANK, 1));
    let mut dims = vec![0; RANK];
    assert_eq!(shape.copy_into(&mut dims).map(<[u64]>::len), Some(RANK));

    // 2^10000 elements overflow.
    let (result, _) = timed(&shape_file(&[2; RANK], "U8", 0), &mut slots(1), 1);
    assert_eq!(result.unwrap_err().kind(), ErrorKind::ValidationOverflow);

    // A zero at the end makes it empty (docs/format.md D3 zero-dim: where we differ from the
    // reference, which overflows first).
    let mut zero_last = vec![2; RANK];
    zero_last[RANK - 1] = 0;
    let file = shape_file(&zero_last, "U8", 0);
    let (result, _) = timed(&file, &mut slots(1), 1);
    assert_eq!(result, Ok(1));
    assert!(matches!(compare(&file), Agreement::Listed(_)));

    assert_linear(
        "shapes of 10,000 dimensions",
        &shape_file(&[1; RANK / 10], "F32", 4),
        &ones,
        1,
        10,
    );
}

/// The header-only entry point has the same bounds.
#[test]
#[cfg_attr(debug_assertions, ignore = "slow unoptimised: run with --release")]
fn header_only_path_is_bounded_too() {
    let h = many_tensors(100_000);
    let mut table = slots(100_000);
    let (status, _, info) = bounded(|| {
        Parser::new()
            .parse_header(&h, &mut table[..])
            .map(|s| matches!(s, safetensors_nano::Status::Complete(_)))
    });
    assert_eq!(status, Ok(true));
    assert_eq!(info.count_total, 0);
}
