//! Writing commands under faults, through the built binary
//! (docs/format.md W12 replace-atomically): Ctrl-C and SIGTERM mid-write, SIGKILL at
//! random points over an existing target, a full disk (a file size limit,
//! RLIMIT_FSIZE; a re-split over an earlier one), and the progress bar on a terminal but not in a pipe.
#![cfg(target_os = "linux")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_safetensors-nano");

/// A file with one F32 tensor of `elements` zeros, written sparse: the
/// header, then the length set (no data blocks on disk).
fn sparse_f32(path: &Path, elements: u64) {
    sparse_named(path, "w", elements);
}

/// As [`sparse_f32`], the tensor named `name`.
fn sparse_named(path: &Path, name: &str, elements: u64) {
    let header = format!(
        r#"{{"{name}":{{"dtype":"F32","shape":[{elements}],"data_offsets":[0,{}]}}}}"#,
        elements * 4
    );
    let padded = header.len().div_ceil(8) * 8;
    let mut file = std::fs::File::create(path).unwrap();
    file.write_all(&(padded as u64).to_le_bytes()).unwrap();
    file.write_all(header.as_bytes()).unwrap();
    file.write_all(&vec![b' '; padded - header.len()]).unwrap();
    file.set_len(8 + padded as u64 + elements * 4).unwrap();
}

fn temps(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".safetensors-nano-tmp"))
        .collect()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

/// Waits until the writer's temporary file has data (it is mid-write).
fn wait_for_temp(dir: &Path, child: &mut std::process::Child) {
    let start = Instant::now();
    loop {
        if temps(dir)
            .iter()
            .any(|t| std::fs::metadata(t).is_ok_and(|m| m.len() > 1 << 20))
        {
            return;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the writer ended early"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no temporary file"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends `signal` to an `edit` of a 4 GiB file once its temporary file
/// exists: the command exits `code`, says it was interrupted, and leaves
/// only the input behind.
fn signal_mid_write_leaves_only_the_input(signal: &str, code: i32) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.safetensors");
    sparse_f32(&input, 1 << 30); // 4 GiB
    let out = dir.path().join("out.safetensors");
    let mut child = Command::new(BIN)
        .args(["edit", "--convert", "F32:BF16"])
        .args([&input, &out])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_temp(dir.path(), &mut child);
    let kill = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let done = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(code), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert_eq!(names(dir.path()), ["big.safetensors"]);
}

#[test]
fn ctrl_c_mid_write_leaves_no_output_and_no_temporary_file() {
    signal_mid_write_leaves_only_the_input("-INT", 130);
}

#[test]
fn sigterm_mid_write_leaves_no_output_and_exits_143() {
    signal_mid_write_leaves_only_the_input("-TERM", 143);
    let help = Command::new(BIN).arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("143 SIGTERM"));
}

#[test]
fn a_second_ctrl_c_ends_a_stuck_command_at_once() {
    let dir = tempfile::tempdir().unwrap();
    // Opening a FIFO nobody writes to blocks: the command cannot reach a
    // point where it checks for Ctrl-C.
    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let mut child = Command::new(BIN)
        .arg("edit")
        .arg(&fifo)
        .arg(dir.path().join("out.safetensors"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    // Its signal handling is set up once it has a second thread.
    let start = Instant::now();
    while std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |t| t.count()) < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no signal thread"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let int = || {
        assert!(Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success())
    };
    int();
    std::thread::sleep(Duration::from_millis(200));
    assert!(child.try_wait().unwrap().is_none(), "it was stuck");
    int();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("a second Ctrl-C did not end the command");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(130));
}

/// A few random bits per call (no dependency needed for test timing).
fn random_below(n: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos(),
    );
    h.finish() % n.max(1)
}

