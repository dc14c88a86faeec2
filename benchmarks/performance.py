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
  a `tapelint daemon` running (POSIX), with checks half a second apart as commits come (the daemon's
  warmed-up fork is ready): for a file it never saw, and for one it checked before that was edited since
  (it keeps a parse of the files checks name); and back to back (no warmed-up fork is ready). These rows run the console script of a regular
  install of this checkout, as `pip install .` and pre-commit make it, in a throwaway environment that
  borrows this one's dependencies: an editable install's import hook alone adds about 25 ms to every start;
  when that install cannot be made they run `python -m tapelint` here, and say so;
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
    path = folder / "project" / "train_300.py"  # a folder of its own, as a script in a small project
    path.parent.mkdir()
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def median_wall(command: list[str], repeat: int, cwd: Path | None = None, pause: float = 0.0) -> float:
    times = []
    for _ in range(repeat):
        time.sleep(pause)
        times.append(run(command, cwd)[0])
    return statistics.median(times)


def regular_install(scratch: Path) -> tuple[Path, Path] | None:
    """(python, tapelint console script) of a regular install of this checkout in a new environment that
    finds this one's dependencies through a .pth file, or None when it cannot be made (no pip, no network
    is needed). The wheel is built from a copy, so the checkout gets no build folders."""
    import site
    import sysconfig

    source, wheels, env = scratch / "source", scratch / "wheels", scratch / "installed"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "venv", "__pycache__", "build", "*.egg-info", "tests", "benchmarks", ".ci"))
    steps = [
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(source)],
        [sys.executable, "-m", "venv", "--without-pip", str(env)],
    ]
    for step in steps:
        if subprocess.run(step, capture_output=True, env=ENV).returncode != 0:
            return None
    python = env / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True)
    ours = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    if purelib.returncode != 0:
        return None
    Path(purelib.stdout.strip(), "_benchmark_dependencies.pth").write_text("\n".join(dict.fromkeys(ours)) + "\n")
    wheel = next(wheels.glob("tapelint-*.whl"), None)
    if wheel is None or subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
             str(wheel)], capture_output=True, env=ENV).returncode != 0:
        return None
    script = env / "bin" / "tapelint"
    return (python, script) if script.exists() else None


def row(work: str, ours: str, reference: str, ratio: str) -> None:
    print(f"| {work} | {ours} | {reference} | {ratio} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the installed-tensorflow rows")
    parser.add_argument("--one-file", action="store_true", help="only the one-file rows")
    parser.add_argument("--others", action="store_true", help="also time ruff, fixit and pylint when installed")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each one-file figure (the median is shown)")
    parser.add_argument("--rounds", type=int, default=3, help="paired rounds of the cold keras/src/layers figure")
    args = parser.parse_args()

    print("| work | tapelint | reference | ratio |\n|---|---|---|---|", flush=True)
    with tempfile.TemporaryDirectory() as scratch_text:
        scratch = Path(scratch_text)
        cache = scratch / "cache"
        if not args.one_file:
            layers_rows(args, scratch, cache)
            if not args.quick:
                tensorflow_row(scratch)
        one_file_rows(args, scratch, cache)
    print("\nEditor keystroke: python benchmarks/editor_keystroke.py; size series: python benchmarks/size_series.py",
          flush=True)


def layers_rows(args: argparse.Namespace, scratch: Path, cache: Path) -> None:
    """keras/src/layers cold (against a bare parse and the other tools) and warm."""
    layers = package_dir("keras") / "src" / "layers"
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


def tensorflow_row(scratch: Path) -> None:
    tf_dir = package_dir("tensorflow")
    tf_cache = scratch / "tf-cache"
    _, tf_cold, _ = tapelint("--cache-dir", str(tf_cache), "--exit-zero", "-q", str(tf_dir))
    _, tf_warm, _ = tapelint("--cache-dir", str(tf_cache), "--exit-zero", "-q", str(tf_dir))
    files = sum(1 for _ in tf_dir.rglob("*.py"))
    row(f"installed tensorflow ({files} files), warm (nothing changed)", f"{tf_warm:.2f} s CPU",
        f"cold {tf_cold:.2f} s CPU", f"{tf_warm / tf_cold:.3f}x")


def one_file_rows(args: argparse.Namespace, scratch: Path, cache: Path) -> None:
    """One 300-line file as pre-commit checks it: a new process each time, alone and with a daemon."""
    one = training_file(scratch)
    installed = regular_install(scratch)
    if installed is None:
        print("(one-file rows: no regular install could be made; they run `python -m tapelint` from this "
              "environment)", flush=True)
        python_exe, command = sys.executable, [sys.executable, "-m", "tapelint"]
    else:
        python_exe, command = str(installed[0]), [str(installed[1])]
    python = median_wall([python_exe, "-c", "pass"], args.repeat)

    def one_row(work: str, seconds: float) -> None:
        row(work, f"{seconds:.3f} s wall", f"python -c pass {python:.3f} s", f"{seconds / python:.1f}x")

    check = [*command, "--no-cache", "--exit-zero", str(one)]
    cached = [*command, "--cache-dir", str(cache), "--exit-zero", str(one)]
    one_row("one 300-line training file, new process, no cache", median_wall(check, args.repeat))
    run(cached)
    one_row("one 300-line training file, new process, cache hit", median_wall(cached, args.repeat))
    one_row("tapelint --version", median_wall([*command, "--version"], args.repeat))
    # The same file in a fork of a warm `tapelint daemon` (its own socket folder here).
    runtime = scratch / "runtime"
    runtime.mkdir(mode=0o700)
    ENV.pop("TAPELINT_NO_DAEMON")
    ENV["XDG_RUNTIME_DIR"] = str(runtime)
    try:
        started = run([*command, "daemon", "start", "--idle-timeout", "600"])[2]
        if started.returncode != 0:
            print(f"(no daemon row: {started.stderr.strip() or started.stdout.strip()})", flush=True)
            return
        time.sleep(2)  # its first warmed-up fork
        # A file it has never seen: a new name each time (the daemon parses ahead the files checks name).
        fresh = []
        for index in range(args.repeat):
            copy = one.parent / f"train_{index}.py"
            copy.write_text(one.read_text(encoding="utf-8"), encoding="utf-8")
            fresh.append(copy)
        times = []
        for copy in fresh:
            time.sleep(0.5)
            times.append(run([*command, "--no-cache", "--exit-zero", str(copy)])[0])
        one_row("one 300-line training file never checked before, no cache, `tapelint daemon` running, "
                "checks 0.5 s apart", statistics.median(times))
        # The file a commit usually holds: one checked before, then edited (its learning rate, each time).
        original = one.read_text(encoding="utf-8")
        run(check)
        times = []
        for index in range(args.repeat):
            one.write_text(original.replace("1e-3", f"{index + 2}e-4", 1), encoding="utf-8")
            time.sleep(0.5)
            times.append(run(check)[0])
        one.write_text(original, encoding="utf-8")
        one_row("the same file checked before and edited since (one line changed), `tapelint daemon` running",
                statistics.median(times))
        one_row("the same, back to back (no warmed-up fork ready)", median_wall(check, args.repeat))
        one_row("the same, cache hit, `tapelint daemon` running", median_wall(cached, args.repeat, pause=0.5))
    finally:
        run([*command, "daemon", "stop"])
        ENV["TAPELINT_NO_DAEMON"] = "1"


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
