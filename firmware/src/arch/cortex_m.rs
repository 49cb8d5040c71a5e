//! What every Cortex-M board shares: cortex-m-rt's entry and reset code,
//! semihosting through the `BKPT 0xAB` call (cortex-m-semihosting), the
//! main stack pointer, and the hard-fault handler.

use core::fmt;

pub use cortex_m_rt::entry;

/// Writes to the host's standard output (semihosting).
pub fn print(args: fmt::Arguments<'_>) {
    cortex_m_semihosting::hprint!("{}", args);
}

/// Ends the QEMU run with `code` (semihosting SYS_EXIT_EXTENDED).
pub fn exit(code: u32) -> ! {
    let block = [crate::semihost::ADP_STOPPED_APPLICATION_EXIT, code];
    // SAFETY: a semihosting call with a valid two-word parameter block.
    unsafe { cortex_m_semihosting::syscall(crate::semihost::SYS_EXIT_EXTENDED, &block) };
    // Without a host that handles it, stop here.
    loop {
        cortex_m::asm::bkpt();
    }
}

/// The current stack pointer (the main stack: no RTOS, no process stack).
#[inline(always)]
pub fn stack_pointer() -> usize {
    cortex_m::register::msp::read() as usize
}

/// Installs the hard-fault handler: it reports the faulting address and
/// ends the run with [`EXIT_FAULT`](crate::semihost::EXIT_FAULT).
#[doc(hidden)]
#[macro_export]
macro_rules! fault_handler {
    () => {
        #[cortex_m_rt::exception]
        unsafe fn HardFault(frame: &cortex_m_rt::ExceptionFrame) -> ! {
            $crate::semihost::fault(frame.pc() as usize)
        }
    };
}
