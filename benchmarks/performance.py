"""The performance table of the README: each figure as a ratio against its reference, measured in the same run.

    python benchmarks/performance.py            # everything (several minutes on 2 cores)
    python benchmarks/performance.py --quick    # keras/src/layers and one file only

Rows:
- cold: tapelint with no cache over keras/src/layers, against a bare `libcst.parse_module` of the same
  files (CPU seconds, all processes);
- warm: the same run again with the cache filled, over the installed tensorflow package, against the cold
  run of it;
- one file: `tapelint FILE` on a 300-line training loop as pre-commit runs it (a new process, start-up
  included), wall seconds, cold (no cache) and warm, against a bare `python -c pass`; and cold again with
  a `tapelint daemon` running (POSIX);
- the editor keystroke and the size series have their own scripts (benchmarks/editor_keystroke.py and
  benchmarks/size_series.py); run them for those rows.

Ruff, Fixit and pylint are measured too when they are installed (`--others`), on keras/src/layers.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"package {name!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# As an installed tapelint runs: from bytecode. (Some sandboxes set PYTHONDONTWRITEBYTECODE, which makes an
# editable install compile every tapelint module from source on every start; pip compiles them at install.)
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
ENV["TAPELINT_NO_DAEMON"] = "1"  # every row but the daemon's runs in its own process, as without a daemon


def run(command: list[str], cwd: Path | None = None) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall seconds, CPU seconds of the process and its children, the result)."""
    cpu, wall = children_cpu(), time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=ENV)
    return time.perf_counter() - wall, children_cpu() - cpu, done


def tapelint(*args: str, cwd: Path | None = None) -> tuple[float, float, subprocess.CompletedProcess]:
    return run([sys.executable, "-m", "tapelint", *args], cwd=cwd)


def bare_parse_cpu(folder: Path) -> float:
    code = ("import sys, time, libcst\nfrom pathlib import Path\n"
            "for p in sorted(Path(sys.argv[1]).rglob('*.py')):\n"
            "    try:\n        libcst.parse_module(p.read_text(encoding='utf-8'))\n"
            "    except Exception:\n        pass\n")
    return run([sys.executable, "-c", code, str(folder)])[1]


def training_file(folder: Path) -> Path:
    """A 300-line training program: the shipped examples, concatenated under one set of imports."""
    parts = []
    for example in sorted((ROOT / "examples").glob("*.py")):
        parts.append(example.read_text(encoding="utf-8"))
    text = "\n\n".join(parts)
    lines = text.splitlines()[:300]
    path = folder / "train_300.py"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def median_wall(command: list[str], repeat: int, cwd: Path | None = None) -> float:
    return statistics.median(run(command, cwd)[0] for _ in range(repeat))


