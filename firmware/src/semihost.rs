//! Ending a QEMU run: the exit status over semihosting, and the panic and
//! hard-fault handlers that turn either into a status instead of a hang.
//! Used by the test firmware and the adversarial-suite binary; each installs
//! the handlers with [`exit_on_panic_and_fault!`](crate::exit_on_panic_and_fault).

use cortex_m_rt::ExceptionFrame;
use cortex_m_semihosting::hprintln;

/// Status when the firmware panicked.
pub const EXIT_PANIC: u32 = 101;
/// Status when the CPU took a hard fault.
pub const EXIT_FAULT: u32 = 102;

/// Ends the QEMU run with `code` (semihosting SYS_EXIT_EXTENDED).
pub fn exit(code: u32) -> ! {
    const SYS_EXIT_EXTENDED: usize = 0x20;
    const ADP_STOPPED_APPLICATION_EXIT: u32 = 0x2_0026;
    let block = [ADP_STOPPED_APPLICATION_EXIT, code];
    // SAFETY: a semihosting call with a valid two-word parameter block.
    unsafe { cortex_m_semihosting::syscall(SYS_EXIT_EXTENDED, &block) };
    // Without a host that handles it, stop here.
    loop {
        cortex_m::asm::bkpt();
    }
}

/// Reports a panic and ends the run with [`EXIT_PANIC`].
pub fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("panic {}", info);
    exit(EXIT_PANIC)
}

/// Reports a hard fault and ends the run with [`EXIT_FAULT`].
pub fn fault(frame: &ExceptionFrame) -> ! {
    hprintln!("fault pc={:#010x}", frame.pc());
    exit(EXIT_FAULT)
}

/// Installs the panic handler ([`panic`]) and the hard-fault handler
/// ([`fault`]) in the binary that calls it (once, at the top level).
#[macro_export]
macro_rules! exit_on_panic_and_fault {
    () => {
        #[panic_handler]
        fn panic(info: &core::panic::PanicInfo) -> ! {
            $crate::semihost::panic(info)
        }

        #[cortex_m_rt::exception]
        unsafe fn HardFault(frame: &cortex_m_rt::ExceptionFrame) -> ! {
            $crate::semihost::fault(frame)
        }
    };
}
