"""The result cache as a user meets it: a second run answers from `.tapelint_cache` with the same findings
(without loading libcst), and any change that could change a finding (the file, a module it imports,
the config, the selected rules) is linted afresh."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tapelint.atomic import TEMP_SUFFIX
from tapelint.cache import Cache, clean
from tapelint.config import Config, load
from tapelint.errors import InputError
from tapelint.runner import lint_paths

ROOT = Path(__file__).resolve().parents[1]

TRAIN = '''import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    return loss
'''

FIXED = TRAIN.replace("    return loss\n", "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n    return loss\n")


def codes(result) -> list[str]:
    return sorted(d.code for d in result.diagnostics)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    # preview: the findings here include TL001, which may be a preview rule (tapelint.maturity)
    (tmp_path / "pyproject.toml").write_text("[tool.tapelint]\npreview = true\n")
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


def run(project: Path, config: Config | None = None):
    config = config or load(project / "pyproject.toml")
    return lint_paths([project], config, jobs=1, cache=Cache.for_config(config))


def test_a_second_run_answers_from_the_cache_with_the_same_findings(project):
    first = run(project)
    second = run(project)
    assert first.cached == 0 and second.cached == 1
    assert codes(first) == codes(second) == ["TL001", "TL101"]
    assert [d.to_dict() for d in first.diagnostics] == [d.to_dict() for d in second.diagnostics]
    assert (project / ".tapelint_cache" / "CACHEDIR.TAG").is_file()


def test_an_edited_file_is_linted_again(project):
    run(project)
    (project / "train.py").write_text(FIXED)
    again = run(project)
    assert again.cached == 0
    assert codes(again) == ["TL101"]


def test_editing_a_module_the_training_file_imports_relints_it(project):
    (project / "train.py").write_text(
        "import tensorflow as tf\nfrom models import model\n\n"
        "optimizer = tf.keras.optimizers.Adam(1e-3)\n"
        "loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)\n\n\n"
        "def train_step(x, y):\n    with tf.GradientTape() as tape:\n"
        "        loss = loss_fn(y, model(x, training=True))\n"
        "    grads = tape.gradient(loss, model.trainable_variables)\n"
        "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n")
    models = project / "models.py"
    models.write_text("import tensorflow as tf\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(10)])\n")
    assert codes(run(project)) == []
    models.write_text('import tensorflow as tf\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])\n')
    again = run(project)
    assert [(Path(d.path).name, d.code) for d in again.diagnostics] == [("train.py", "TL101")]


def test_another_selection_or_config_is_not_answered_from_the_cache(project):
    run(project)
    only_tl101 = load(project / "pyproject.toml").with_cli(["TL101"], None, None)
    assert codes(run(project, only_tl101)) == ["TL101"]
    (project / "pyproject.toml").write_text('[tool.tapelint]\npreview = true\nignore = ["TL101"]\n')
    assert codes(run(project)) == ["TL001"]


def test_an_unreadable_entry_is_a_miss_not_an_error(project):
    run(project)
    for entry in (project / ".tapelint_cache").rglob("*.json"):
        entry.write_text("{not json")
    again = run(project)
    assert again.cached == 0 and codes(again) == ["TL001", "TL101"]
    assert run(project).cached == 1  # and the entry was written again


def test_a_cache_folder_that_cannot_be_created_does_not_stop_the_lint(project):
    blocker = project / "not-a-folder"
    blocker.write_text("a file where the cache folder would go")
    config = Config(cache_dir=str(blocker / "cache"), preview=True)
    result = lint_paths([project / "train.py"], config, jobs=1, cache=Cache.for_config(config))
    assert codes(result) == ["TL001", "TL101"] and not result.errors
    assert blocker.read_text() == "a file where the cache folder would go"


def test_cache_dir_in_the_config_is_relative_to_its_pyproject(project):
    (project / "pyproject.toml").write_text('[tool.tapelint]\ncache-dir = "build/lint-cache"\n')
    run(project)
    assert (project / "build" / "lint-cache" / "CACHEDIR.TAG").is_file()
    assert not (project / ".tapelint_cache").exists()


def test_clean_removes_only_a_tapelint_cache(project, tmp_path):
    run(project)
    assert clean(project / ".tapelint_cache") is True
    assert not (project / ".tapelint_cache").exists()
    assert clean(project / ".tapelint_cache") is False
    other = tmp_path / "precious"
    other.mkdir()
    (other / "data.txt").write_text("keep me")
    with pytest.raises(InputError, match="not a tapelint cache"):
        clean(other)
    assert (other / "data.txt").read_text() == "keep me"


def tapelint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    code = ("import sys\nfrom tapelint.cli import main\nsys.argv = ['tapelint', *sys.argv[1:]]\n"
            "try:\n    main()\nfinally:\n    print('LIBCST' if 'libcst' in sys.modules else 'NO-LIBCST', file=sys.stderr)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=env)


@pytest.mark.slow
def test_a_run_where_every_file_hits_never_loads_libcst(project):
    first = tapelint("--format", "json", ".", cwd=project)
    second = tapelint("--format", "json", ".", cwd=project)
    assert first.returncode == second.returncode == 1
    assert json.loads(first.stdout)["diagnostics"] == json.loads(second.stdout)["diagnostics"]
    assert first.stderr.strip().endswith("LIBCST")
    assert second.stderr.strip().endswith("NO-LIBCST"), second.stderr
    assert "NO-LIBCST" not in tapelint("--no-cache", ".", cwd=project).stderr


@pytest.mark.slow
def test_no_cache_writes_nothing_and_clean_removes_the_cache(project):
    tapelint("--no-cache", ".", cwd=project)
    assert not (project / ".tapelint_cache").exists()
    tapelint(".", cwd=project)
    assert (project / ".tapelint_cache").is_dir()
    done = tapelint("clean", cwd=project)
    assert done.returncode == 0 and "Removed" in done.stderr
    assert not (project / ".tapelint_cache").exists()


@pytest.mark.slow
def test_runs_in_parallel_share_the_cache_safely(project):
    for index in range(20):
        (project / f"step_{index}.py").write_text(TRAIN if index % 2 else FIXED)
    code = ("import sys\nfrom tapelint.cli import main\nsys.argv = ['tapelint', '--format', 'json', '.']\nmain()\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = [subprocess.Popen([sys.executable, "-c", code], cwd=project, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env) for _ in range(3)]
    outputs = [json.loads(p.communicate(timeout=300)[0])["diagnostics"] for p in runs]
    warm = json.loads(subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True,
                                     env=env, timeout=120).stdout)["diagnostics"]
    assert outputs[0] == outputs[1] == outputs[2] == warm
    assert len([d for d in warm if d["code"] == "TL001"]) == 11
    leftovers = [p for p in (project / ".tapelint_cache").rglob("*") if p.name.endswith((".tmp", TEMP_SUFFIX))]
    assert leftovers == []


def test_module_summaries_are_kept_as_json_and_a_changed_module_is_read_again(project, monkeypatch):
    import tapelint.project
    from tapelint.project import ProjectIndex

    (project / "models.py").write_text("import tensorflow as tf\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(10)])\n")
    train = project / "train.py"
    train.write_text("import tensorflow as tf\nfrom models import model\n\n\ndef train_step(x):\n"
                     "    with tf.GradientTape() as tape:\n        loss = tf.reduce_mean(model(x))\n"
                     "    return tape.gradient(loss, model.trainable_variables)\n")
    cache = Cache.for_config(Config(cache_dir=str(project / "c")))
    first = ProjectIndex(cache.summaries()).prelude(train, train.read_text())
    stored = list((project / "c").rglob("modules/*/*.json"))
    assert first is not None and stored
    entries = [json.loads(p.read_text()) for p in stored]
    # what `ast` found, not the lines: those are read again with the bytes the entry is keyed by
    assert [e["summary"]["statements"] for e in entries if "summary" in e] == [[[1, 1, ["tf"], []], [3, 3, ["model"], ["tf"]]]]
    assert [e["imports"] for e in entries if "imports" in e] == [[["models", "model", "model", 2]]]
    summarise, imports = tapelint.project._summarise, tapelint.project._from_imports

    def must_not_read(path, root, text, lines):  # type: ignore[no-untyped-def]
        raise AssertionError(f"{path} was parsed again although its summary is stored")

    def must_not_parse(source, own, is_package):  # type: ignore[no-untyped-def]
        raise AssertionError("the training file was parsed again although its imports are stored")

    monkeypatch.setattr(tapelint.project, "_summarise", must_not_read)
    monkeypatch.setattr(tapelint.project, "_from_imports", must_not_parse)
    again = ProjectIndex(cache.summaries()).prelude(train, train.read_text())
    assert again is not None and again.text == first.text
    monkeypatch.setattr(tapelint.project, "_summarise", summarise)
    monkeypatch.setattr(tapelint.project, "_from_imports", imports)
    (project / "models.py").write_text(
        'import tensorflow as tf\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])\n')
    changed = ProjectIndex(cache.summaries()).prelude(train, train.read_text())
    assert changed is not None and "softmax" in changed.text


# --- an edit that keeps the size and the modification time (cp -p, rsync -t, tar x, a coarse clock)

MODELS = '''import tensorflow as tf


def build_model():
    return tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"),
                                tf.keras.layers.Dense(10, activation="softmax")])
'''

PKG_TRAIN = '''import tensorflow as tf
from .models import build_model

model = build_model()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-3)


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
'''


def _edit_keeping_size_and_time(path: Path, old: str, new: str) -> None:
    status = path.stat()
    text = path.read_text()
    assert len(old) == len(new) and old in text
    path.write_text(text.replace(old, new))
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (status.st_size, status.st_mtime_ns)


@pytest.fixture
def package(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.tapelint]\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "models.py").write_text(MODELS)
    (tmp_path / "pkg" / "train.py").write_text(PKG_TRAIN)
    old = time.time() - 60  # no racy-timestamp rule can save the cache: the times are long past
    for name in ("models.py", "train.py"):
        os.utime(tmp_path / "pkg" / name, (old, old))
    return tmp_path


def test_an_imported_module_edited_with_its_size_and_time_kept_is_read_again(package):
    assert codes(run(package)) == ["TL101"]  # softmax output into from_logits=True
    _edit_keeping_size_and_time(package / "pkg" / "models.py", 'activation="softmax")', 'activation=None     )')
    config = load(package / "pyproject.toml")
    assert codes(lint_paths([package], config, jobs=1)) == []  # what --no-cache says
    assert codes(run(package)) == []  # and the cache agrees
    _edit_keeping_size_and_time(package / "pkg" / "models.py", 'activation=None     )', 'activation="softmax")')
    assert codes(run(package)) == ["TL101"]  # the reverse edit must not hide the bug either


def test_a_long_lived_index_reads_a_module_again_after_an_edit_that_keeps_its_size_and_time(package):
    from tapelint.project import ProjectIndex

    index = ProjectIndex()  # as the editor server keeps one
    train = package / "pkg" / "train.py"
    before = index.prelude(train, train.read_text())
    _edit_keeping_size_and_time(package / "pkg" / "models.py", 'activation="softmax")', 'activation=None     )')
    after = index.prelude(train, train.read_text())
    assert before is not None and after is not None
    assert "softmax" in before.text and "softmax" not in after.text


def test_a_suppression_added_outside_the_lines_a_prelude_takes_from_a_module_is_seen(tmp_path):
    """A cached result rests on the whole of each module its prelude came from (its `# tapelint: noqa`
    comments too), not only on the lines taken into the prelude."""
    (tmp_path / "pyproject.toml").write_text("[tool.tapelint]\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    models = tmp_path / "pkg" / "models.py"
    models.write_text('import tensorflow as tf\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])\n'
                      "loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)\n")
    (tmp_path / "pkg" / "train.py").write_text(
        "import tensorflow as tf\nfrom .models import model, loss_fn\n\noptimizer = tf.keras.optimizers.Adam(1e-3)\n\n\n"
        "def train_step(x, y):\n    with tf.GradientTape() as tape:\n        loss = loss_fn(y, model(x, training=True))\n"
        "    grads = tape.gradient(loss, model.trainable_variables)\n"
        "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n")
    found = run(tmp_path)
    assert [(Path(d.path).name, d.code) for d in found.diagnostics] == [("models.py", "TL101")]
    models.write_text(models.read_text() + "# tapelint: noqa\n")  # a comment line: in no statement's lines
    assert codes(run(tmp_path)) == []


# --- nothing read from the cache folder is trusted

def _result_entries(project: Path) -> list[Path]:
    return [p for p in (project / ".tapelint_cache").rglob("*.json") if "modules" not in p.parts]


INVENTED = {"l": [1, 0, 1, 5], "c": "TL001", "n": "invented", "m": "invented finding", "s": "error", "k": "high"}


def _poison_text(text: str):  # type: ignore[no-untyped-def]
    def poison(entry: Path) -> None:
        entry.write_text(text)
    return poison


def _poison_fifo(entry: Path) -> None:
    entry.unlink()
    os.mkfifo(entry)


def _poison_symlink(entry: Path) -> None:
    elsewhere = entry.parent / "elsewhere.data"
    elsewhere.write_text(json.dumps({"findings": [INVENTED]}))
    entry.unlink()
    entry.symlink_to(elsewhere)


def _finding(**changes):  # type: ignore[no-untyped-def]
    return json.dumps({"findings": [{**INVENTED, **changes}]})


POISONS = {
    "wrong-typed lines": _poison_text(_finding(l=["a", "b", "c", "d"])),
    "nested past the recursion limit": _poison_text('{"findings":' + "[" * 100_000 + "]" * 100_000 + "}"),
    "escape sequence in the message": _poison_text(_finding(m="\x1b[31mINJECTED\x1b[0m optimizer never applied")),
    "code that is no code": _poison_text(_finding(c="rm -rf")),
    "line past the end of the file": _poison_text(_finding(l=[10_000, 0, 10_000, 1])),
    "end before the start": _poison_text(_finding(l=[3, 0, 2, 1])),
    "a field this version never writes": _poison_text(_finding(z=1)),
    "a bool for a line": _poison_text(_finding(l=[True, 0, 1, 1])),
    "findings that are no list": _poison_text('{"findings":{"a":1}}'),
    "a FIFO (would hang)": _poison_fifo,
    "a symbolic link (to /dev/zero it would never end)": _poison_symlink,
}


class _Hung(BaseException):
    pass


@pytest.mark.parametrize("poison", POISONS.values(), ids=list(POISONS))
def test_a_tampered_entry_is_a_miss_and_is_written_again(project, poison):
    import signal

    clean_run = run(project)
    entries = _result_entries(project)
    assert len(entries) == 1
    poison(entries[0])

    def hung(signum, frame):  # type: ignore[no-untyped-def]
        raise _Hung

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    try:
        again = run(project)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert again.cached == 0 and not again.errors
    assert [d.to_dict() for d in again.diagnostics] == [d.to_dict() for d in clean_run.diagnostics]
    assert entries[0].is_file() and not entries[0].is_symlink()
    assert run(project).cached == 1  # the entry was written again, and holds


def test_an_entry_over_the_size_limit_is_not_read(project, monkeypatch):
    import tapelint.cache

    run(project)
    entry = _result_entries(project)[0]
    entry.write_text(json.dumps({"findings": [INVENTED] * 50}))
    monkeypatch.setattr(tapelint.cache, "MAX_ENTRY_BYTES", 1000)
    again = run(project)
    assert again.cached == 0 and "invented" not in {d.name for d in again.diagnostics}


def test_a_tampered_module_summary_is_a_miss(package):
    clean_run = run(package)
    summaries = [p for p in (package / ".tapelint_cache").rglob("modules/*/*.json")]
    assert summaries
    for entry in summaries:
        stored = json.loads(entry.read_text())
        if "summary" in stored:  # a statement that reaches past the module's end, a set where a list goes
            stored["summary"]["statements"] = [[1, 999, {"a": 1}, []]]
        else:
            stored["imports"] = [["pkg.models", 5, "build_model", "x"]]
        entry.write_text(json.dumps(stored))
    for entry in _result_entries(package):
        entry.unlink()
    again = run(package)
    assert not again.errors and codes(again) == codes(clean_run) == ["TL101"]
    assert all(json.loads(entry.read_text()) != {} for entry in summaries)
    rewritten = [json.loads(entry.read_text()) for entry in summaries]
    assert [1, 999, {"a": 1}, []] not in [s for e in rewritten if "summary" in e for s in e["summary"]["statements"]]


# --- files whose answer costs less than an entry are not cached

def test_empty_and_unrelated_files_write_no_entries(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.tapelint]\n")
    folder = tmp_path / "d"
    folder.mkdir()
    for index in range(300):
        (folder / f"f{index}.py").write_text("" if index % 2 else f"x = {index}\n")
    (tmp_path / "empty.py").write_text("")
    config = load(tmp_path / "pyproject.toml")
    cache = Cache.for_config(config)
    first = lint_paths([folder, tmp_path / "empty.py"], config, jobs=1, cache=cache)
    second = lint_paths([folder, tmp_path / "empty.py"], config, jobs=1, cache=Cache.for_config(config))
    assert first.files_checked == second.files_checked == 301
    assert first.diagnostics == second.diagnostics == [] and not first.errors
    assert [p for p in (tmp_path / ".tapelint_cache").rglob("*") if p.is_file() and p.suffix == ".json"] == []
