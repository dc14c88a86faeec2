"""Instructions, not seconds: tapelint's lint of a file against a bare libcst parse of it, counted by
valgrind's callgrind, so two runs (or two checkouts) compare without the noise of a shared machine.

    python benchmarks/instructions.py                          # the size series' 1k and 8.8k-line files
    python benchmarks/instructions.py --sizes 1000 --files examples/train_fit_vs_loop.py
    python benchmarks/instructions.py --checkout /tmp/other    # the same figures for another checkout

Each figure is the difference between a process that sets up and runs the measured call K times and one
that sets up and runs it zero times, divided by K: imports, the warm-up lint and the text's generation
cancel out. The bare parse runs as libcst's users run it (`libcst.parse_module`, the collector on); the
lint is `tapelint.engine.lint_source` after a warm-up lint of a small file, as in a long-lived process.
The time benchmarks (size_series.py, performance.py) remain the figures the README's targets are stated
in; instruction counts leave out cache misses and memory stalls, and say nothing about wall time. Use
this one to tell whether a change made the work smaller. It needs `valgrind` on PATH (a minute or more
per figure: callgrind runs the interpreter about 50 times slower); two processes run at a time.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Run in a child process under callgrind: argv = checkout, what ("parse" | "lint"), text file, repeats.
_CHILD = r'''
import sys
checkout, what, path, repeats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
text = open(path, encoding="utf-8").read()
if what == "parse":
    import libcst
    for _ in range(repeats):
        libcst.parse_module(text)
else:
    # This checkout's tapelint, ahead of any installed one (an editable install's finder would win).
    # The rules live in the checkout's top-level rules/ (the wheel installs them as tapelint.rules).
    import importlib.util
    sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, checkout)
    import tapelint
    spec = importlib.util.spec_from_file_location("tapelint.rules", checkout + "/rules/__init__.py",
                                                  submodule_search_locations=[checkout + "/rules"])
    rules = importlib.util.module_from_spec(spec)
    sys.modules["tapelint.rules"] = tapelint.rules = rules
    spec.loader.exec_module(rules)
    from tapelint.config import Config
    from tapelint.engine import lint_source
    import tapelint.engine
    assert tapelint.engine.__file__.startswith(checkout), tapelint.engine.__file__
    config = Config()
    lint_source(open(sys.argv[5], encoding="utf-8").read(), "warmup.py", config)
    import tapelint.rules.tl001_optimizer_never_applied as first_rule
    assert first_rule.__file__.startswith(checkout), first_rule.__file__
    for _ in range(repeats):
        lint_source(text, path, config)
'''


def _instructions(checkout: str, what: str, path: str, repeats: int, warmup: str) -> int:
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", _CHILD,
               checkout, what, path, str(repeats), warmup]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tempfile.gettempdir(),
                            env={**os.environ, "PYTHONHASHSEED": "0"})
    found = re.search(r"Collected\s*:\s*(\d+)", result.stderr)
    if result.returncode != 0 or found is None:
        raise SystemExit(f"callgrind run failed ({what} {path}):\n{result.stderr[-2000:]}")
    return int(found.group(1))


def _per_call(pool: ThreadPoolExecutor, checkout: str, what: str, path: str, repeats: int, warmup: str):  # type: ignore[no-untyped-def]
    none = pool.submit(_instructions, checkout, what, path, 0, warmup)
    some = pool.submit(_instructions, checkout, what, path, repeats, warmup)
    return lambda: (some.result() - none.result()) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 8800],
                        help="lines of the size series' generated files (size_series.py)")
    parser.add_argument("--files", nargs="*", default=[], help="other Python files to count")
    parser.add_argument("--checkout", default=str(ROOT), help="the tapelint checkout to count (default: this one)")
    parser.add_argument("--repeats", type=int, default=1, help="calls counted per figure (default 1)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("instructions.py: valgrind is not installed (apt install valgrind)")
    checkout = str(Path(args.checkout).resolve())
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from size_series import training_source

    scratch = Path(tempfile.mkdtemp(prefix="tapelint-instructions-"))
    try:
        texts: list[tuple[str, str]] = []
        for size in args.sizes:
            path = scratch / f"size_{size}.py"
            path.write_text(training_source(size), encoding="utf-8")
            texts.append((f"size series, {size} lines", str(path)))
        texts += [(name, str(Path(name).resolve())) for name in args.files]
        warmup = scratch / "warmup.py"
        warmup.write_text(training_source(200), encoding="utf-8")
        with ThreadPoolExecutor(max_workers=2) as pool:
            pending = [(label, path, _per_call(pool, checkout, "parse", path, args.repeats, str(warmup)),
                        _per_call(pool, checkout, "lint", path, args.repeats, str(warmup)))
                       for label, path in texts]
            print(f"checkout {checkout}")
            print(f"{'file':<34} {'lines':>6} {'parse M':>9} {'lint M':>9} {'lint/parse':>10}")
            for label, path, parse, lint in pending:
                lines = Path(path).read_text(encoding="utf-8").count("\n")
                p, q = parse(), lint()
                print(f"{label[:34]:<34} {lines:>6} {p / 1e6:>9.0f} {q / 1e6:>9.0f} {q / p:>10.2f}")
        print("instructions per call (callgrind): bare libcst.parse_module vs tapelint's lint_source")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
