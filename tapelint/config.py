"""`[tool.tapelint]` in pyproject.toml -> a Config. Unknown keys and bad values are errors."""

from __future__ import annotations

import fnmatch
import math
import os
import stat
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, Callable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from tapelint import registry
from tapelint.errors import ConfigError, TapelintError
from tapelint.files import read_bytes, resolved

# A pyproject.toml is a few kilobytes; past this it is not one (and is not read whole).
MAX_CONFIG_BYTES = 16 * 1024 * 1024

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".env", "env", ".tox", ".nox", "__pycache__", "build", "dist",
    "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tapelint_cache", ".ipynb_checkpoints", "site-packages",
    ".eggs",
)

_TOP_KEYS = {
    "select": "list of rule codes, prefixes or names",
    "ignore": "list of rule codes, prefixes or names",
    "extend-select": "list of rule codes, prefixes or names",
    "exclude": "list of glob patterns",
    "extend-exclude": "list of glob patterns",
    "per-file-ignores": "table of glob -> list of selectors",
    "keras-version": "2 or 3",
    "include-notebooks": "true or false",
    "force-exclude": "true or false",
    "respect-gitignore": "true or false",
    "fail-on": "error, warning or info",
    "cache-dir": "a folder (relative to this pyproject.toml)",
    "preview": "true or false",
    "baseline": "a baseline file (relative to this pyproject.toml)",
}
FAIL_ON = ("error", "warning", "info")


def split_selectors(values: list[str]) -> list[str]:
    """The command line's `--select TL1,TL2 --select TL3`: ["TL1", "TL2", "TL3"]."""
    out: list[str] = []
    for value in values:
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return out


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    keras_version: int | None = None
    include_notebooks: bool = True
    force_exclude: bool = False  # apply exclude to files named explicitly too (pre-commit passes names)
    respect_gitignore: bool = True  # skip what git ignores when walking folders inside a work tree
    # The lowest severity that makes the run exit 1 (info findings are shown but pass by default).
    fail_on: str = "warning"
    # Also run the rules in preview (tapelint.maturity): those not yet shown to hold on real code.
    preview: bool = False
    rule_options: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    probe: tuple[tuple[str, Any], ...] = ()
    cache_dir: str | None = None  # where the result cache lives (default: .tapelint_cache at the root)
    baseline: str | None = None  # `--baseline`'s file from the config: findings recorded in it are not reported
    root: str | None = None  # folder of the pyproject.toml the settings came from
    source: str | None = None

    def enabled_codes(self) -> tuple[str, ...]:
        """The codes of the enabled rules (from the rule index: no rule is imported)."""
        return registry.resolve(self.select, self.extend_select, self.ignore, self.preview)

    def preview_warnings(self) -> list[str]:
        """One line for each selector that names a preview rule, which does not run without preview."""
        if self.preview:
            return []
        return [f"selection `{selector}` has no effect: {rule.code} ({rule.name}) is in preview, and runs only "
                f"with --preview (or `preview = true` in [tool.tapelint]); see `tapelint rule {rule.code}`"
                for selector, rule in registry.held_back_selections(self.select, self.extend_select, self.ignore)]

    def enabled_rules(self):  # type: ignore[no-untyped-def]
        """The enabled rule classes (imports their modules, and libcst)."""
        return registry.rules_for(self.enabled_codes())

    def options_for(self, rule_name: str) -> dict[str, Any]:
        for name, values in self.rule_options:
            if name == rule_name:
                return dict(values)
        return {}

    def ignores_for(self, path: str) -> list[str]:
        """Selectors ignored for this file by per-file-ignores (globs relative to the config root)."""
        relative = _relative(path, self.root)
        found: list[str] = []
        for pattern, selectors in self.per_file_ignores:
            if _glob_match(relative, pattern):
                found.extend(selectors)
        return found

    def is_excluded(self, path: Path, walk_root: Path | None = None) -> bool:
        """Whether a discovered file or folder is excluded. Folder-name patterns (`.venv`, `build`) look
        only at the part below `walk_root`, so a folder the user names explicitly is always linted."""
        relative = _relative(str(path), self.root)
        below = path.relative_to(walk_root).parts if walk_root is not None else PurePosixPath(relative).parts
        return any(self.excluded_name(part, "") for part in below) or self.excluded_name("", relative)

    def excluded_name(self, name: str, relative: str) -> bool:
        """Whether a file or folder called `name` is excluded by a folder-name pattern (`build`, `*.pb2.py`),
        or one at `relative` (to the config's folder) by a path pattern (`src/gen/*`); an empty argument is
        not tested. A folder walk asks this for each entry, having already pruned the excluded folders above
        it (the per-file cost of `is_excluded` on large trees was mostly resolving paths again)."""
        for pattern in (*self.exclude, *self.extend_exclude):
            if name and fnmatch.fnmatchcase(name, pattern):
                return True
            if relative and "/" in pattern.rstrip("/") and _glob_match(relative, pattern):
                return True
        return False

    def relative_path(self, path: Path) -> str:
        """`path` relative to the config's folder, as patterns see it (posix; as given when outside it)."""
        return _relative(str(path), self.root)

    def with_cli(self, select: list[str] | None, ignore: list[str] | None,
                 extend_select: list[str] | None) -> "Config":
        """The command line on top of the config file, with ruff's precedence: a `--select` starts the
        selection afresh (the file's select, extend-select and ignore no longer apply); without one,
        `--ignore` and `--extend-select` add to the file's."""
        for selectors, where in ((select, "--select"), (ignore, "--ignore"), (extend_select, "--extend-select")):
            if selectors:
                registry.validate_selectors(selectors, where)
        changes: dict[str, Any] = {}
        if select:
            changes["select"] = tuple(select)
            changes["ignore"] = tuple(ignore or ())
            changes["extend_select"] = tuple(extend_select or ())
            return replace(self, **changes)
        if ignore:
            changes["ignore"] = (*self.ignore, *ignore)
        if extend_select:
            changes["extend_select"] = (*self.extend_select, *extend_select)
        return replace(self, **changes) if changes else self


