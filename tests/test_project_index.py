"""The project index: module names, relative imports, re-exports and the bounds of a prelude."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tapelint import project
from tapelint.project import ProjectIndex, module_name, package_root

# What makes a file training code, worth analysing with what it imports.
STEP = "\nwith tf.GradientTape() as tape:\n    pass\n"


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_module_names_are_relative_to_the_outermost_package(tmp_path: Path):
    _write(tmp_path, {"app/__init__.py": "", "app/nets/__init__.py": "", "app/nets/gan.py": ""})
    path = tmp_path / "app" / "nets" / "gan.py"
    assert package_root(path) == tmp_path.resolve()
    assert module_name(path, package_root(path)) == "app.nets.gan"
    assert module_name(tmp_path / "app" / "nets" / "__init__.py", tmp_path.resolve()) == "app.nets"


def test_relative_import_brings_the_definition_and_what_it_needs(tmp_path: Path):
    _write(tmp_path, {
        "app/__init__.py": "",
        "app/models.py": """
            import tensorflow as tf
            UNITS = 10
            def unused():
                return 1
            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(UNITS)])
        """,
        "app/train.py": "from .models import build\nmodel = build()\n" + STEP,
    })
    train = tmp_path / "app" / "train.py"
    prelude = ProjectIndex().prelude(train, train.read_text())
    assert prelude is not None
    assert "def build" in prelude.text and "UNITS = 10" in prelude.text and "import tensorflow as tf" in prelude.text
    assert "def unused" not in prelude.text
    segment, line = prelude.locate(prelude.text.splitlines().index("UNITS = 10") + 1)
    assert Path(segment.path).name == "models.py" and line == 3


def test_re_exports_through_a_package_init_and_aliases(tmp_path: Path):
    _write(tmp_path, {
        "app/__init__.py": "from .optim import make_optimizer as make\n",
        "app/optim.py": "import tensorflow as tf\ndef make_optimizer():\n    return tf.keras.optimizers.Adam(0.1)\n",
        "run.py": "from app import make as new_optimizer\nopt = new_optimizer()\n" + STEP,
    })
    run = tmp_path / "run.py"
    prelude = ProjectIndex().prelude(run, run.read_text())
    assert prelude is not None
    assert "def make_optimizer" in prelude.text
    assert "new_optimizer = make" in prelude.text or "new_optimizer = make_optimizer" in prelude.text


def test_library_imports_and_missing_modules_add_nothing(tmp_path: Path):
    run = tmp_path / "run.py"
    run.write_text("from tensorflow.keras import layers\nfrom nowhere import thing\n")
    assert ProjectIndex().prelude(run, run.read_text()) is None


def test_a_large_module_is_not_inlined(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(project, "MAX_MODULE_LINES", 5)
    _write(tmp_path, {"big.py": "x = 1\n" * 10, "run.py": "from big import x\n" + STEP})
    run = tmp_path / "run.py"
    assert ProjectIndex().prelude(run, run.read_text()) is None


def test_an_import_cycle_terminates(tmp_path: Path):
    _write(tmp_path, {
        "a.py": "from b import g\ndef f():\n    return g()\n" + STEP,
        "b.py": "from a import f\ndef g():\n    return f()\n",
    })
    a = tmp_path / "a.py"
    prelude = ProjectIndex().prelude(a, a.read_text())
    assert prelude is not None and "def g" in prelude.text


def test_a_changed_module_is_read_again(tmp_path: Path):
    _write(tmp_path, {"m.py": "A = 1\n", "run.py": "from m import A\n" + STEP})
    index = ProjectIndex()
    run = tmp_path / "run.py"
    assert "A = 1" in index.prelude(run, run.read_text()).text
    (tmp_path / "m.py").write_text("A = 22\n")
    assert "A = 22" in index.prelude(run, run.read_text()).text


def test_only_training_code_gets_a_prelude(tmp_path: Path):
    _write(tmp_path, {"m.py": "A = 1\n", "util.py": "from m import A\nprint(A)\n",
                      "pkg/__init__.py": "from m import A\n" + STEP})
    index = ProjectIndex()
    util = tmp_path / "util.py"
    assert index.prelude(util, util.read_text()) is None
    facade = tmp_path / "pkg" / "__init__.py"
    assert index.prelude(facade, facade.read_text()) is None


def _framework_like(tmp_path: Path, package: str) -> Path:
    """A package laid out like Keras' sources: a test that trains with the package's own optimizer."""
    _write(tmp_path, {
        f"{package}/__init__.py": "",
        f"{package}/src/__init__.py": "",
        f"{package}/src/optimizers/__init__.py": "",
        f"{package}/src/optimizers/adam.py": "class Adam:\n    def __init__(self, learning_rate=0.001):\n"
                                             "        self.learning_rate = learning_rate\n",
        f"{package}/src/optimizers/adam_test.py": f"from {package}.src.optimizers.adam import Adam\n"
                                                  "opt = Adam(learning_rate=1.0)\nopt.apply_gradients([])\n" + STEP,
    })
    return tmp_path / package / "src" / "optimizers" / "adam_test.py"


def test_the_frameworks_own_modules_are_never_spliced(tmp_path: Path):
    # Linting Keras' (or TensorFlow's) own tests: their imports resolve inside the installed package, but
    # the rules know the framework by its API, not by its implementation.
    for package in sorted(project.FRAMEWORK_PACKAGES):
        test = _framework_like(tmp_path / package, package)
        assert ProjectIndex().prelude(test, test.read_text()) is None, package


def test_a_project_package_laid_out_like_keras_is_still_spliced(tmp_path: Path):
    for package in ("keras_extras", "mykeras"):
        test = _framework_like(tmp_path / package, package)
        prelude = ProjectIndex().prelude(test, test.read_text())
        assert prelude is not None and "class Adam" in prelude.text, package


def test_a_script_that_names_no_module_of_its_folder_is_not_parsed_for_imports(tmp_path: Path, monkeypatch):
    _write(tmp_path, {"models.py": "def build():\n    return 1\n", "data/__init__.py": "",
                      "train.py": "import numpy as np\nfrom tensorflow import keras\n" + STEP})
    parsed = []
    real = project._from_imports
    monkeypatch.setattr(project, "_from_imports", lambda *args: parsed.append(args) or real(*args))
    index = ProjectIndex()
    train = tmp_path / "train.py"
    assert index.prelude(train, train.read_text()) is None and not parsed  # no ast.parse at all
    assert index.top_level_names(tmp_path.resolve()) == {"models", "data", "train"}
    # Naming a module of the folder, even where no import could be (a comment), is reason enough to look.
    train.write_text("# models\nfrom tensorflow import keras\n" + STEP)
    assert index.prelude(train, train.read_text()) is None and len(parsed) == 1


def test_a_module_made_after_the_first_look_is_found(tmp_path: Path):
    # The editor server keeps its index: the folder's listing is read again when the folder changes.
    _write(tmp_path, {"train.py": "from helpers import build\nmodel = build()\n" + STEP})
    index = ProjectIndex()
    train = tmp_path / "train.py"
    assert index.prelude(train, train.read_text()) is None
    _write(tmp_path, {"helpers.py": "import tensorflow as tf\ndef build():\n    return tf.keras.Sequential()\n"})
    prelude = index.prelude(train, train.read_text())
    assert prelude is not None and "def build" in prelude.text


def test_files_in_a_package_and_unusual_identifiers_are_always_parsed(tmp_path: Path):
    _write(tmp_path, {"app/__init__.py": "", "app/models.py": "import tensorflow as tf\nUNITS = 3\n",
                      "app/train.py": "from . import models\n" + STEP})
    index = ProjectIndex()
    train = tmp_path / "app" / "train.py"
    assert index.may_import_locally(train, package_root(train), train.read_text())
    # `ｍｏｄｅｌｓ` (full-width letters) is `models` to Python.
    _write(tmp_path, {"models.py": "UNITS = 3\n", "run.py": "from \uff4d\uff4f\uff44\uff45\uff4c\uff53 import UNITS\n" + STEP})
    run = tmp_path / "run.py"
    assert index.may_import_locally(run, package_root(run), run.read_text())
    prelude = index.prelude(run, run.read_text())
    assert prelude is not None and "UNITS = 3" in prelude.text
