"""Type-checks tapelint with mypy, its settings from pyproject.toml ([tool.mypy]), as it is installed.

`python tests/run_mypy.py` from the repository root; exits with mypy's status (0: no error).

The package maps `tapelint.rules` to rules/ (pyproject's package-dir), a layout mypy cannot learn from
the file tree: given rules/x.py it checks a module `rules.x`. So this builds mypy's list of sources
itself, naming each file of rules/ as the module it is installed as (`tapelint.rules.x`), and runs the
same build the `mypy` command runs on that list.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mypy import build
from mypy.errors import CompileError
from mypy.main import process_options
from mypy.modulefinder import BuildSource

ROOT = Path(__file__).resolve().parent.parent
INSTALLED_AS = {"rules": "tapelint.rules"}  # pyproject.toml's [tool.setuptools] package-dir, where it renames


def installed_name(module: str) -> str:
    top, dot, rest = module.partition(".")
    return INSTALLED_AS[top] + dot + rest if top in INSTALLED_AS else module


def main(argv: list[str]) -> int:
    os.chdir(ROOT)  # the files named in [tool.mypy] are relative to it
    sources, options = process_options(["--config-file", str(ROOT / "pyproject.toml"), *argv])
    sources = [BuildSource(s.path, installed_name(s.module), s.text, s.base_dir) for s in sources]
    try:
        messages = build.build(sources, options, stdout=sys.stdout, stderr=sys.stderr).errors
    except CompileError as error:  # a blocking error (a syntax error, a module found twice): no check ran
        print("\n".join(error.messages))
        return 2
    print("\n".join(messages))
    errors = sum(": error:" in line for line in messages)
    print(f"Found {errors} errors (checked {len(sources)} source files)" if errors
          else f"Success: no issues found in {len(sources)} source files")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
