"""Scores the runtime probe on its program set: every runnable program in tests/probe/scripts/ is probed at
`--steps 3` and `--steps 10`, in parallel child processes, and checked against the `# expect:` line that opens
it (or ends it, in the older programs whose line numbers the tests assert):

    # expect: TL804            the probe must report TL804 (several codes: comma-separated)
    # expect: none             a correct loop: no runtime finding above info
    # expect: error            the script fails without the probe, so it must fail under it too
    # expect: skip (why)       a fixture for the fault tests (needs arguments, hangs, exits): not scored

Prints caught/expected, the correct loops that got a finding above info, and how each program's tf.functions
ran (graph / eager / none). Exit 0 when every expectation holds.

    .venv/bin/python tests/probe/score.py [--steps 3 10] [--jobs N] [--json OUT] [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parent / "scripts"
HEADER = re.compile(r"^#\s*expect:\s*(.+?)\s*$")
CODE = re.compile(r"^TL\d{3}$")
TIMEOUT_S = 240


@dataclass
class Program:
    name: str
    path: Path
    kind: str  # "findings" | "none" | "error" | "skip"
    codes: tuple[str, ...] = ()
    note: str = ""


@dataclass
class Outcome:
    program: str
    steps: int
    status: str
    codes: list[str] = field(default_factory=list)
    above_info: list[str] = field(default_factory=list)
    functions: str = "none"
    failure: str | None = None
    seconds: float = 0.0
    passed: bool = False
    missed: list[str] = field(default_factory=list)


def read_header(path: Path) -> Program:
    lines = path.read_text(encoding="utf-8").splitlines()
    # The first line; or the last, in the older programs whose line numbers the tests assert.
    ends = [line for line in (lines[:1] + lines[-1:]) if HEADER.match(line)]
    match = HEADER.match(ends[0]) if ends else None
    if match is None:
        raise ValueError(f"{path.name}: the first (or last) line must be `# expect: ...`")
    value = match.group(1)
    lowered = value.lower()
    if lowered.startswith("skip"):
        return Program(path.stem, path, "skip", note=value[4:].strip(" ():"))
    if lowered == "none":
        return Program(path.stem, path, "none")
    if lowered == "error":
        return Program(path.stem, path, "error")
    codes = tuple(code.strip() for code in value.split(","))
    bad = [code for code in codes if not CODE.match(code)]
    if bad:
        raise ValueError(f"{path.name}: `# expect:` takes TLnnn codes, none, error or skip, not {bad[0]!r}")
    return Program(path.stem, path, "findings", codes)


def programs(names: list[str] | None = None) -> list[Program]:
    found = [read_header(p) for p in sorted(SCRIPTS.glob("*.py")) if not p.name.startswith("_")]
    if names:
        found = [p for p in found if p.name in names or p.path.name in names]
    return found


def _functions_path(notes: list[str]) -> str:
    ways = []
    for note in notes:
        if note.startswith("tf.function ") and " ran as a graph" in note:
            ways.append("graph")
        elif note.startswith("tf.function ") and " ran eagerly" in note:
            ways.append("eager")
    return "+".join(sorted(set(ways))) or "none"


def probe(program: Program, steps: int, python: str = sys.executable) -> Outcome:
    started = time.monotonic()
    command = [python, "-m", "tapelint", "probe", str(program.path), "--steps", str(steps), "--format", "json",
               "--exit-zero", "--device", "cpu", "--timeout", str(TIMEOUT_S)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=str(ROOT), timeout=TIMEOUT_S + 60,
                          stdin=subprocess.DEVNULL)
    seconds = time.monotonic() - started
    try:
        report = json.loads(done.stdout)
    except ValueError:
        line = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return Outcome(program.name, steps, "no-report", failure=line, seconds=seconds)
    details = report["probe"]
    diagnostics = report.get("diagnostics") or []
    codes = sorted({d["code"] for d in diagnostics})
    above_info = sorted({d["code"] for d in diagnostics if d.get("severity") in ("warning", "error")})
    outcome = Outcome(program.name, steps, details["status"], codes, above_info,
                      _functions_path(details.get("notes") or []), details.get("failure"), seconds)
    if program.kind == "findings":
        outcome.missed = [code for code in program.codes if code not in codes]
        outcome.passed = not outcome.missed
    elif program.kind == "none":
        outcome.passed = details.get("ok", False) and not above_info
    elif program.kind == "error":
        outcome.passed = details["status"] in ("raised", "exited")
    return outcome


def run_all(selected: list[Program], steps: tuple[int, ...] = (3, 10), jobs: int | None = None) -> list[Outcome]:
    work = [(p, n) for p in selected if p.kind != "skip" for n in steps]
    # Each child imports TensorFlow and trains a small model: about one core each.
    jobs = jobs or max(1, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda item: probe(*item), work))


def summarize(selected: list[Program], outcomes: list[Outcome], steps: tuple[int, ...]) -> tuple[list[str], bool]:
    by_key = {(o.program, o.steps): o for o in outcomes}
    lines = []
    width = max(len(p.name) for p in selected)
    for program in selected:
        expect = ", ".join(program.codes) if program.kind == "findings" else program.kind
        if program.kind == "skip":
            lines.append(f"  {program.name:<{width}}  skip: {program.note}")
            continue
        parts = []
        for n in steps:
            o = by_key[(program.name, n)]
            mark = "ok " if o.passed else "BAD"
            found = ",".join(o.codes) or "-"
            parts.append(f"--steps {n:<2} {mark} {o.status:<7} {found:<22} {o.seconds:5.1f}s")
        functions = by_key[(program.name, steps[0])].functions
        lines.append(f"  {program.name:<{width}}  expect {expect:<12} functions {functions:<6} | " + " | ".join(parts))
    lines.append("")
    all_ok = True
    for n in steps:
        expected = [p for p in selected if p.kind == "findings"]
        total = sum(len(p.codes) for p in expected)
        caught = sum(len(p.codes) - len(by_key[(p.name, n)].missed) for p in expected)
        correct = [p for p in selected if p.kind == "none"]
        noisy = [(p.name, by_key[(p.name, n)]) for p in correct if not by_key[(p.name, n)].passed]
        errors = [p for p in selected if p.kind == "error"]
        surfaced = sum(1 for p in errors if by_key[(p.name, n)].passed)
        lines.append(f"--steps {n}: caught {caught}/{total} expected findings; correct loops silent above info "
                     f"{len(correct) - len(noisy)}/{len(correct)}; errors surfaced {surfaced}/{len(errors)}")
        for p in expected:
            o = by_key[(p.name, n)]
            if o.missed:
                lines.append(f"    missed {', '.join(o.missed)} in {p.name} (status {o.status}; found "
                             f"{', '.join(o.codes) or 'nothing'}){': ' + o.failure if o.failure else ''}")
        for name, o in noisy:
            detail = ", ".join(o.above_info) if o.above_info else f"status {o.status}: {o.failure}"
            lines.append(f"    correct loop {name}: {detail}")
        for p in errors:
            o = by_key[(p.name, n)]
            if not o.passed:
                lines.append(f"    {p.name}: expected the script's error, got status {o.status}")
        all_ok = all_ok and caught == total and not noisy and surfaced == len(errors)
    return lines, all_ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="Only these programs (file stems).")
    parser.add_argument("--steps", type=int, nargs="+", default=[3, 10])
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--json", dest="json_out", help="Write every outcome to this JSON file.")
    args = parser.parse_args()
    selected = programs(args.names)
    if not selected:
        print("no such program", file=sys.stderr)
        return 2
    steps = tuple(args.steps)
    started = time.monotonic()
    outcomes = run_all(selected, steps, args.jobs)
    scored = [p for p in selected if p.kind != "skip"]
    print(f"probe program set: {len(scored)} programs scored ({sum(p.kind == 'none' for p in scored)} correct loops, "
          f"{sum(p.kind == 'findings' for p in scored)} with expected findings, {sum(p.kind == 'error' for p in scored)} "
          f"that must fail), {len(selected) - len(scored)} fixtures skipped; {time.monotonic() - started:.0f} s")
    lines, ok = summarize(selected, outcomes, steps)
    print("\n".join(lines))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps([asdict(o) for o in outcomes], indent=2), encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