#[test]
fn sigkill_at_random_points_never_tears_the_target_and_temps_are_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.safetensors");
    sparse_f32(&input, 16 << 20); // 64 MiB
    let edit = |out: &Path, to: &str| {
        let mut cmd = Command::new(BIN);
        cmd.args(["edit", "--quiet", "--convert", to])
            .args([&input, out])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    };
    // The old target (F16) and, elsewhere, what the new one must be (BF16).
    let target = dir.path().join("model.safetensors");
    assert!(edit(&target, "F32:F16").status().unwrap().success());
    let old = std::fs::read(&target).unwrap();
    let expected_new = dir.path().join("expected.safetensors");
    let start = Instant::now();
    assert!(edit(&expected_new, "F32:BF16").status().unwrap().success());
    let full_run = start.elapsed().as_micros() as u64;
    let new = std::fs::read(&expected_new).unwrap();
    std::fs::remove_file(&expected_new).unwrap();
    assert_ne!(old, new);

    let (mut left_temp, mut completed) = (0, 0);
    for run in 0..20 {
        let mut child = edit(&target, "F32:BF16").spawn().unwrap();
        // Anywhere from before the start to just past the end of a full run.
        std::thread::sleep(Duration::from_micros(random_below(full_run * 6 / 5)));
        child.kill().unwrap();
        let status = child.wait().unwrap();
        completed += usize::from(status.success());
        let now = std::fs::read(&target).unwrap();
        assert!(
            now == old || now == new,
            "run {run}: torn target of {} bytes",
            now.len()
        );
        // A killed run leaves at most its own temporary file: the one a
        // previous run left is removed when the next one starts writing.
        let left = temps(dir.path());
        assert!(left.len() <= 1, "run {run}: {left:?}");
        left_temp += left.len();
    }
    assert!(left_temp > 0, "no run was killed mid-write (timing)");
    eprintln!("20 SIGKILL runs: {left_temp} left a temporary file, {completed} had completed");
    // The next complete run removes what the last killed one left.
    assert!(edit(&target, "F32:BF16").status().unwrap().success());
    assert_eq!(std::fs::read(&target).unwrap(), new);
    assert_eq!(names(dir.path()), ["in.safetensors", "model.safetensors"]);
}

#[test]
fn a_full_disk_is_a_clear_error_with_the_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.safetensors");
    sparse_f32(&input, 4 << 20); // 16 MiB in, 8 MiB out
    let target = dir.path().join("model.safetensors");
    std::fs::write(&target, b"the old file").unwrap();
    // Past the limit a write fails with EFBIG once SIGXFSZ is ignored (an
    // ignored signal stays ignored across exec).
    let run = Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; exec prlimit --fsize=1048576 -- \"$@\"")
        .arg("sh")
        .arg(BIN)
        .args(["edit", "--convert", "F32:BF16"])
        .args([&input, &target])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot write {}", target.display()))
            && stderr.contains("File too large"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"the old file");
    assert_eq!(names(dir.path()), ["in.safetensors", "model.safetensors"]);
}

#[test]
fn the_progress_bar_shows_on_a_terminal_only_and_clears() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.safetensors");
    sparse_f32(&input, 64 << 20); // 256 MiB
    let out = dir.path().join("out.safetensors");
    let command = format!(
        "{BIN} edit --convert F32:BF16 {} {}",
        input.display(),
        out.display()
    );
    // On a pseudo-terminal (util-linux `script`), stderr is a terminal.
    let tty = Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .env("TERM", "xterm")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&tty.stdout);
    assert!(tty.status.success(), "{shown}");
    assert!(shown.contains("writing ["), "no bar: {shown:?}");
    assert!(shown.contains("/s"), "no rate: {shown:?}");
    assert!(shown.contains("MiB/256.00 MiB"), "no byte count: {shown:?}");
    // Cleared: the last thing before the status line erases the bar's line.
    let status = format!("{}: 1 tensor ", out.display());
    let before = shown.split(&status).next().unwrap_or_default();
    assert!(
        before.ends_with("\r\x1b[2K") || before.ends_with("\x1b[2K"),
        "not cleared: {:?}",
        &before[before.len().saturating_sub(80)..]
    );
    // In a pipe: no bar, stderr empty.
    std::fs::remove_file(&out).unwrap();
    let piped = Command::new("sh")
        .args(["-c", &command])
        .env("TERM", "xterm")
        .output()
        .unwrap();
    assert!(piped.status.success());
    assert_eq!(String::from_utf8_lossy(&piped.stderr), "");
    // --quiet on a terminal: nothing at all.
    std::fs::remove_file(&out).unwrap();
    let quiet = Command::new("script")
        .args(["-qfec", &format!("{command} --quiet"), "/dev/null"])
        .env("TERM", "xterm")
        .output()
        .unwrap();
    assert!(quiet.status.success());
    assert_eq!(String::from_utf8_lossy(&quiet.stdout), "");
}

