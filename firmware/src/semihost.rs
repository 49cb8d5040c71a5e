//! Ending a QEMU run: the exit status over semihosting, output lines, and
//! the panic and fault handlers that turn either into a status instead of a
//! hang. Each binary installs the handlers with
//! [`exit_on_panic_and_fault!`](crate::exit_on_panic_and_fault).

use crate::board;

/// Status when the firmware panicked.
pub const EXIT_PANIC: u32 = 101;
/// Status when the CPU took a fault (Cortex-M HardFault, RISC-V exception).
pub const EXIT_FAULT: u32 = 102;

/// Semihosting operation that ends the run with a status code.
pub(crate) const SYS_EXIT_EXTENDED: usize = 0x20;
/// Its reason: the application exited.
pub(crate) const ADP_STOPPED_APPLICATION_EXIT: u32 = 0x2_0026;

/// Prints one line on the host's standard output (semihosting).
#[macro_export]
macro_rules! println {
    ($fmt:literal $($arg:tt)*) => {
        $crate::board::print(format_args!(concat!($fmt, "\n") $($arg)*))
    };
}

/// Ends the QEMU run with `code`.
pub fn exit(code: u32) -> ! {
    board::exit(code)
}

/// Reports a panic and ends the run with [`EXIT_PANIC`].
pub fn panic(info: &core::panic::PanicInfo) -> ! {
    crate::println!("panic {}", info);
    exit(EXIT_PANIC)
}

/// Reports a fault at instruction address `pc` and ends the run with [`EXIT_FAULT`].
pub fn fault(pc: usize) -> ! {
    crate::println!("fault pc={:#010x}", pc);
    exit(EXIT_FAULT)
}

/// Installs the panic handler ([`panic`]) and the board's fault handler
/// ([`fault`]) in the binary that calls it (once, at the top level).
#[macro_export]
macro_rules! exit_on_panic_and_fault {
    () => {
        #[panic_handler]
        fn panic(info: &core::panic::PanicInfo) -> ! {
            $crate::semihost::panic(info)
        }

        $crate::fault_handler!();
    };
}
