"""Static pass speed: tapelint over an installed package against a bare libcst parse of the same files.

    python benchmarks/static_speed.py                 # the installed tensorflow package
    python benchmarks/static_speed.py --package keras --limit 300

Both are measured in the same run, so the ratio holds on a shared, noisy machine. The parse baseline is
one process; tapelint runs as users run it (prefilter, one metadata pass, all cores unless --jobs).
"""

from __future__ import annotations

import argparse
import importlib.util
import resource
import sys
import time
from pathlib import Path

import libcst as cst

from tapelint.config import Config
from tapelint.runner import default_jobs, lint_paths


def package_files(name: str, limit: int | None) -> tuple[Path, list[Path]]:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"package {name!r} is not installed")
    root = Path(next(iter(spec.submodule_search_locations)))
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    return root, files[:limit] if limit else files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", default="tensorflow")
    parser.add_argument("--limit", type=int, default=None, help="only the first N files (sorted by path)")
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()

    root, files = package_files(args.package, args.limit)
    texts = []
    for path in files:
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, OSError):
            texts.append("")
    lines = sum(t.count("\n") for t in texts)

    start = time.perf_counter()
    failed = 0
    for text in texts:
        try:
            cst.parse_module(text)
        except Exception:  # noqa: BLE001 - a baseline, not a linter
            failed += 1
    parse_seconds = time.perf_counter() - start

    jobs = args.jobs or default_jobs()
    config = Config(exclude=())
    start = time.perf_counter()
    if args.limit:
        result = lint_paths(files, config, jobs)
    else:
        result = lint_paths([root], config, jobs)
    lint_seconds = time.perf_counter() - start
    internal = sum(1 for d in result.diagnostics if d.code == "TL999")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"package            {args.package} ({root})")
    print(f"files              {len(files)} ({lines} lines)")
    print(f"libcst parse       {parse_seconds:8.2f} s  (1 process, {failed} files did not parse)")
    print(f"tapelint           {lint_seconds:8.2f} s  ({jobs} jobs, {result.files_checked} files, "
          f"{len(result.diagnostics)} findings, {internal} internal errors)")
    print(f"ratio              {lint_seconds / parse_seconds:8.3f}  (tapelint / bare parse; below 1 is faster)")
    print(f"peak RSS (parent)  {peak_mb:8.1f} MB")


if __name__ == "__main__":
    main()
