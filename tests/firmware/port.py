"""Checks firmware/README.md's porting steps against the boards that exist.

The steps under "## Port to a fourth board" name files with the
placeholders `<board>`, `<module>` and `<target>`. For each board of
build.rs's table, every such path must exist, and the facts the steps put
in each file must be there and agree (the board's name, its target, its
module). Then the steps must be complete: outside the files they name (and
the READMEs), no file of the firmware, its test or the core names a board.
"""

import os
import re

STEPS_HEADING = "## Port to a fourth board"
# Files the steps change for every board (not per-board paths): a board's
# name may appear there and nowhere else.
NAMES_ALLOWED_IN = {"firmware/README.md"}


def steps(readme):
    """The porting section's text."""
    start = readme.index(STEPS_HEADING)
    end = readme.find("\n## ", start + len(STEPS_HEADING))
    return readme[start: end if end != -1 else len(readme)]


def check_port_steps(repo, boards, check):
    """`boards`: [(board, target)]. `check(ok, what, detail)` records a result."""
    readme = open(os.path.join(repo, "firmware", "README.md")).read()
    text = steps(readme)
    paths = sorted(set(re.findall(r"`((?:firmware|scripts|tests)/[^`\s]+)`", text)))
    per_board = [p for p in paths if "<" in p]
    shared = [p for p in paths if "<" not in p]
    check(len(per_board) >= 2 and len(shared) >= 4,
          f"the porting steps name per-board files {per_board} and shared files {shared}")
    def read(p):
        # A missing file fails the step that names it; its content checks then fail too.
        path = os.path.join(repo, p)
        return open(path).read() if os.path.isfile(path) else ""

    for board, target in boards:
        module = board.replace("-", "_")
        sub = lambda p: p.replace("<board>", board).replace("<module>", module).replace("<target>", target)
        for p in per_board:
            check(os.path.isfile(os.path.join(repo, sub(p))), f"port step for {board}: {sub(p)} exists")
        memory = read(f"firmware/boards/{board}/memory.x")
        check(re.search(r"\bFLASH\s*:\s*ORIGIN", memory) and re.search(r"\bRAM\s*:\s*ORIGIN", memory),
              f"port step for {board}: its memory.x has FLASH and RAM regions")
        module_src = read(f"firmware/src/board/{module}.rs")
        check(f'pub const NAME: &str = "{board}";' in module_src
              and all(re.search(rf"\b{f}\b", module_src) for f in ("entry", "exit", "print", "stack_pointer")),
              f"port step for {board}: its module has NAME and entry, exit, print, stack_pointer")
        check(f'("{board}", "{target}")' in read("firmware/build.rs"),
              f"port step for {board}: build.rs's BOARDS has its row")
        check(f'#[cfg_attr(board = "{board}", path = "board/{module}.rs")]' in read("firmware/src/lib.rs"),
              f"port step for {board}: src/lib.rs selects its module")
        check(f"[target.{target}]" in read("firmware/.cargo/config.toml"),
              f"port step for {board}: .cargo/config.toml has a runner for {target}")
        check(target in read("scripts/setup.sh"),
              f"port step for {board}: scripts/setup.sh installs {target}")
        check(re.search(rf'"{re.escape(board)}":\s*(None|\d+)', read("tests/firmware/run.py")),
              f"port step for {board}: tests/firmware/run.py has its RAM budget")

    # Complete: a board's name appears only in the files the steps name.
    allowed = {p for p in shared} | NAMES_ALLOWED_IN
    allowed |= {p.replace("<board>", b).replace("<module>", b.replace("-", "_")).replace("<target>", t)
                for p in per_board for b, t in boards}
    names = [b for b, _ in boards]
    stray = []
    for root in ("firmware/src", "firmware/build.rs", "firmware/Cargo.toml", "firmware/.cargo",
                 "firmware/boards", "core/src", "tests/firmware"):
        full = os.path.join(repo, root)
        files = [full] if os.path.isfile(full) else [os.path.join(d, f) for d, _, fs in os.walk(full) for f in fs]
        for f in files:
            rel = os.path.relpath(f, repo)
            if rel in allowed or rel == "tests/firmware/port.py" or "__pycache__" in rel:
                continue
            src = open(f, errors="replace").read()
            hit = [n for n in names if re.search(rf'["`/(]{re.escape(n)}["`/)]', src)]
            if re.search(r'\bboard = "', src):
                hit.append('cfg(board = "…")')
            if hit:
                stray.append(f"{rel} ({', '.join(hit)})")
    check(not stray, "the porting steps are complete: no other file of the firmware, its test or the "
          "core names a board", stray)

