//! What every RISC-V board shares: riscv-rt's entry and start-up code,
//! semihosting through the `ebreak` sequence (riscv-semihosting), the stack
//! pointer, and the exception handler.

use core::fmt;

pub use riscv_rt::entry;

/// Writes to the host's standard output (semihosting).
pub fn print(args: fmt::Arguments<'_>) {
    riscv_semihosting::hprint!("{}", args);
}

/// Ends the QEMU run with `code` (semihosting SYS_EXIT_EXTENDED, which QEMU
/// also takes from RV32).
pub fn exit(code: u32) -> ! {
    let block = [crate::semihost::ADP_STOPPED_APPLICATION_EXIT, code];
    // SAFETY: a semihosting call with a valid two-word parameter block.
    unsafe { riscv_semihosting::syscall(crate::semihost::SYS_EXIT_EXTENDED, &block) };
    // Without a host that handles it, stop here.
    loop {
        riscv::asm::wfi();
    }
}

/// The current stack pointer.
#[inline(always)]
pub fn stack_pointer() -> usize {
    let sp: usize;
    // SAFETY: reads the `sp` register; touches no memory.
    unsafe { core::arch::asm!("mv {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
    sp
}

/// Installs riscv-rt's `ExceptionHandler`: it reports the faulting address
/// (`mepc`) and ends the run with [`EXIT_FAULT`](crate::semihost::EXIT_FAULT).
#[doc(hidden)]
#[macro_export]
macro_rules! fault_handler {
    () => {
        #[export_name = "ExceptionHandler"]
        fn exception_handler(_frame: &riscv_rt::TrapFrame) -> ! {
            $crate::semihost::fault(riscv::register::mepc::read())
        }
    };
}
