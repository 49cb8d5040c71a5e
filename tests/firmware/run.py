#!/usr/bin/env python3
"""Builds the firmware for every board, runs it under QEMU, and checks what it prints.

The boards are build.rs's table (board, target); each one's QEMU command is
its target's runner in firmware/.cargo/config.toml, and its flash size is in
firmware/boards/<board>/memory.x. For each board:

1. Trains the digit model once (scripts/train_digits.py) into firmware/model/,
   and computes the host reference with numpy (tests/firmware/reference.py).
2. Builds the firmware (release: opt-level z, fat LTO), the size probes and
   the adversarial-suite binary for the board's target.
3. Runs the firmware: both passes (typed views of mapped flash; FlashReader
   over a flash driver) must print the host's predictions, accuracy, logits
   hash and predictions hash, bit for bit; the run's stack peak plus the
   static data (.data, .bss) is its RAM, which must stay within the board's
   budget (8,192 B on the 16 KB chips).
4. Measures .text of parser + validator (probe minus baseline; budget on
   thumbv7em), and the stack high-water of parsing (budget on every board).
5. Builds again with a malformed model and a pack of hostile files (in
   parts where the flash cannot hold the pack): the model must give the
   typed error and exit status 2, never a panic or fault; every hostile file
   must get the reference's verdict (or the documented difference), the same
   through the flash path, within the stack budget.
6. Runs the adversarial suite (tests/adversarial/cases.bin against
   verdicts.txt, the files the native and wasm32 runs use) through the
   shared runner (tests/support, module verdicts) in the `verdicts` binary:
   every case must run and give the same verdict line.

Once, on the default target (thumbv7em): proves no allocator crate is linked
(a canary that adds `extern crate alloc` fails to build; `cargo tree` shows no
`alloc`/`std` feature of safetensors-nano) and that the defmt feature compiles.

Prints one line per board that a CI log can be compared by:
`firmware <board>: <correct>/<total> correct, ram <N> B (stack <S> B + static <T> B), flash <F> B`.
`--board NAME` (repeatable) runs only those boards.
Exits non-zero on any failure. Output and ELF files go to test-output/firmware/<board>/.
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
import port  # noqa: E402
import reference  # noqa: E402

FIRMWARE = os.path.join(REPO, "firmware")
DEFAULT_TARGET = "thumbv7em-none-eabihf"
# cargo runs in firmware/; a CARGO_TARGET_DIR from the environment moves its output.
TARGET_DIR = os.path.join(FIRMWARE, os.environ.get("CARGO_TARGET_DIR") or "target")
OUT = os.path.join(REPO, "test-output", "firmware")
MODEL_DIR = os.path.join(FIRMWARE, "model")
QEMU_TIMEOUT = int(os.environ.get("FIRMWARE_QEMU_TIMEOUT", "120"))
ADVERSARIAL = os.path.join(REPO, "tests", "adversarial")
# The adversarial run takes well under a second; a hang must not cost two minutes.
VERDICTS_TIMEOUT = min(QEMU_TIMEOUT, 30)

# Budgets: the project's goals, 8 KB of parser code (on thumbv7em) and 1 KB
# of parse stack on any input and every board, enforced (the hostile files
# give the stack's worst case); half the RAM of a 16 KB chip for the whole
# run. FIRMWARE_TEXT_LIMIT / FIRMWARE_STACK_LIMIT raise them for an experiment.
TEXT_GOAL = 8 * 1024
STACK_GOAL = 1024
TEXT_LIMIT = int(os.environ.get("FIRMWARE_TEXT_LIMIT", TEXT_GOAL))
STACK_LIMIT = int(os.environ.get("FIRMWARE_STACK_LIMIT", STACK_GOAL))
TEXT_BUDGET_TARGET = "thumbv7em-none-eabihf"
# The whole run's RAM budget per board (None: reported only). A board
# build.rs knows must have an entry: a port states its budget.
RAM_BUDGETS = {"mps2-an386": None, "microbit": 8192, "sifive_e": 8192}
MIN_ACCURACY = 0.90
# Flash a hostile build keeps free beside the stress pack (code grows a little).
HOSTILE_FLASH_MARGIN = 8 * 1024

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


def boards():
    """[(board, target, qemu command, flash bytes)] from build.rs, the runners and the memory.x files."""
    import shlex
    import tomllib
    src = open(os.path.join(FIRMWARE, "build.rs")).read()
    table = re.search(r"const BOARDS: &\[\(&str, &str\)\] = &\[(.*?)\];", src, re.S)
    if not table:
        raise SystemExit("firmware test: build.rs has no BOARDS table")
    with open(os.path.join(FIRMWARE, ".cargo", "config.toml"), "rb") as f:
        config = tomllib.load(f)
    out = []
    for board, target in re.findall(r'\("([^"]+)",\s*"([^"]+)"\)', table.group(1)):
        runner = config.get("target", {}).get(target, {}).get("runner")
        if not runner:
            raise SystemExit(f"firmware test: no runner for {target} ({board}) in firmware/.cargo/config.toml")
        memory = open(os.path.join(FIRMWARE, "boards", board, "memory.x")).read()
        m = re.search(r"FLASH\s*:\s*ORIGIN\s*=\s*\w+\s*,\s*LENGTH\s*=\s*(\d+)([KM]?)", memory)
        flash = int(m.group(1)) * {"": 1, "K": 1024, "M": 1024 * 1024}[m.group(2)]
        out.append((board, target, shlex.split(runner), flash))
    return out


def cargo(*args, env=None, check_rc=True):
    # From firmware/, so that firmware/.cargo/config.toml (runners, linker scripts) applies.
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


def qemu(command, elf_path, log_path, timeout=QEMU_TIMEOUT):
    t = time.time()
    try:
        p = subprocess.run(command + [elf_path], capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out = "timeout", (e.stdout or b"").decode(errors="replace")
    with open(log_path, "w") as f:
        f.write(out)
    print(f"  $ {command[0]} {' '.join(command[1:3])} ... {os.path.relpath(elf_path, REPO)} "
          f"({time.time() - t:.1f}s, exit {rc})")
    return rc, out


def fields(line):
    """key=value pairs of one output line (values may be quoted)."""
    return {k: v.strip('"') for k, v in re.findall(r'(\w+)=("[^"]*"|\S+)', line)}


def lines_starting(out, prefix):
    return [fields(l) for l in out.splitlines() if l.startswith(prefix)]


def predictions(out, pass_name):
    """The digits of `preds pass=<pass_name> at=<i> <digits>` lines, joined in order ("" if a gap)."""
    got = ""
    for l in out.splitlines():
        m = re.fullmatch(rf"preds pass={pass_name} at=(\d+) (\d+)", l)
        if m:
            if int(m.group(1)) != len(got):
                return ""
            got += m.group(2)
    return got


class Board:
    def __init__(self, name, target, qemu_cmd, flash):
        self.name, self.target, self.qemu_cmd, self.flash_size = name, target, qemu_cmd, flash
        self.release = os.path.join(TARGET_DIR, target, "release")
        self.out = os.path.join(OUT, name)
        os.makedirs(self.out, exist_ok=True)

    def save_elf(self, name, as_name):
        dst = os.path.join(self.out, as_name)
        shutil.copyfile(os.path.join(self.release, name), dst)
        return dst

    def run(self, elf_path, log_name, timeout=QEMU_TIMEOUT):
        return qemu(self.qemu_cmd, elf_path, os.path.join(self.out, log_name), timeout)


def main(argv):
    os.makedirs(OUT, exist_ok=True)
    python = sys.executable
    only = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--board"]

    section("model: train and save with the reference writer")
    subprocess.run([python, os.path.join(REPO, "scripts", "train_digits.py"), "--out", MODEL_DIR],
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

    all_boards = [Board(*b) for b in boards()]
    print(f"  boards: {', '.join(f'{b.name} ({b.target})' for b in all_boards)}")
    for b in all_boards:
        check(b.name in RAM_BUDGETS, f"{b.name}: has a RAM budget in tests/firmware/run.py (None to only report)")
    section("porting steps (firmware/README.md) against the boards")
    port.check_port_steps(REPO, [(b.name, b.target) for b in all_boards], check)
    chosen = [b for b in all_boards if not only or b.name in only]
    if only and len(chosen) != len(set(only)):
        raise SystemExit(f"firmware test: unknown board in {only}; the boards are {[b.name for b in all_boards]}")

    if any(b.target == DEFAULT_TARGET for b in chosen):
        no_allocator()

    stress = cases.stress_cases(model)
    bad_model, bad_tensor = cases.malformed(model)
    bad_path = os.path.join(OUT, "malformed.safetensors")
    with open(bad_path, "wb") as f:
        f.write(bad_model)
    try:
        __import__("safetensors").deserialize(bad_model)
        check(False, "the reference rejects the malformed model")
    except Exception as e:
        check("invalid offset" in str(e), "the reference rejects the malformed model", e)
    reference_ok = []
    for case in stress:
        try:
            __import__("safetensors").deserialize(case["data"])
            reference_ok.append(True)
        except Exception:
            reference_ok.append(False)

    summaries = []
    for b in chosen:
        summaries.append(run_board(b, model, samples, expected, stress, reference_ok, bad_path, bad_tensor))

    section("summary")
    for line in summaries:
        print(line["detail"])
    for line in summaries:
        print(line["line"])
    print(f"firmware: {passed} passed, {failed} failed")
    return 1 if failed else 0


def no_allocator():
    section("no allocator in the dependency graph (thumbv7em)")
    sources = "".join(open(os.path.join(d, f)).read()
                      for d, _, fs in os.walk(os.path.join(FIRMWARE, "src")) for f in fs if f.endswith(".rs"))
    check("global_allocator" not in sources, "the firmware declares no #[global_allocator]")
    tree = cargo("tree", "--target", DEFAULT_TARGET, "-e", "normal,features", "-i", "safetensors-nano").stdout
    core_features = set(re.findall(r'safetensors-nano feature "([\w-]+)"', tree))
    print(f"  safetensors-nano features in the firmware: {sorted(core_features)}")
    check(not ({"alloc", "std"} & core_features), "safetensors-nano is built without alloc and std")
    canary = cargo("build", "--release", "--bin", "firmware", "--features", "alloc-canary", check_rc=False)
    check(canary.returncode != 0 and "no global memory allocator found" in canary.stderr,
          "a canary that links the alloc crate fails to build (so nothing else links it, and no "
          "dependency provides an allocator)", canary.stderr[-400:])
    defmt = cargo("check", "--release", "--bin", "firmware", "--features", "defmt", check_rc=False)
    check(defmt.returncode == 0, "the firmware's defmt feature (safetensors-nano/defmt) compiles for the target",
          defmt.stderr[-400:])


def run_board(b, model, samples, expected, stress, reference_ok, bad_path, bad_tensor):
    """Everything on one board; returns its summary lines."""
    section(f"{b.name}: build for {b.target} (release: opt-level z, fat LTO)")
    cargo("build", "--release", "--bins", "--target", b.target)
    firmware_elf = b.save_elf("firmware", "firmware.elf")
    probe_elf = b.save_elf("size-probe", "size-probe.elf")
    baseline_elf = b.save_elf("size-baseline", "size-baseline.elf")
    verdicts_elf = b.save_elf("verdicts", "verdicts.elf")

    section(f"{b.name}: run under QEMU ({' '.join(b.qemu_cmd[:3])})")
    rc, out = b.run(firmware_elf, "firmware.log")
    print("\n".join("  | " + (l if len(l) < 160 else l[:157] + "...") for l in out.splitlines()
                    if not l.startswith("preds ")))
    check(rc == 0, f"{b.name}: firmware exits with status 0", rc)
    check("result=pass" in out, f"{b.name}: firmware reports result=pass")
    head = fields(out.splitlines()[0]) if out else {}
    check(head.get("board") == b.name, f"{b.name}: the firmware says it runs on {b.name}", head.get("board"))
    correct = None
    for p in ("mapped", "flash"):
        got = next((f for f in lines_starting(out, "pass=") if f.get("pass") == p), None)
        preds = predictions(out, p)
        if not check(got is not None and preds, f"{b.name}: {p} pass printed its results"):
            continue
        check(preds == expected["predictions"], f"{b.name}: {p} pass: predictions equal the host's")
        check((int(got["correct"]), int(got["total"])) == (expected["correct"], expected["total"]),
              f"{b.name}: {p} pass: accuracy {got['correct']}/{got['total']} equals the host's "
              f"{expected['correct']}/{expected['total']}")
        check(int(got["logits_hash"], 16) == expected["logits_hash"],
              f"{b.name}: {p} pass: logits hash {got['logits_hash']} equals numpy's (bit-exact f32)")
        check(int(got["predictions_hash"], 16) == expected["predictions_hash"],
              f"{b.name}: {p} pass: predictions hash equals the host's")
        correct = (int(got["correct"]), int(got["total"]))
    check(int(head.get("model_addr", "1"), 16) % 8 == 0, f"{b.name}: the model sits 8-byte aligned in flash "
          f"(at {head.get('model_addr')}), so typed views need no copy")
    flash_line = (lines_starting(out, "flash ") or [{}])[0]
    check(int(flash_line.get("read_bytes", 0)) > 0, f"{b.name}: the flash pass read through the driver",
          flash_line)

    section(f"{b.name}: footprint")
    flash, static = elf.memory_use(firmware_elf)
    ram_line = (lines_starting(out, "ram ") or [{}])[0]
    stack = int(ram_line.get("stack", -1))
    ram = stack + static
    budget = RAM_BUDGETS.get(b.name)
    check(stack > 0, f"{b.name}: the run measured its stack peak", ram_line)
    print(f"  ram {ram} B = stack peak {stack} B + static {static} B (.data, .bss); flash {flash} B "
          f"of {b.flash_size} (model + samples {len(model) + len(samples)})")
    if budget is not None:
        check(ram <= budget, f"{b.name}: ram {ram} B within the {budget}-byte budget", ram)
    sizes = {name: elf.section_sizes(path) for name, path in (("probe", probe_elf), ("baseline", baseline_elf))}
    text = sizes["probe"].get(".text", 0) - sizes["baseline"].get(".text", 0)
    rodata = sizes["probe"].get(".rodata", 0) - sizes["baseline"].get(".rodata", 0)
    rc_probe, _ = b.run(probe_elf, "size-probe.log")
    check(rc_probe == 0, f"{b.name}: the size probe parses the model under QEMU (so it measures working code)",
          rc_probe)
    print(f"  parser + validator .text on {b.target}: {text} bytes, .rodata {rodata} bytes")
    baseline_funcs = {n for _, n in elf.function_sizes(baseline_elf)}
    own = [(size, elf.demangle(name)) for size, name in elf.function_sizes(probe_elf)
           if name not in baseline_funcs]
    with open(os.path.join(b.out, "size-probe-functions.txt"), "w") as f:
        f.writelines(f"{size:6} {name}\n" for size, name in own)
    print(f"  largest functions (all in test-output/firmware/{b.name}/size-probe-functions.txt):")
    for size, name in own[:8]:
        print(f"    {size:6} bytes  {name if len(name) < 100 else name[:97] + '...'}")
    if b.target == TEXT_BUDGET_TARGET:
        check(text <= TEXT_LIMIT, f"{b.name}: parser .text within the {TEXT_LIMIT}-byte budget", text)
    parse_stacks = [int(f["stack"]) for f in lines_starting(out, "parse ")]
    header_stacks = [int(f["stack"]) for f in lines_starting(out, "flash_header ")]
    for p in lines_starting(out, "pass="):
        print(f"  stack of the whole {p['pass']} pass (buffers, tables, inference): {p['stack']} bytes")

    section(f"{b.name}: hostile builds (malformed model, {len(stress)} hostile files)")
    code_flash = flash
    room = b.flash_size - code_flash - HOSTILE_FLASH_MARGIN
    parts = cases.pack_parts(stress, room)
    print(f"  {len(parts)} part(s) for {b.flash_size} B of flash (the program takes {code_flash} B)")
    verdicts, max_parse, max_header, mismatches = [], 0, 0, []
    first = 0
    for i, part in enumerate(parts):
        pack_path = os.path.join(b.out, f"stress-{i}.bin")
        with open(pack_path, "wb") as f:
            f.write(cases.pack(part))
        cargo("build", "--release", "--bin", "firmware", "--target", b.target,
              env={"FIRMWARE_MODEL": bad_path, "FIRMWARE_STRESS": pack_path})
        hostile_elf = b.save_elf("firmware", f"firmware-hostile-{i}.elf")
        rc, out = b.run(hostile_elf, f"firmware-hostile-{i}.log")
        err = next(iter(lines_starting(out, "error ")), {})
        check(rc == EXIT_FORMAT, f"{b.name}: part {i}: malformed model gives exit status {EXIT_FORMAT} "
              f"(typed error)", rc)
        check(err.get("kind") == "InvalidOffset" and err.get("tensor") == bad_tensor,
              f"{b.name}: part {i}: error InvalidOffset naming tensor {bad_tensor!r}", err)
        check(not re.search(r"^(panic|fault)", out, re.M), f"{b.name}: part {i}: no panic and no fault")
        got = lines_starting(out, "case=")
        check(len(got) == len(part), f"{b.name}: part {i}: all {len(part)} hostile files were parsed", len(got))
        for j, (case, v) in enumerate(zip(part, got)):
            ref_ok = reference_ok[first + j]
            ours = v["parse"]
            good = ours == case["expect"] if case["expect"] is not None else ours.startswith("ok:") == ref_ok
            if not good or v["header"] != ours:
                mismatches.append(f"{case['label']}: parse={ours} header={v['header']} reference "
                                  f"{'accepts' if ref_ok else 'rejects'} expect={case['expect']}")
            max_parse = max(max_parse, int(v["parse_stack"]))
            max_header = max(max_header, int(v["header_stack"]))
            verdicts.append((case, v))
        first += len(part)
    for m in mismatches:
        print(f"    {m}")
    deepest = sorted(((int(v["parse_stack"]), c["label"], v["parse"]) for c, v in verdicts), reverse=True)[:3]
    for s, label, verdict in deepest:
        print(f"    parse stack {s:5} bytes: {label} ({verdict})")
    check(not mismatches, f"{b.name}: each hostile file gets the reference's verdict (or the documented "
          "difference), and FlashReader gives the parser's verdict")
    worst = max(max_parse, max_header, *parse_stacks, *header_stacks)
    print(f"  stack high-water of parsing: {max(parse_stacks + [max_parse])} bytes in place, "
          f"{max(header_stacks + [max_header])} bytes through FlashReader (goal {STACK_GOAL})")
    check(worst <= STACK_LIMIT, f"{b.name}: parse stack on every hostile file within the {STACK_LIMIT}-byte "
          "budget", worst)

    section(f"{b.name}: adversarial suite (same cases.bin and verdicts.txt as native and wasm32)")
    adv = adversarial(b, verdicts_elf)

    c, t = correct or (0, expected["total"])
    return {
        "line": f"firmware {b.name}: {c}/{t} correct, ram {ram} B (stack {stack} B + static {static} B), "
                f"flash {flash} B",
        "detail": f"  {b.name} ({b.target}): parser .text {text} B; parse stack {worst} B; "
                  f"adversarial suite {adv}",
    }


def adversarial(b, elf_path):
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
    rc, out = b.run(elf_path, "verdicts.log", timeout=VERDICTS_TIMEOUT)
    shown = out.splitlines()
    for l in shown[:20]:
        print("  | " + (l if len(l) < 160 else l[:157] + "..."))
    if len(shown) > 20:
        print(f"  | ... ({len(shown) - 20} more lines in test-output/firmware/{b.name}/verdicts.log)")
    check(not re.search(r"^(panic|fault)", out, re.M), f"{b.name}: adversarial suite: no panic and no fault")
    final = (lines_starting(out, "verdicts cases=") or [{}])[-1]
    cases_run = int(final.get("cases", -1))
    mismatches = int(final.get("mismatches", -1))
    check(rc == 0, f"{b.name}: adversarial suite: the firmware exits with status 0", rc)
    check(cases_run == len(lines) and len(lines) > 0,
          f"{b.name}: adversarial suite: all {len(lines)} cases of verdicts.txt ran", final or out[-400:])
    check(mismatches == 0, f"{b.name}: adversarial suite: every verdict equals verdicts.txt (the native and "
          f"wasm32 verdicts), {mismatches} mismatches", final)
    return f"{cases_run} cases, {mismatches} mismatches (stack {final.get('stack', '?')} B)"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
