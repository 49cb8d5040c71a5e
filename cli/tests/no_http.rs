//! Built without the `http` feature (`--no-default-features`), URLs and
//! Hub names are refused with a message that says why and what to do.
#![cfg(not(feature = "http"))]

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_safetensors-nano");

#[test]
fn urls_need_the_http_feature() {
    for args in [
        &["inspect", "https://example.invalid/m.safetensors"][..],
        &["verify", "hf://org/name"],
        &["diff", "hf://org/name", "hf://org/name@v2"],
    ] {
        let out = Command::new(BIN).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("without the `http` feature"), "{err}");
    }
    let out = Command::new(BIN)
        .args(["inspect", "--json", "hf://org/name"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["kind"], "NoHttp");
}