#[test]
fn merge_and_split_show_one_bar_each() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    sparse_named(&a, "x", 32 << 20); // 128 MiB
    sparse_named(&b, "y", 32 << 20);
    let on_tty = |command: String| {
        let tty = Command::new("script")
            .args(["-qfec", &command, "/dev/null"])
            .env("TERM", "xterm")
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&tty.stdout).into_owned();
        assert!(tty.status.success(), "{shown}");
        shown
    };
    let merged = dir.path().join("merged");
    let command = format!(
        "{BIN} merge {} {} -o {}",
        a.display(),
        b.display(),
        merged.display()
    );
    let shown = on_tty(command);
    assert!(shown.contains("merging ["), "{shown:?}");
    assert!(!shown.contains("writing ["), "a second bar: {shown:?}");
    let shards = dir.path().join("shards");
    let command = format!(
        "{BIN} split {} -o {} --max-shard-size 200MB",
        merged.display(),
        shards.display()
    );
    let shown = on_tty(command);
    assert!(shown.contains("splitting ["), "{shown:?}");
    assert!(!shown.contains("writing ["), "a second bar: {shown:?}");
}

/// A file of U8 tensors `t0`, `t1`, … of the given sizes, each filled with
/// the byte `fill`.
fn u8_tensors(path: &Path, sizes: &[u64], fill: u8) {
    let mut entries = Vec::new();
    let mut offset = 0;
    for (i, size) in sizes.iter().enumerate() {
        entries.push(format!(
            r#""t{i}":{{"dtype":"U8","shape":[{size}],"data_offsets":[{offset},{}]}}"#,
            offset + size
        ));
        offset += size;
    }
    let header = format!("{{{}}}", entries.join(","));
    let padded = header.len().div_ceil(8) * 8;
    let mut bytes = (padded as u64).to_le_bytes().to_vec();
    bytes.extend(header.as_bytes());
    bytes.resize(8 + padded, b' ');
    bytes.resize(8 + padded + offset as usize, fill);
    std::fs::write(path, bytes).unwrap();
}

fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    names(dir)
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap();
            (n, bytes)
        })
        .collect()
}

fn split(input: &Path, dir: &Path, size: &str) -> std::process::Output {
    Command::new(BIN)
        .arg("split")
        .arg(input)
        .arg("-o")
        .arg(dir)
        .args(["--max-shard-size", size])
        .output()
        .unwrap()
}

#[test]
fn a_split_that_fails_part_way_leaves_an_earlier_split_intact() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    u8_tensors(&old, &[1000, 1000, 1000], 1);
    let shards = dir.path().join("shards");
    let first = split(&old, &shards, "1500");
    assert!(first.status.success(), "{first:?}");
    let before = contents(&shards);
    assert_eq!(before.len(), 4, "{before:?}");
    // The same three names; the second shard (the 100 KB tensor alone)
    // is over the 50 KB file size limit.
    u8_tensors(&new, &[1000, 1000, 100_000], 2);
    let out = Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; exec prlimit --fsize=50000 -- \"$@\"")
        .arg("sh")
        .arg(BIN)
        .arg("split")
        .arg(&new)
        .arg("-o")
        .arg(&shards)
        .args(["--max-shard-size", "1500"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("File too large"), "{stderr}");
    let after = contents(&shards);
    let listed = |c: &[(String, Vec<u8>)]| c.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(listed(&after), listed(&before));
    assert!(after == before, "the earlier split's files changed");
}

#[test]
fn a_new_split_removes_the_shards_of_an_earlier_one_it_does_not_name() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    u8_tensors(&input, &[1000, 1000, 1000], 1);
    let shards = dir.path().join("shards");
    assert!(split(&input, &shards, "1500").status.success());
    std::fs::write(shards.join("config.json"), "{}").unwrap();
    std::fs::write(shards.join("model-1-of-3.safetensors"), "not ours").unwrap();
    assert_eq!(names(&shards).len(), 6);
    assert!(split(&input, &shards, "2500").status.success());
    assert_eq!(
        names(&shards),
        [
            "config.json",
            "model-00001-of-00002.safetensors",
            "model-00002-of-00002.safetensors",
            "model-1-of-3.safetensors",
            "model.safetensors.index.json"
        ]
    );
    assert!(split(&input, &shards, "1GB").status.success());
    assert_eq!(
        names(&shards),
        [
            "config.json",
            "model-1-of-3.safetensors",
            "model.safetensors"
        ]
    );
}
