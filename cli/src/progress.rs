//! Progress bars on stderr, shown only when it is a terminal (and not
//! `--quiet`): over bytes (hashing, writing, comparing) or over things
//! (a remote index's shards).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar in `template`, labelled with what is being done.
fn bar(total: u64, quiet: bool, label: &str, template: &str) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(template)
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_message(label.to_owned());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// A progress bar over `total` bytes, labelled with what is being done.
pub fn bytes(total: u64, quiet: bool, label: &str) -> ProgressBar {
    bar(
        total,
        quiet,
        label,
        "{spinner} {msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}",
    )
}

/// A progress bar over `total` things (shards).
#[cfg(feature = "http")]
pub fn things(total: u64, quiet: bool, label: &str) -> ProgressBar {
    bar(
        total,
        quiet,
        label,
        "{spinner} {msg} [{bar:30}] {pos}/{len} {eta}",
    )
}
