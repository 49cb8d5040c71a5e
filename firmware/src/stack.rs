//! Stack high-water measurement by painting.
//!
//! [`paint`] fills the free stack below the caller with a pattern once, at
//! the start of a run; [`peak`] then finds the lowest word ever changed,
//! which gives the run's whole stack use, counted from the top of RAM.
//! [`measure`] does the same for one closure. Nothing else runs meanwhile
//! (no interrupts are enabled in this firmware), so every changed word was
//! stack the program used.

use core::ptr;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::board;

const PAINT: u32 = 0xC0DE_5AA5;
/// How far below the caller's stack pointer [`paint`] and [`measure`] paint and scan.
const WINDOW: usize = 32 * 1024;

extern "C" {
    /// End of the static data, from the runtime's link.x (cortex-m-rt and
    /// riscv-rt both name it): the stack must not go below it.
    static __sheap: u32;
    /// The initial stack pointer (the top of the stack), from link.x.
    static _stack_start: u32;
}

/// The lowest changed word seen before a [`measure`] repainted below it.
static LOWEST: AtomicUsize = AtomicUsize::new(usize::MAX);
/// Where [`paint`] started (0: it has not run).
static PAINTED: AtomicUsize = AtomicUsize::new(0);

/// Lowest address to paint below stack pointer `sp`: the end of the static
/// data, or [`WINDOW`] below `sp` on a board with more RAM.
fn bottom(sp: usize) -> usize {
    let floor = (ptr::addr_of!(__sheap) as usize + 3) & !3;
    sp.saturating_sub(WINDOW).max(floor)
}

/// Paints `[from, to)`. Inlined: a call would put its own frame in the
/// range it paints.
#[inline(always)]
fn paint_range(from: usize, to: usize) {
    let mut a = from;
    while a < to {
        // SAFETY: the caller passes free RAM between the static data and the
        // current stack pointer: no live object is there (no interrupt can
        // run), and nothing is called while it is being painted.
        unsafe { ptr::write_volatile(a as *mut u32, PAINT) };
        a += 4;
    }
}

/// The lowest word in `[from, to)` that is not paint, or `to`.
fn lowest_used(from: usize, to: usize) -> usize {
    let mut a = from;
    while a < to {
        // SAFETY: RAM between the static data and the stack pointer, read
        // back after the code that may have used it returned.
        if unsafe { ptr::read_volatile(a as *const u32) } != PAINT {
            return a;
        }
        a += 4;
    }
    to
}

/// Paints all the free stack below the caller (call it first thing in `main`).
#[inline(never)]
pub fn paint() {
    let sp = board::stack_pointer() & !3;
    PAINTED.store(bottom(sp), Ordering::Relaxed);
    paint_range(bottom(sp), sp);
}

/// Bytes of stack used since [`paint`], from the top of the stack down to
/// the deepest word any code changed.
#[inline(never)]
pub fn peak() -> usize {
    let top = ptr::addr_of!(_stack_start) as usize;
    let from = PAINTED.load(Ordering::Relaxed);
    let low = lowest_used(from, board::stack_pointer() & !3).min(LOWEST.load(Ordering::Relaxed));
    top.saturating_sub(low)
}

/// Runs `f` and returns its result and the bytes of stack it used, counted
/// from this function's stack pointer (so the call into `f` is included).
#[inline(never)]
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let sp = board::stack_pointer() & !3;
    let bottom = bottom(sp);
    // Keep what earlier code used below here before painting over it.
    let painted = PAINTED.load(Ordering::Relaxed);
    if painted != 0 {
        let before = lowest_used(painted, sp);
        if before < LOWEST.load(Ordering::Relaxed) {
            LOWEST.store(before, Ordering::Relaxed);
        }
    }
    paint_range(bottom, sp);
    let result = call(f);
    let low = lowest_used(bottom, sp);
    (result, sp - low)
}

/// Keeps `f`'s frame below `measure`'s stack pointer even if `f` is inlined here.
#[inline(never)]
fn call<R>(f: impl FnOnce() -> R) -> R {
    f()
}
