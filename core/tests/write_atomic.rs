//! docs/format.md W12 replace-atomically: the temporary file's name, the
//! removal of temporary files a dead process of ours left (not another
//! user's), and a full disk (a file
//! size limit, RLIMIT_FSIZE, in a child process) that leaves the target as
//! it was and no temporary file.
#![cfg(all(feature = "std", target_os = "linux"))]

use std::path::Path;
use std::process::Command;

use regex::Regex;
use safetensors_nano::write::{write_file, Plan, Tensor, TensorSpec};
use safetensors_nano::Dtype;

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

/// A process id that was in use and is not any more (the child has exited
/// and been reaped; ids are not reused at once).
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    assert!(!Path::new(&format!("/proc/{pid}")).exists());
    pid
}

#[test]
fn w12_temporary_file_is_named_by_target_pid_and_random_hex() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("model.v2.safetensors");
    let mut specs = [TensorSpec::new("x", Dtype::U8, &[2], 2)];
    let plan = Plan::new(&mut specs).unwrap();
    let first = plan.create_file(&target).unwrap();
    let second = plan.create_file(&target).unwrap();
    let pattern = Regex::new(&format!(
        r"^\.model\.v2\.safetensors\.{}\.[0-9a-f]{{16}}\.safetensors-nano-tmp$",
        std::process::id()
    ))
    .unwrap();
    let temps = names(dir.path());
    assert_eq!(temps.len(), 2, "{temps:?}");
    assert!(temps.iter().all(|t| pattern.is_match(t)), "{temps:?}");
    drop(first);
    let mut second = second;
    second.write_tensor("x", &[1, 2]).unwrap();
    second.commit().unwrap();
    assert_eq!(names(dir.path()), ["model.v2.safetensors"]);
}

#[test]
fn w12_stale_temporary_files_of_dead_processes_are_removed_first() {
    let dir = tempfile::tempdir().unwrap();
    let (dead, live) = (dead_pid(), std::process::id());
    let hex = "0123456789abcdef";
    let tmp = |target: &str, pid: u32, random: &str| {
        format!(".{target}.{pid}.{random}.safetensors-nano-tmp")
    };
    let stale = tmp("a.safetensors", dead, hex);
    let kept = [
        // A live process may be writing it.
        tmp("a.safetensors", live, hex),
        // Another target's.
        tmp("b.safetensors", dead, hex),
        // Not the pattern: upper-case or short random part, no pid.
        tmp("a.safetensors", dead, "0123456789ABCDEF"),
        tmp("a.safetensors", dead, "0123"),
        ".a.safetensors..0123456789abcdef.safetensors-nano-tmp".to_owned(),
        format!(".a.safetensors.{dead}.{hex}.tmp"),
    ];
    for name in kept.iter().chain([&stale]) {
        std::fs::write(dir.path().join(name), b"partial").unwrap();
    }
    let mut tensors = [Tensor::new("x", Dtype::U8, &[1], &[7])];
    write_file(dir.path().join("a.safetensors"), &mut tensors, None).unwrap();
    let mut expected: Vec<String> = kept.to_vec();
    expected.push("a.safetensors".to_owned());
    expected.sort();
    assert_eq!(names(dir.path()), expected);
}

#[test]
fn w12_stale_temporary_files_of_another_user_are_left() {
    let dir = tempfile::tempdir().unwrap();
    let name = format!(
        ".a.safetensors.{}.0123456789abcdef.safetensors-nano-tmp",
        dead_pid()
    );
    let theirs = dir.path().join(&name);
    std::fs::write(&theirs, b"partial").unwrap();
    // Their process may be hidden from us; only root can make such a file.
    if let Err(e) = std::os::unix::fs::chown(&theirs, Some(54_321), None) {
        eprintln!("skipped: cannot give a file to another user: {e}");
        return;
    }
    let mut tensors = [Tensor::new("x", Dtype::U8, &[1], &[7])];
    write_file(dir.path().join("a.safetensors"), &mut tensors, None).unwrap();
    assert_eq!(names(dir.path()), [name.as_str(), "a.safetensors"]);
}

/// Run by [`w12_full_disk_is_an_error_and_leaves_the_target_untouched`] in a
/// child process with a file size limit (hence ignored: on its own it has no
/// folder to write to, and returns).
#[test]
#[ignore = "a child process of w12_full_disk_is_an_error_and_leaves_the_target_untouched"]
fn w12_child_writes_past_the_size_limit() {
    let Some(dir) = std::env::var_os("SAFETENSORS_NANO_FSIZE_DIR") else {
        return;
    };
    let data = vec![1u8; 1 << 20];
    let mut tensors = [Tensor::new("big", Dtype::U8, &[1 << 20], &data)];
    let err = write_file(
        Path::new(&dir).join("model.safetensors"),
        &mut tensors,
        None,
    )
    .expect_err("1 MiB under a 64 KiB file size limit");
    assert_eq!(err.kind(), std::io::ErrorKind::FileTooLarge, "{err}");
    println!("child: {err}");
}

#[test]
fn w12_full_disk_is_an_error_and_leaves_the_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("model.safetensors");
    std::fs::write(&target, b"the old file").unwrap();
    // Past the limit a write fails with EFBIG once SIGXFSZ is ignored (an
    // ignored signal stays ignored across exec).
    let out = Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; exec prlimit --fsize=65536 -- \"$@\"")
        .arg("sh")
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "w12_child_writes_past_the_size_limit",
            "--ignored",
            "--nocapture",
        ])
        .env("SAFETENSORS_NANO_FSIZE_DIR", dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("child: "),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"the old file");
    assert_eq!(names(dir.path()), ["model.safetensors"]);
}
