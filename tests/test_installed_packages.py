"""tapelint over the installed tensorflow and keras sources: hundreds of real files, odd code included.

It must never crash or hit an internal error; the number of findings is recorded (printed, and kept as
a junit property) so that a change in noise is visible from run to run.
"""

from __future__ import annotations

import collections
import importlib.util
from pathlib import Path

import pytest

from tapelint.config import Config
from tapelint.runner import default_jobs, lint_paths


def package_root(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@pytest.mark.parametrize("package", ["keras", "tensorflow"])
def test_linting_installed_package_sources_has_no_internal_errors(package, record_property):
    root = package_root(package)
    if root is None:
        pytest.skip(f"{package} is not installed (install the `probe` extra)")
    result = lint_paths([root], Config(exclude=()), default_jobs())
    internal = [d for d in result.diagnostics if d.code == "TL999"]
    assert not internal, "\n".join(f"{d.path}:{d.line}: {d.message}" for d in internal[:20])
    assert not result.errors, result.errors[:5]
    assert result.files_checked > 100
    counts = collections.Counter(d.code for d in result.diagnostics)
    record_property(f"{package}_files", result.files_checked)
    record_property(f"{package}_findings", len(result.diagnostics))
    print(f"\n{package}: {result.files_checked} files, {len(result.diagnostics)} findings {dict(sorted(counts.items()))}")
