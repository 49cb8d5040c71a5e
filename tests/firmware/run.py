#!/usr/bin/env python3
"""Builds the Cortex-M firmware, runs it under QEMU, and checks what it prints.

1. Trains the digit model (tests/python/train_digits.py) into firmware/model/.
2. Computes the host reference with numpy (tests/firmware/reference.py).
3. Builds the firmware (release: opt-level z, fat LTO) and the size probes.
4. Proves no allocator crate is linked: the firmware builds without a
   global allocator, and a canary build that only adds `extern crate alloc`
   fails for want of one; `cargo tree` shows no `alloc`/`std` feature of
   safetensors-nano.
5. Runs the firmware in qemu-system-arm (mps2-an386): both passes (typed
   views of mapped flash; FlashReader over a flash driver) must print the
   host's predictions, accuracy and logits hash, bit for bit.
6. Measures: .text of parser + validator (probe minus baseline), stack
   high-water of parsing (painted), table bytes per tensor, RAM.
7. Builds a second firmware with a malformed model and a pack of hostile
   files: the model must give the typed error and exit status 2, never a
   panic or fault; every hostile file must get the reference's verdict (or
   the documented difference), the same through the flash path, within the
   stack budget.
8. Runs the adversarial suite (tests/adversarial/cases.bin against
   verdicts.txt, the files the native and wasm32 runs use) through the
   shared runner (tests/support, module verdicts) in its own firmware binary
   (`verdicts`): every case must run and give the same verdict line.

Exits non-zero on any failure. Output and ELF files go to test-output/firmware/.
"""

import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import cases  # noqa: E402
import elf  # noqa: E402
import reference  # noqa: E402

FIRMWARE = os.path.join(REPO, "firmware")
TARGET = "thumbv7em-none-eabihf"
# cargo runs in firmware/; a CARGO_TARGET_DIR from the environment moves its output.
RELEASE = os.path.join(FIRMWARE, os.environ.get("CARGO_TARGET_DIR") or "target", TARGET, "release")
OUT = os.path.join(REPO, "test-output", "firmware")
MODEL_DIR = os.path.join(FIRMWARE, "model")
QEMU = ["qemu-system-arm", "-machine", "mps2-an386", "-cpu", "cortex-m4", "-nographic",
        "-semihosting-config", "enable=on,target=native", "-kernel"]
QEMU_TIMEOUT = int(os.environ.get("FIRMWARE_QEMU_TIMEOUT", "120"))
ADVERSARIAL = os.path.join(REPO, "tests", "adversarial")
# The adversarial run takes well under a second; a hang must not cost two minutes.
VERDICTS_TIMEOUT = min(QEMU_TIMEOUT, 30)

# Budgets: the project's goals, 8 KB of parser code and 1 KB of parse stack
# on any input, enforced (the hostile files give the stack's worst case).
# FIRMWARE_TEXT_LIMIT / FIRMWARE_STACK_LIMIT raise them for an experiment.
TEXT_GOAL = 8 * 1024
STACK_GOAL = 1024
TEXT_LIMIT = int(os.environ.get("FIRMWARE_TEXT_LIMIT", TEXT_GOAL))
STACK_LIMIT = int(os.environ.get("FIRMWARE_STACK_LIMIT", STACK_GOAL))
MIN_ACCURACY = 0.90

EXIT_FORMAT = 2

passed = 0
failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"  ok   {what}")
    else:
        failed += 1
        print(f"  FAIL {what}" + (f": {detail}" if detail else ""))
    return ok


def section(title):
    print(f"\n== {title}")
    sys.stdout.flush()


def cargo(*args, env=None, check_rc=True):
    # From firmware/, so that firmware/.cargo/config.toml (target, linker script) applies.
    cmd = ["cargo", *args]
    full_env = dict(os.environ)
    for var in ("FIRMWARE_MODEL", "FIRMWARE_SAMPLES", "FIRMWARE_STRESS"):
        full_env.pop(var, None)
    full_env.update(env or {})
    t = time.time()
    p = subprocess.run(cmd, env=full_env, capture_output=True, text=True, cwd=FIRMWARE)
    print(f"  $ (cd firmware && {' '.join(cmd)}) ({time.time() - t:.1f}s, exit {p.returncode})")
    if check_rc and p.returncode != 0:
        print(p.stdout[-4000:], p.stderr[-4000:], sep="\n")
        raise SystemExit(f"firmware test: `{' '.join(cmd)}` failed")
    return p


