//! Ctrl-C and SIGTERM during a write: noted, so the copy stops between
//! chunks and its temporary file is removed, and the exit status a shell
//! reports for the signal.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that stopped the command (SIGINT or SIGTERM; 0: none).
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);

/// Makes Ctrl-C (SIGINT) and SIGTERM stop a writing command cleanly: the
/// copy fails with `Interrupted`, its `FileWriter` is dropped, and the
/// temporary file goes with it (docs/format.md W12). Without this the
/// process would die with its temporary file still on disk. A second
/// signal ends the process at once; the temporary file it leaves is removed
/// by the next writer of that target (W12's stale files).
pub fn stop_on_ctrl_c() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    // Signals that cannot be caught (never, in practice) keep their default.
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    std::thread::spawn(move || {
        for signal in signals.forever() {
            if STOPPED_BY.swap(signal, Ordering::SeqCst) != 0 {
                std::process::exit(128 + signal);
            }
        }
    });
}

/// Whether Ctrl-C or SIGTERM stopped the command.
pub fn interrupted() -> bool {
    STOPPED_BY.load(Ordering::SeqCst) != 0
}

/// The exit status for a stopped command: 128 + the signal's number (130
/// for Ctrl-C, 143 for SIGTERM), as a shell reports it.
pub fn stopped_status() -> i32 {
    128 + STOPPED_BY.load(Ordering::SeqCst)
}

/// As if SIGINT had come (tests of what a writer does once stopped).
#[cfg(test)]
pub fn pretend_interrupted() {
    STOPPED_BY.store(signal_hook::consts::SIGINT, Ordering::SeqCst);
}
