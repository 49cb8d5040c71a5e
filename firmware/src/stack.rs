//! Stack high-water measurement by painting.
//!
//! [`measure`] fills the free stack below the current stack pointer with a
//! pattern, runs a closure, and finds the lowest word the closure changed.
//! Nothing else runs meanwhile (no interrupts are enabled in this firmware),
//! so every changed word was stack the closure used.

use core::ptr;

const PAINT: u32 = 0xC0DE_5AA5;
/// How far below the caller's stack pointer to paint and scan.
const WINDOW: usize = 32 * 1024;

extern "C" {
    /// End of `.bss`/`.uninit`, from cortex-m-rt's link.x: the stack must not go below it.
    static __sheap: u32;
}

/// Runs `f` and returns its result and the bytes of stack it used, counted
/// from this function's stack pointer (so the call into `f` is included).
#[inline(never)]
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let sp = cortex_m::register::msp::read() as usize & !3;
    let heap_start = ptr::addr_of!(__sheap) as usize;
    let bottom = sp.saturating_sub(WINDOW).max((heap_start + 3) & !3);
    // SAFETY: [bottom, sp) is RAM between the end of the static data and the
    // current stack pointer: no live object is there (no interrupt can run),
    // and nothing is called while it is being painted.
    unsafe {
        let mut a = bottom;
        while a < sp {
            ptr::write_volatile(a as *mut u32, PAINT);
            a += 4;
        }
    }
    let result = call(f);
    let mut low = sp;
    let mut a = bottom;
    while a < sp {
        // SAFETY: the same region, read back after `f` returned.
        if unsafe { ptr::read_volatile(a as *const u32) } != PAINT {
            low = a;
            break;
        }
        a += 4;
    }
    (result, sp - low)
}

/// Keeps `f`'s frame below `measure`'s stack pointer even if `f` is inlined here.
#[inline(never)]
fn call<R>(f: impl FnOnce() -> R) -> R {
    f()
}
