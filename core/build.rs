//! Declares `cfg(small)`: the builds that pick smaller code over speed only
//! large headers would notice (bytewise scans, heapsorts, an unhashed name
//! index). That is bare metal, and any build with `--cfg
//! safetensors_nano_small`, which is how `make test` also runs the whole
//! test suite through those paths on the host.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(safetensors_nano_small)");
    cfg_aliases::cfg_aliases! {
        small: { any(target_os = "none", safetensors_nano_small) },
    }
}