def row(work: str, ours: str, reference: str, ratio: str) -> None:
    print(f"| {work} | {ours} | {reference} | {ratio} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the installed-tensorflow rows")
    parser.add_argument("--others", action="store_true", help="also time ruff, fixit and pylint when installed")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each one-file figure (the median is shown)")
    parser.add_argument("--rounds", type=int, default=3, help="paired rounds of the cold keras/src/layers figure")
    args = parser.parse_args()

    layers = package_dir("keras") / "src" / "layers"
    print("| work | tapelint | reference | ratio |\n|---|---|---|---|", flush=True)
    with tempfile.TemporaryDirectory() as scratch_text:
        scratch = Path(scratch_text)
        cache = scratch / "cache"

        # Paired rounds (a bare parse, then tapelint), since the CPU time of one process here varies by
        # 20% from run to run: the ratio of the medians, and the range of the rounds' ratios.
        pairs = []
        for _ in range(args.rounds):
            parse = bare_parse_cpu(layers)
            _, cold, _ = tapelint("--no-cache", "--exit-zero", "-q", str(layers))
            pairs.append((parse, cold))
        parse = statistics.median(p for p, _ in pairs)
        cold = statistics.median(c for _, c in pairs)
        spread = sorted(c / p for p, c in pairs)
        row(f"keras/src/layers ({len(list(layers.rglob('*.py')))} files), cold", f"{cold:.2f} s CPU",
            f"bare libcst parse {parse:.2f} s CPU", f"{cold / parse:.2f}x (rounds {spread[0]:.2f}-{spread[-1]:.2f}x)")
        tapelint("--cache-dir", str(cache), "--exit-zero", "-q", str(layers))
        _, warm, _ = tapelint("--cache-dir", str(cache), "--exit-zero", "-q", str(layers))
        row("keras/src/layers, warm (nothing changed)", f"{warm:.2f} s CPU", f"cold {cold:.2f} s CPU",
            f"{warm / cold:.3f}x")
        if args.others:
            # A copy outside site-packages: Fixit lints nothing under a virtualenv ("0 files clean").
            copy = scratch / "layers"
            shutil.copytree(layers, copy, ignore=shutil.ignore_patterns("__pycache__"))
            for name, command in (("ruff", ["ruff", "check", "--no-cache", "--exit-zero", "-q", str(copy)]),
                                  ("fixit", ["fixit", "lint", str(copy)]),
                                  ("pylint", ["pylint", "--disable=all", "--enable=E,W", "--exit-zero", str(copy)])):
                if shutil.which(command[0]):
                    _, other, _ = run(command)
                    row(f"keras/src/layers, {name}", f"{cold:.2f} s CPU", f"{name} {other:.2f} s CPU",
                        f"{cold / other:.2f}x")

        if not args.quick:
            tf_dir = package_dir("tensorflow")
            tf_cache = scratch / "tf-cache"
            _, tf_cold, _ = tapelint("--cache-dir", str(tf_cache), "--exit-zero", "-q", str(tf_dir))
            _, tf_warm, _ = tapelint("--cache-dir", str(tf_cache), "--exit-zero", "-q", str(tf_dir))
            files = sum(1 for _ in tf_dir.rglob("*.py"))
            row(f"installed tensorflow ({files} files), warm (nothing changed)", f"{tf_warm:.2f} s CPU",
                f"cold {tf_cold:.2f} s CPU", f"{tf_warm / tf_cold:.3f}x")

        one = training_file(scratch)
        python = median_wall([sys.executable, "-c", "pass"], args.repeat)
        one_cold = median_wall([sys.executable, "-m", "tapelint", "--no-cache", "--exit-zero", str(one)], args.repeat)
        tapelint("--cache-dir", str(cache), "--exit-zero", str(one))
        one_warm = median_wall([sys.executable, "-m", "tapelint", "--cache-dir", str(cache), "--exit-zero", str(one)],
                               args.repeat)
        version = median_wall([sys.executable, "-m", "tapelint", "--version"], args.repeat)
        row("one 300-line training file, new process, no cache", f"{one_cold:.3f} s wall",
            f"python -c pass {python:.3f} s", f"{one_cold / python:.1f}x")
        row("one 300-line training file, new process, cache hit", f"{one_warm:.3f} s wall",
            f"python -c pass {python:.3f} s", f"{one_warm / python:.1f}x")
        row("tapelint --version", f"{version:.3f} s wall", f"python -c pass {python:.3f} s",
            f"{version / python:.1f}x")
        # The same file, no cache, run in a fork of a warm `tapelint daemon` (its own socket folder here).
        runtime = scratch / "runtime"
        runtime.mkdir(mode=0o700)
        ENV.pop("TAPELINT_NO_DAEMON")
        ENV["XDG_RUNTIME_DIR"] = str(runtime)
        try:
            started = tapelint("daemon", "start", "--idle-timeout", "600")[2]
            if started.returncode != 0:
                print(f"(no daemon row: {started.stderr.strip() or started.stdout.strip()})", flush=True)
            else:
                daemon_cold = median_wall([sys.executable, "-m", "tapelint", "--no-cache", "--exit-zero", str(one)],
                                          args.repeat)
                row("one 300-line training file, no cache, `tapelint daemon` running", f"{daemon_cold:.3f} s wall",
                    f"python -c pass {python:.3f} s", f"{daemon_cold / python:.1f}x")
        finally:
            tapelint("daemon", "stop")
            ENV["TAPELINT_NO_DAEMON"] = "1"
    print("\nEditor keystroke: python benchmarks/editor_keystroke.py; size series: python benchmarks/size_series.py",
          flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
