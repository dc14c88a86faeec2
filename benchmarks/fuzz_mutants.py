"""Robustness fuzz: lint (and fix, and re-lint) thousands of mutants of the corpus programs and count what
went wrong: exceptions, internal errors (TL999), runs that disagree, fixes that do not settle or break a
module that parsed.

    python benchmarks/fuzz_mutants.py                  # 10,000 mutants, all cores
    python benchmarks/fuzz_mutants.py --count 500 --seed 3

Prints the figures and the first problems; exits 1 if there was any problem.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.mutants import check, mutants  # noqa: E402


def _check_chunk(chunk: list[tuple[int, str]]) -> list[tuple[int, str]]:
    return [(index, problem) for index, text in chunk if (problem := check(text)) is not None]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()
    started = time.perf_counter()
    texts = list(enumerate(mutants(args.count, args.seed)))
    chunks = [texts[i:i + 50] for i in range(0, len(texts), 50)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        problems = [p for found in pool.map(_check_chunk, chunks) for p in found]
    elapsed = time.perf_counter() - started
    kinds: dict[str, int] = {}
    for _, problem in problems:
        kinds[problem.split(":")[0]] = kinds.get(problem.split(":")[0], 0) + 1
    print(f"mutants: {args.count} (seed {args.seed}), {elapsed:.0f} s")
    print(f"problems: {len(problems)}" + (f" {kinds}" if kinds else ""))
    internal = sum(1 for _, p in problems if p.startswith(("internal error", "exception")))
    print(f"internal errors: {internal}")
    for index, problem in problems[:10]:
        print(f"  mutant {index}: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
