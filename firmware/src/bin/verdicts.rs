//! The adversarial suite on the board of the build (any of the three): the same
//! cases and expected lines as the native and wasm32 runs
//! (`core/tests/adversarial.rs`, `core/tests/wasm_verdicts.rs`), from the
//! committed `tests/adversarial/cases.bin` and `verdicts.txt`, through the
//! same runner (`safetensors_nano_test_support::verdicts`, in `tests/support`).
//!
//! Prints each case whose verdict differs, then
//! `verdicts cases=<N> expected=<lines in verdicts.txt> mismatches=<M> stack=<bytes>`.
//!
//! Exit status (semihosting): 0 every case ran and matched; 1 some verdict
//! differs; 2 `cases.bin` and `verdicts.txt` are malformed or disagree in
//! length; 101 panic; 102 hard fault.

#![no_std]
#![no_main]

use safetensors_nano::Slot;
use safetensors_nano_firmware::board::{self, entry};
use safetensors_nano_firmware::println as hprintln;
use safetensors_nano_firmware::semihost::exit;
use safetensors_nano_firmware::stack;
use safetensors_nano_test_support::verdicts;

safetensors_nano_firmware::exit_on_panic_and_fault!();

const EXIT_PASS: u32 = 0;
const EXIT_MISMATCH: u32 = 1;
const EXIT_MALFORMED: u32 = 2;

static CASES: &[u8] = include_bytes!("../../../tests/adversarial/cases.bin");
static VERDICTS: &str = include_str!("../../../tests/adversarial/verdicts.txt");

#[entry]
fn main() -> ! {
    // The table (2 KiB for 64 slots) sits in main's frame, outside the
    // measured stack below.
    let mut scratch = [Slot::EMPTY; verdicts::MAX_SLOTS];
    let expected = VERDICTS.lines().filter(|l| !l.is_empty()).count();
    hprintln!(
        "verdicts start board={} cases_bin={} verdict_lines={} max_slots={} usize_bits={}",
        board::NAME,
        CASES.len(),
        expected,
        verdicts::MAX_SLOTS,
        usize::BITS
    );
    // Stack high-water of the whole run: the parses plus the runner (the
    // report closure prints only on a mismatch, so a passing run measures
    // the parsing alone).
    let (result, stack) = stack::measure(|| {
        verdicts::run_all(
            CASES,
            VERDICTS,
            &mut scratch,
            |case, verdict, line, same| {
                if !same {
                    hprintln!(
                        "mismatch case={} expected=\"{}\" got=\"{} {}\"",
                        case.name,
                        line,
                        case.name,
                        verdict
                    );
                }
            },
        )
    });
    let code = match result {
        Some((cases, mismatches)) => {
            hprintln!(
                "verdicts cases={} expected={} mismatches={} stack={}",
                cases,
                expected,
                mismatches,
                stack
            );
            if usize::try_from(cases).ok() != Some(expected) {
                EXIT_MALFORMED
            } else if mismatches != 0 {
                EXIT_MISMATCH
            } else {
                EXIT_PASS
            }
        }
        None => {
            hprintln!("error cases.bin and verdicts.txt are malformed or of different lengths");
            EXIT_MALFORMED
        }
    };
    exit(code)
}