def qemu(elf_path, log_name, timeout=QEMU_TIMEOUT):
    t = time.time()
    try:
        p = subprocess.run(QEMU + [elf_path], capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out = "timeout", (e.stdout or b"").decode(errors="replace")
    with open(os.path.join(OUT, log_name), "w") as f:
        f.write(out)
    print(f"  $ qemu-system-arm ... {os.path.relpath(elf_path, REPO)} ({time.time() - t:.1f}s, exit {rc})")
    return rc, out


def fields(line):
    """key=value pairs of one output line (values may be quoted)."""
    return {k: v.strip('"') for k, v in re.findall(r'(\w+)=("[^"]*"|\S+)', line)}


def lines_starting(out, prefix):
    return [fields(l) for l in out.splitlines() if l.startswith(prefix)]


def save_elf(name, as_name):
    dst = os.path.join(OUT, as_name)
    shutil.copyfile(os.path.join(RELEASE, name), dst)
    return dst


def main():
    os.makedirs(OUT, exist_ok=True)
    python = sys.executable

    section("model: train and save with the reference writer")
    subprocess.run([python, os.path.join(REPO, "tests", "python", "train_digits.py"), "--out", MODEL_DIR],
                   check=True)
    model = open(os.path.join(MODEL_DIR, "model.safetensors"), "rb").read()
    samples = open(os.path.join(MODEL_DIR, "samples.safetensors"), "rb").read()
    dtypes = sorted({info["dtype"] for _, info in __import__("safetensors").deserialize(model)})
    print(f"  model {len(model)} bytes, dtypes {dtypes}; samples {len(samples)} bytes")
    check({"F32", "F16", "BF16", "I8"} <= set(dtypes), "model mixes F32, F16, BF16 and I8 tensors", dtypes)
    expected = reference.evaluate(model, samples)
    host_acc = expected["correct"] / expected["total"]
    print(f"  host reference: {expected['correct']}/{expected['total']} correct ({host_acc:.2%}), "
          f"logits hash {expected['logits_hash']:#010x}")
    check(host_acc >= MIN_ACCURACY, f"host accuracy at least {MIN_ACCURACY:.0%}", f"{host_acc:.2%}")

    section("build (release: opt-level z, fat LTO)")
    cargo("build", "--release", "--bins")
    firmware_elf = save_elf("firmware", "firmware.elf")
    probe_elf = save_elf("size-probe", "size-probe.elf")
    baseline_elf = save_elf("size-baseline", "size-baseline.elf")
    verdicts_elf = save_elf("verdicts", "verdicts.elf")

    section("no allocator in the dependency graph")
    sources = "".join(open(os.path.join(d, f)).read()
                      for d, _, fs in os.walk(os.path.join(FIRMWARE, "src")) for f in fs if f.endswith(".rs"))
    check("global_allocator" not in sources, "the firmware declares no #[global_allocator]")
    tree = cargo("tree", "--target", TARGET, "-e", "normal,features", "-i", "safetensors-nano").stdout
    core_features = set(re.findall(r'safetensors-nano feature "([\w-]+)"', tree))
    print(f"  safetensors-nano features in the firmware: {sorted(core_features)}")
    check(not ({"alloc", "std"} & core_features), "safetensors-nano is built without alloc and std")
    canary = cargo("build", "--release", "--bin", "firmware", "--features", "alloc-canary", check_rc=False)
    check(canary.returncode != 0 and "no global memory allocator found" in canary.stderr,
          "a canary that links the alloc crate fails to build (so nothing else links it, and no "
          "dependency provides an allocator)", canary.stderr[-400:])
    # The canary left the firmware binary alone (it failed); the saved copy is the real one.

    defmt = cargo("check", "--release", "--bin", "firmware", "--features", "defmt", check_rc=False)
    check(defmt.returncode == 0, "the firmware's defmt feature (safetensors-nano/defmt) compiles for the target",
          defmt.stderr[-400:])

    section("run under QEMU (mps2-an386, Cortex-M4F)")
    rc, out = qemu(firmware_elf, "firmware.log")
    print("\n".join("  | " + (l if len(l) < 160 else l[:157] + "...") for l in out.splitlines()))
    check(rc == 0, "firmware exits with status 0", rc)
    check("result=pass" in out, "firmware reports result=pass")
    for p in ("mapped", "flash"):
        got = next((f for f in lines_starting(out, "pass=") if f.get("pass") == p), None)
        preds = next((l.split()[-1] for l in out.splitlines() if l.startswith(f"preds pass={p} ")), None)
        if not check(got is not None and preds is not None, f"{p} pass printed its results"):
            continue
        check(preds == expected["predictions"], f"{p} pass: predictions equal the host's")
        check((int(got["correct"]), int(got["total"])) == (expected["correct"], expected["total"]),
              f"{p} pass: accuracy {got['correct']}/{got['total']} equals the host's "
              f"{expected['correct']}/{expected['total']}")
        check(int(got["logits_hash"], 16) == expected["logits_hash"],
              f"{p} pass: logits hash {got['logits_hash']} equals the host's (bit-exact f32)")
    head = fields(out.splitlines()[0]) if out else {}
    check(int(head.get("model_addr", "1"), 16) % 8 == 0, f"the model sits 8-byte aligned in flash "
          f"(at {head.get('model_addr')}), so typed views need no copy")
    flash = (lines_starting(out, "flash ") or [{}])[0]
    check(int(flash.get("read_bytes", 0)) > 0, "the flash pass read through the driver",
          flash)

    section("footprint")
    sizes = {name: elf.section_sizes(path) for name, path in
             (("firmware", firmware_elf), ("probe", probe_elf), ("baseline", baseline_elf))}
    text = sizes["probe"].get(".text", 0) - sizes["baseline"].get(".text", 0)
    rodata = sizes["probe"].get(".rodata", 0) - sizes["baseline"].get(".rodata", 0)
    rc_probe, _ = qemu(probe_elf, "size-probe.log")
    check(rc_probe == 0, "the size probe parses the model under QEMU (so it measures working code)", rc_probe)
    print(f"  parser + validator .text: {text} bytes (goal {TEXT_GOAL}), .rodata {rodata} bytes")
    baseline_funcs = {n for _, n in elf.function_sizes(baseline_elf)}
    groups = {}
    for size, name in elf.function_sizes(probe_elf):
        if name in baseline_funcs:
            continue
        key = ("safetensors_nano" if "safetensors_nano" in name else
               "core float parsing (dec2flt)" if "dec2flt" in name else
               "soft-float builtins" if "float" in name and "compiler_builtins" in name else
               "core sort" if "sort" in name else
               "memcpy/memset" if re.search(r"mem(cpy|set|move)", name) else
               "core str/utf8" if ("str" in name or "utf8" in name) else "other")
        groups[key] = groups.get(key, 0) + size
    for key, size in sorted(groups.items(), key=lambda kv: -kv[1]):
        print(f"    {size:6} bytes  {key}")
    # Where the bytes go, function by function (all of them in test-output).
    own = [(size, elf.demangle(name)) for size, name in elf.function_sizes(probe_elf)
           if name not in baseline_funcs]
    with open(os.path.join(OUT, "size-probe-functions.txt"), "w") as f:
        f.writelines(f"{size:6} {name}\n" for size, name in own)
    print("  largest functions (all in test-output/firmware/size-probe-functions.txt):")
    for size, name in own[:12]:
        print(f"    {size:6} bytes  {name if len(name) < 100 else name[:97] + '...'}")
    check(text <= TEXT_LIMIT, f"parser .text within the {TEXT_LIMIT}-byte budget", text)
    parse_stacks = [int(f["stack"]) for f in lines_starting(out, "parse ")]
    header_stacks = [int(f["stack"]) for f in lines_starting(out, "flash_header ")]
    slot = int(head.get("slot_bytes", 0))
    print(f"  stack high-water of parsing: {max(parse_stacks, default=0)} bytes in place, "
          f"{max(header_stacks, default=0)} bytes through FlashReader (goal {STACK_GOAL})")
    print(f"  (each stack figure includes {head.get('stack_overhead')} bytes of the measuring call; "
          f"an Error is {head.get('error_bytes')} bytes)")
    print(f"  table: {slot} bytes per tensor or metadata entry "
          f"({head.get('table_bytes')} bytes for 16); header buffer {head.get('header_buf')} bytes")
    fw = sizes["firmware"]
    print(f"  whole test firmware: .text {fw.get('.text')} .rodata {fw.get('.rodata')} (model + samples "
          f"{len(model) + len(samples)}) .data {fw.get('.data', 0)} .bss {fw.get('.bss', 0)}; no heap")
    for p in lines_starting(out, "pass="):
        print(f"  stack of the whole {p['pass']} pass (buffers, tables, inference): {p['stack']} bytes")

    section("second build: malformed model and hostile files")
    bad_model, bad_tensor = cases.malformed(model)
    stress = cases.stress_cases(model)
    bad_path = os.path.join(OUT, "malformed.safetensors")
    pack_path = os.path.join(OUT, "stress.bin")
    with open(bad_path, "wb") as f:
        f.write(bad_model)
    with open(pack_path, "wb") as f:
        f.write(cases.pack(stress))
    try:
        __import__("safetensors").deserialize(bad_model)
        check(False, "the reference rejects the malformed model")
    except Exception as e:
        check("invalid offset" in str(e), "the reference rejects the malformed model", e)
    cargo("build", "--release", "--bin", "firmware",
          env={"FIRMWARE_MODEL": bad_path, "FIRMWARE_STRESS": pack_path})
    hostile_elf = save_elf("firmware", "firmware-hostile.elf")
    rc, out = qemu(hostile_elf, "firmware-hostile.log")
    err = next(iter(lines_starting(out, "error ")), {})
    print(f"  | {next((l for l in out.splitlines() if l.startswith('error ')), '(no error line)')}")
    check(rc == EXIT_FORMAT, f"malformed model: exit status {EXIT_FORMAT} (typed error)", rc)
    check(err.get("kind") == "InvalidOffset" and err.get("tensor") == bad_tensor,
          f"malformed model: error InvalidOffset naming tensor {bad_tensor!r}", err)
    check(not re.search(r"^(panic|fault)", out, re.M), "no panic and no fault")
    verdicts = lines_starting(out, "case=")
    check(len(verdicts) == len(stress), f"all {len(stress)} hostile files were parsed", len(verdicts))
    mismatches = []
    max_parse = max_header = 0
    for case, v in zip(stress, verdicts):
        try:
            __import__("safetensors").deserialize(case["data"])
            ref_ok = True
        except Exception:
            ref_ok = False
        ours = v["parse"]
        if case["expect"] is not None:
            good = ours == case["expect"]
        else:
            good = ours.startswith("ok:") == ref_ok
        if not good or v["header"] != ours:
            mismatches.append(f"{case['label']}: parse={ours} header={v['header']} reference "
                              f"{'accepts' if ref_ok else 'rejects'} expect={case['expect']}")
        max_parse = max(max_parse, int(v["parse_stack"]))
        max_header = max(max_header, int(v["header_stack"]))
    for m in mismatches:
        print(f"    {m}")
    deepest = sorted(((int(v["parse_stack"]), c["label"], v["parse"]) for c, v in zip(stress, verdicts)),
                     reverse=True)[:5]
    for stack, label, verdict in deepest:
        print(f"    parse stack {stack:5} bytes: {label} ({verdict})")
    check(not mismatches, "each hostile file gets the reference's verdict (or the documented difference), "
          "and FlashReader gives the parser's verdict")
    accepted = sum(v["parse"].startswith("ok:") for v in verdicts)
    print(f"  {len(verdicts)} files, {accepted} accepted; stack high-water of parsing over all of them: "
          f"{max_parse} bytes in place, {max_header} bytes through FlashReader (goal {STACK_GOAL})")
    worst = max(max_parse, max_header, *parse_stacks, *header_stacks)
    check(worst <= STACK_LIMIT, f"parse stack on every hostile file within the {STACK_LIMIT}-byte budget", worst)

    section("adversarial suite on the Cortex-M (same cases.bin and verdicts.txt as native and wasm32)")
    adv = adversarial(verdicts_elf)

    section("summary")
    print(f"  accuracy: host {expected['correct']}/{expected['total']}, QEMU the same in both passes; "
          f"parser .text {text} B; parse stack {worst} B; {slot} B per table entry; "
          f"adversarial suite {adv}")
    print(f"firmware: {passed} passed, {failed} failed")
    return 1 if failed else 0


def adversarial(elf_path):
    """Runs the `verdicts` firmware; returns a one-line summary."""
    import json
    with open(os.path.join(ADVERSARIAL, "verdicts.txt")) as f:
        lines = [l for l in f.read().splitlines() if l]
    with open(os.path.join(ADVERSARIAL, "cases.json")) as f:
        source = len(json.load(f)["cases"])
    with open(os.path.join(ADVERSARIAL, "cases.bin"), "rb") as f:
        head = f.read(12)
    in_bin = int.from_bytes(head[8:12], "little") if len(head) == 12 else None
    check(len(lines) == source == in_bin, f"cases.json, cases.bin and verdicts.txt hold the same number of "
          f"cases ({source}, {in_bin}, {len(lines)})")
    rc, out = qemu(elf_path, "verdicts.log", timeout=VERDICTS_TIMEOUT)
    shown = out.splitlines()
    for l in shown[:40]:
        print("  | " + (l if len(l) < 160 else l[:157] + "..."))
    if len(shown) > 40:
        print(f"  | ... ({len(shown) - 40} more lines in test-output/firmware/verdicts.log)")
    check(not re.search(r"^(panic|fault)", out, re.M), "adversarial suite: no panic and no fault")
    final = (lines_starting(out, "verdicts cases=") or [{}])[-1]
    cases_run = int(final.get("cases", -1))
    mismatches = int(final.get("mismatches", -1))
    check(rc == 0, "adversarial suite: the firmware exits with status 0", rc)
    check(cases_run == len(lines) and len(lines) > 0,
          f"adversarial suite: all {len(lines)} cases of verdicts.txt ran on the Cortex-M", final or out[-400:])
    check(mismatches == 0, f"adversarial suite: every verdict equals verdicts.txt (the native and wasm32 "
          f"verdicts), {mismatches} mismatches", final)
    return f"{cases_run} cases, {mismatches} mismatches on thumbv7em (stack {final.get('stack', '?')} B)"


if __name__ == "__main__":
    sys.exit(main())