def _relative(path: str, root: str | None) -> str:
    p = Path(path)
    if root is not None:
        try:
            return resolved(p).relative_to(resolved(Path(root))).as_posix()
        except ValueError:
            pass
    return p.as_posix()


def _glob_match(relative: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    if fnmatch.fnmatchcase(relative, pattern):
        return True
    # "tests/" style patterns match everything below that folder.
    return fnmatch.fnmatchcase(relative, pattern + "/*") or fnmatch.fnmatchcase(relative, "*/" + pattern)


def find_config_file(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above `start` that has a [tool.tapelint] table."""
    return ConfigFinder().config_file(start)


class ConfigFinder:
    """Each file's settings, as ruff finds them: the nearest pyproject.toml with a [tool.tapelint] table at
    or above the file, with the command line's choices (`adjust`) applied on top. Every folder is looked up
    once, and every config file read once, so `tapelint a b` and `tapelint b a` see the same settings for
    each file."""

    def __init__(self, adjust: Callable[[Config], Config] = lambda config: config) -> None:
        self.adjust = adjust
        self._nearest: dict[Path, Path | None] = {}
        self._loaded: dict[Path | None, Config] = {}

    def config_file(self, path: Path) -> Path | None:
        current = resolved(path)
        try:
            mode: int | None = current.stat().st_mode
        except OSError:  # not there, or in a folder that cannot be read: look from the folder it names
            mode = None
        if mode is None or not stat.S_ISDIR(mode):
            current = current.parent
        walked: list[Path] = []
        found: Path | None = None
        for folder in (current, *current.parents):
            if folder in self._nearest:
                found = self._nearest[folder]
                break
            walked.append(folder)
            if _has_tapelint_table(folder / "pyproject.toml"):
                found = folder / "pyproject.toml"
                break
        for folder in walked:
            self._nearest[folder] = found
        return found

    def for_path(self, path: Path) -> Config:
        file = self.config_file(path)
        if file not in self._loaded:
            self._loaded[file] = self.adjust(load(file))
        return self._loaded[file]


def _has_tapelint_table(candidate: Path) -> bool:
    # Not there, not a regular file, or in a folder that cannot be read (an unreadable folder named on
    # the command line is reported by the walk, once): no settings here.
    try:
        text = read_bytes(candidate, MAX_CONFIG_BYTES).decode("utf-8")
    except (TapelintError, UnicodeDecodeError):
        return False
    return "tool.tapelint" in text or "[tool]" in text and "tapelint" in text


def load(path: Path | None) -> Config:
    """Read a config file. `None` gives the defaults."""
    if path is None:
        return Config()
    try:
        raw = read_bytes(path, MAX_CONFIG_BYTES)
    except TapelintError as error:
        raise ConfigError(f"config {error}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not valid UTF-8") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    table = data.get("tool", {}).get("tapelint")
    if table is None:
        if path.name != "pyproject.toml":
            table = data  # a standalone tapelint.toml holds the keys at the top
        else:
            return Config(root=str(path.parent), source=str(path))
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.tapelint] must be a table")
    return parse(table, str(path), str(path.parent))


def _string_list(value: Any, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    return tuple(value)


def parse(table: dict[str, Any], where: str, root: str | None) -> Config:
    rule_names = {r.name: r for r in registry.index()}
    values: dict[str, Any] = {"root": root, "source": where}
    rule_options: list[tuple[str, tuple[tuple[str, Any], ...]]] = []
    for key, value in table.items():
        if key in ("select", "ignore", "extend-select"):
            selectors = _string_list(value, key, where)
            registry.validate_selectors(selectors, f"{where}: `{key}`")
            values[key.replace("-", "_")] = selectors
        elif key in ("exclude", "extend-exclude"):
            patterns = _string_list(value, key, where)
            values[key.replace("-", "_")] = (*DEFAULT_EXCLUDE, *patterns) if key == "exclude" else patterns
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: `per-file-ignores` must be a table of glob = [selectors]")
            entries = []
            for pattern, selectors in value.items():
                selectors = _string_list(selectors, f"per-file-ignores.{pattern}", where)
                registry.validate_selectors(selectors, f"{where}: `per-file-ignores.{pattern}`")
                entries.append((pattern, selectors))
            values["per_file_ignores"] = tuple(entries)
        elif key == "keras-version":
            if value not in (2, 3):
                raise ConfigError(f"{where}: `keras-version` must be 2 or 3, not {value!r}")
            values["keras_version"] = value
        elif key == "include-notebooks":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: `include-notebooks` must be true or false")
            values["include_notebooks"] = value
        elif key == "force-exclude":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: `force-exclude` must be true or false")
            values["force_exclude"] = value
        elif key == "preview":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: `preview` must be true or false")
            values["preview"] = value
        elif key == "respect-gitignore":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: `respect-gitignore` must be true or false")
            values["respect_gitignore"] = value
        elif key == "fail-on":
            if value not in FAIL_ON:
                raise ConfigError(f"{where}: `fail-on` must be one of error, warning, info, not {value!r}")
            values["fail_on"] = value
        elif key == "cache-dir":
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{where}: `cache-dir` must be a folder name (a string)")
            values["cache_dir"] = str(Path(root or ".") / os.path.expanduser(value))
        elif key == "baseline":
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{where}: `baseline` must be a file name (a string)")
            values["baseline"] = str(Path(root or ".") / os.path.expanduser(value))
        elif key == "probe":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: [tool.tapelint.probe] must be a table")
            from tapelint.probe_settings import validate_probe_settings

            settings = validate_probe_settings(value, where)
            for name, number in settings.items():
                _check_number(number, f"probe.{name}", where)
            values["probe"] = tuple(sorted(settings.items()))
        elif key in rule_names:
            rule_options.append((key, _rule_options(rule_names[key], value, where)))
        else:
            known = ", ".join(sorted([*_TOP_KEYS, "probe"]))
            raise ConfigError(
                f"{where}: unknown key `{key}` in [tool.tapelint] (known: {known}, or a rule name with options)"
            )
    values["rule_options"] = tuple(rule_options)
    return Config(**values)


_OPTION_TYPES = {"float": float, "int": int, "bool": bool, "str": str}


def _check_number(value: Any, key: str, where: str) -> None:
    """Every number in the settings is a limit, a count or a ratio: finite and above zero, and at most 1
    where it is a fraction. TOML has `nan` and `inf`, and every comparison with nan is false, so a
    `nan` limit passed `<= 0` and silently turned its check off. (A default may be infinite, meaning "not
    judged"; leaving the key out keeps it.)"""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{where}: `{key}` must be a finite number above 0, not {value!r}")
    if key.endswith("-fraction") and value > 1:
        raise ConfigError(f"{where}: `{key}` is a fraction and must be at most 1, not {value!r}")


def _rule_options(rule: registry.RuleInfo, value: Any, where: str) -> tuple[tuple[str, Any], ...]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: [tool.tapelint.{rule.name}] must be a table")
    types = dict(rule.options)
    parsed = []
    for key, option_value in value.items():
        type_name = types.get(key)
        if type_name is None:
            known = ", ".join(sorted(types)) or "none"
            raise ConfigError(f"{where}: unknown option `{key}` for {rule.code} {rule.name} (known: {known})")
        expected = _OPTION_TYPES[type_name]
        ok = isinstance(option_value, expected) and not (expected is not bool and isinstance(option_value, bool))
        if expected is float and isinstance(option_value, int) and not isinstance(option_value, bool):
            option_value, ok = float(option_value), True
        if not ok:
            raise ConfigError(
                f"{where}: `{rule.name}.{key}` must be {expected.__name__}, not {type(option_value).__name__}"
            )
        _check_number(option_value, f"{rule.name}.{key}", where)
        parsed.append((key, option_value))
    return tuple(parsed)
