//! What `size-probe` and `size-baseline` share, so that the two programs
//! differ only by the parse: the embedded model and a minimal exit and panic
//! handler (no formatting: it would hide the parser's own cost in both).
//!
//! [`probe_common!`](crate::probe_common) expands it into each probe as its
//! module `probe`: compiled in the probe's own crate, the code is laid out
//! as it was measured before (a function of this library would be placed
//! elsewhere, and alignment padding would move the measured `.text` by a
//! few bytes).

/// Defines, in the probe binary that calls it (once, at the top level), the
/// module `probe`: `Aligned`, the model file `MODEL` (8-byte aligned in
/// flash), `exit(code)` and a panic handler that ends the run with status
/// 101, printing nothing.
#[macro_export]
macro_rules! probe_common {
    () => {
        /// What the size probes share (`safetensors_nano_firmware::probe`).
        mod probe {
            /// 8-byte alignment for the embedded file.
            #[repr(C, align(8))]
            pub struct Aligned<B: ?Sized>(pub B);

            /// The model file, placed 8-byte aligned in flash.
            pub static MODEL: &Aligned<[u8]> =
                &Aligned(*include_bytes!(env!("FIRMWARE_MODEL_PATH")));

            /// Ends the QEMU run with `code` (no formatting is linked).
            pub fn exit(code: u32) -> ! {
                $crate::board::exit(code)
            }

            #[panic_handler]
            fn panic(_: &core::panic::PanicInfo) -> ! {
                exit(101)
            }
        }
    };
}
