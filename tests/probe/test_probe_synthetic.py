"""`tapelint probe --synthetic-data`: scripts written for another machine (their folders, archives and pretrained
weights are not here) run on synthetic stand-ins, give the finding their bug should give, and the report names
every replaced source. The NumPy/pandas/PIL/OpenCV part and the option plumbing are tested without TensorFlow;
the probe runs (one per group of sources) are slow."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from tapelint.cli import optional_values
from tapelint.config import parse
from tapelint.errors import ConfigError, InputError
from tapelint.probe import synthetic

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path("tests/probe/scripts/synthetic")
HAS_TF = importlib.util.find_spec("tensorflow") is not None


@pytest.fixture
def numpy_only():
    replaced = synthetic.install("missing")
    yield replaced
    replaced.uninstall()


def test_a_missing_array_is_replaced_and_the_report_names_its_line(numpy_only, tmp_path):
    features = np.load(str(tmp_path / "data" / "features.npy"))
    labels = np.load(tmp_path / "data" / "labels.npy")
    assert features.shape == (synthetic.ROWS, synthetic.FEATURES) and features.dtype == np.float32
    assert labels.shape == (synthetic.ROWS,) and set(labels) == set(range(synthetic.CLASSES))
    first, second = numpy_only.notes()
    line = test_a_missing_array_is_replaced_and_the_report_names_its_line.__code__.co_firstlineno + 1
    assert f"test_probe_synthetic.py:{line}" in first  # the caller's line, not NumPy's
    assert "features.npy" in first and "does not exist here" in first and "64x8 (float32)" in first
    assert "labels.npy" in second and "labels of shape (64,) in 0..4" in second


def test_an_existing_file_is_read_as_it_is(numpy_only, tmp_path):
    path = tmp_path / "mean.npy"
    np.save(path, np.array([7.0, 1.0]))
    np.savetxt(tmp_path / "table.csv", np.ones((2, 3)), delimiter=",")
    assert np.load(path).tolist() == [7.0, 1.0]
    assert np.loadtxt(tmp_path / "table.csv", delimiter=",").shape == (2, 3)
    assert numpy_only.notes() == []


def test_always_replaces_existing_files_too(tmp_path):
    path = tmp_path / "mean.npy"
    np.save(path, np.array([7.0, 1.0]))
    replaced = synthetic.install("always")
    try:
        value = np.load(path)
    finally:
        replaced.uninstall()
    assert value.shape == (synthetic.ROWS, synthetic.FEATURES)
    assert "--synthetic-data always" in replaced.notes()[0]
    assert np.load(path).tolist() == [7.0, 1.0]  # uninstalled


def test_text_loaders_and_archives_have_consistent_rows(numpy_only):
    table = np.loadtxt("data/x.csv", delimiter=",", usecols=(0, 2))
    generated = np.genfromtxt("data/more.csv", delimiter=",")
    targets = np.genfromtxt("data/y.csv", delimiter=",")
    with np.load("data/arrays.npz") as archive:
        x, y = archive["x_train"], archive["y_train"]
    assert table.shape == (64, 2) and generated.shape == (64, 8) and targets.shape == (64,)
    assert x.shape == (64, 8) and y.shape == (64,) and y.max() == synthetic.CLASSES - 1
    assert len(numpy_only.notes()) == 4


def test_pandas_pil_and_opencv_are_replaced_when_installed(tmp_path):
    """The libraries are optional (none is in the test environment): stand-in modules with their API."""
    pandas = types.SimpleNamespace(DataFrame=lambda data: dict(data), read_csv=lambda *a, **k: "real",
                                   read_parquet=lambda *a, **k: "real")
    image = types.SimpleNamespace(open=lambda *a, **k: "real", fromarray=lambda array, mode: (array.shape, mode))
    cv2 = types.SimpleNamespace(imread=lambda *a: "real")
    replaced = synthetic.Synthetic("missing")
    synthetic._patch_pandas(replaced, pandas)
    synthetic._patch_pil(replaced, image)
    synthetic._patch_cv2(replaced, cv2)
    existing = tmp_path / "real.csv"
    existing.write_text("a\n1\n")
    assert pandas.read_csv(existing) == "real" and image.open(existing) == "real" and cv2.imread(str(existing)) == "real"
    frame = pandas.read_csv("data/train.csv", usecols=["age", "income", "label"])
    assert list(frame) == ["age", "income", "label"] and len(frame["age"]) == 64
    assert frame["label"].max() == synthetic.CLASSES - 1
    assert len(pandas.read_parquet("data/train.parquet")) == synthetic.FEATURES
    assert image.open("data/cat.jpg") == ((64, 64, 3), "RGB")
    assert cv2.imread("data/mask.png", 0).shape == (64, 64)
    assert [note.split(" at ")[0] for note in replaced.notes()] == [
        "synthetic data: pandas.read_csv('data/train.csv')", "synthetic data: pandas.read_parquet('data/train.parquet')",
        "synthetic data: PIL.Image.open('data/cat.jpg')", "synthetic data: cv2.imread('data/mask.png')"]
    replaced.uninstall()
    assert pandas.read_csv("data/train.csv") == "real"


def test_remote_paths_are_never_looked_up():
    replaced = synthetic.Synthetic("missing")
    assert replaced.missing("gs://bucket/train.npy") and replaced.missing("https://example.com/x.csv")


# --- the option and the setting ---------------------------------------------------------------------


def test_bare_flag_means_missing_and_a_value_is_kept():
    assert optional_values(["probe", "t.py", "--synthetic-data"]) == ["probe", "t.py", "--synthetic-data=missing"]
    assert optional_values(["probe", "--synthetic-data", "t.py"]) == ["probe", "--synthetic-data=missing", "t.py"]
    assert optional_values(["probe", "t.py", "--synthetic-data", "always"]) == ["probe", "t.py", "--synthetic-data",
                                                                                 "always"]
    assert optional_values(["probe", "t.py", "--", "--synthetic-data"])[-1] == "--synthetic-data"
    assert optional_values(["check", "--synthetic-data"]) == ["check", "--synthetic-data"]


@pytest.mark.parametrize(("value", "mode"), [(True, "missing"), (False, "off"), ("always", "always"),
                                             ("missing", "missing")])
def test_the_setting_takes_true_or_a_mode(value, mode):
    config = parse({"probe": {"synthetic-data": value}}, "/p/pyproject.toml", "/p")
    assert dict(config.probe)["synthetic-data"] == mode


@pytest.mark.parametrize("value", ["sometimes", 1, ["always"]])
def test_a_bad_setting_is_one_line(value):
    with pytest.raises(ConfigError) as raised:
        parse({"probe": {"synthetic-data": value}}, "/p/pyproject.toml", "/p")
    assert str(raised.value).startswith("/p/pyproject.toml: `probe.synthetic-data` must be true, false")


def test_the_flag_and_the_setting_reach_the_probe(monkeypatch, tmp_path):
    from tapelint import commands
    from tapelint.probe.report import ProbeResult

    seen = []

    def fake_run_probe(script, args, **kwargs):
        seen.append(kwargs["synthetic_data"])
        return ProbeResult(status="stopped", script=script)

    monkeypatch.setattr("tapelint.probe.run_probe", fake_run_probe)
    script = tmp_path / "train.py"
    script.write_text("x = 1\n")
    options = dict(script=str(script), args=[], steps=None, timeout=None, device="auto", memory_limit=None,
                   output_format="json", exit_zero=True)
    commands.run_probe_command(config_file=None, **options, synthetic_data="always")
    config = tmp_path / "pyproject.toml"
    config.write_text("[tool.tapelint.probe]\nsynthetic-data = true\n")
    commands.run_probe_command(config_file=config, **options)
    commands.run_probe_command(config_file=config, **options, synthetic_data="always")
    config.write_text("[tool.tapelint]\n")
    commands.run_probe_command(config_file=config, **options)
    assert seen == ["always", "missing", "always", None]


@pytest.mark.skipif(not HAS_TF, reason="run_probe needs TensorFlow")
def test_run_probe_refuses_an_unknown_mode(tmp_path):
    from tapelint.probe import run_probe

    script = tmp_path / "train.py"
    script.write_text("x = 1\n")
    with pytest.raises(InputError, match="--synthetic-data must be missing or always"):
        run_probe(script, synthetic_data="sometimes")


# --- probe runs: one per group of sources -----------------------------------------------------------


def _probe(script: str, *options: str, home: Path) -> tuple[int, dict]:
    # A fresh HOME: an empty Keras cache, and the place where a download would land.
    env = {**os.environ, "HOME": str(home), "KERAS_HOME": str(home / ".keras")}
    done = subprocess.run([sys.executable, "-m", "tapelint", "probe", script, "--format", "json", *options],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def _codes(report: dict) -> list[str]:
    return [d["code"] for d in report["diagnostics"]]


def _notes(report: dict) -> list[str]:
    return [note for note in report["probe"]["notes"] if note.startswith("synthetic data: ")]


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TF, reason="the probe needs TensorFlow")
def test_image_folder_and_imagenet_weights_run_on_stand_ins_and_find_the_missing_step(home):
    code, report = _probe("examples/folder_flowers_finetune.py", "--synthetic-data", home=home)
    assert code == 1 and report["probe"]["ok"], report["probe"]
    assert "TL807" in _codes(report)
    folder, weights = _notes(report)
    assert "image_dataset_from_directory('data/flowers/train') at examples/folder_flowers_finetune.py:16" in folder
    assert "64 images 64x64x3" in folder and "one-hot labels over 5 classes" in folder and "batches of 8" in folder
    assert "vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5" in weights
    assert "examples/folder_flowers_finetune.py:22" in weights and "dead units (TL804)" in weights
    assert not list(home.rglob("*.h5")), "nothing may be downloaded"


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TF, reason="the probe needs TensorFlow")
def test_without_the_flag_a_missing_folder_is_the_scripts_own_clear_error(home):
    code, report = _probe("examples/folder_flowers_finetune.py", home=home)
    assert code == 1 and not report["probe"]["ok"]
    assert report["probe"]["failure"].startswith("examples/folder_flowers_finetune.py:16: FileNotFoundError")
    assert "'data/flowers/train'" in report["probe"]["failure"]
    assert any("--synthetic-data" in note for note in report["probe"]["notes"])
    assert not _notes(report)


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TF, reason="the probe needs TensorFlow")
def test_arrays_tables_and_keras_datasets_run_on_stand_ins_and_find_the_double_softmax(home, tmp_path):
    statistics = tmp_path / "statistics.npy"
    np.save(statistics, np.array([7.0, 1.0, 2.0]))  # exists: the script checks it was read as it is
    code, report = _probe(str(SCRIPTS / "arrays_and_tables.py"), "--synthetic-data", "--", str(statistics),
                          home=home)
    assert code == 1 and report["probe"]["ok"], report["probe"]
    assert _codes(report) == ["TL811"]
    notes = _notes(report)
    script = SCRIPTS / "arrays_and_tables.py"
    expected = {f"keras.datasets.mnist.load_data() at {script}:11", f"np.load('data/features.npy') at {script}:12",
                f"np.loadtxt('data/extra.csv') at {script}:13", f"np.genfromtxt('data/more.csv') at {script}:14",
                f"`sequential.load_weights('checkpoints/last.weights.h5')` at {script}:44"}
    for text in expected:
        assert any(text in note for note in notes), (text, notes)
    assert len(notes) == len(expected) + sum(importlib.util.find_spec(m) is not None for m in ("pandas", "PIL", "cv2"))
    assert not any("statistics.npy" in note for note in notes)
    assert not list(home.rglob("mnist*")), "nothing may be downloaded"


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TF, reason="the probe needs TensorFlow")
def test_text_audio_records_files_tfds_and_hub_run_on_stand_ins_and_find_the_missing_step(home):
    code, report = _probe(str(SCRIPTS / "text_audio_records.py"), "--synthetic-data", home=home)
    assert code == 1 and report["probe"]["ok"], report["probe"]
    assert _codes(report) == ["TL807"]
    script = SCRIPTS / "text_audio_records.py"
    notes = _notes(report)
    expected = [f"text_dataset_from_directory('data/reviews/train') at {script}:13",
                f"audio_dataset_from_directory('data/speech/train') at {script}:14",
                f"tfds.load('tf_flowers') at {script}:16",
                f"tf.data.Dataset.list_files('data/records/*.tfrecord') at {script}:28",
                f"tf.data.TFRecordDataset(the synthetic files of Dataset.list_files) at {script}:28",
                f"tf.data.Dataset.list_files('data/photos/*/*.jpg') at {script}:39",
                f"hub.KerasLayer('https://tfhub.dev/google/nnlm-en-dim50/2') at {script}:48"]
    assert [note.split(" at ")[0] + " at " + note.split(" at ")[1].split()[0] for note in notes] == [
        "synthetic data: " + text for text in expected]
    assert "4000 samples" in notes[1] and "(folders class_0..class_4)" in notes[5]


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TF, reason="needs TensorFlow")
def test_a_missing_saved_model_stays_an_error_and_get_file_downloads_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    import keras
    import tensorflow as tf

    replaced = synthetic.install("missing", tf)
    try:
        with pytest.raises((ValueError, OSError)):
            keras.models.load_model(str(tmp_path / "missing.keras"))
        path = keras.utils.get_file("flower_photos.tgz", origin="https://example.invalid/flower_photos.tgz",
                                    extract=True)
        assert not os.path.exists(path) and not list(tmp_path.rglob("flower*"))
        folder = keras.utils.image_dataset_from_directory(path, image_size=(16, 16), batch_size=4,
                                                          validation_split=0.2, subset="both", seed=1)
        train, validation = folder
        assert train.class_names == validation.class_names == replaced.class_names
        images, labels = next(iter(train))
        assert images.shape == (4, 16, 16, 3) and labels.dtype == tf.int32
    finally:
        replaced.uninstall()
    assert keras.utils.image_dataset_from_directory.__name__ == "image_dataset_from_directory"
    with pytest.raises(FileNotFoundError):  # uninstalled: the real function again
        keras.utils.image_dataset_from_directory(str(tmp_path / "nothing"))


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TF, reason="needs TensorFlow")
def test_shapes_follow_the_calls_arguments_positional_or_named():
    import keras
    import tensorflow as tf

    replaced = synthetic.install("missing", tf)
    try:
        gray = keras.utils.image_dataset_from_directory("data/x", "inferred", "binary", None, "grayscale", 16,
                                                        (20, 30))
        texts = tf.keras.preprocessing.text_dataset_from_directory("data/t", label_mode="categorical",
                                                                   class_names=["neg", "pos"], batch_size=4)
        images, labels = next(iter(gray))
        words, onehot = next(iter(texts))
    finally:
        replaced.uninstall()
    assert images.shape == (16, 20, 30, 1) and labels.shape == (16, 1) and labels.dtype == tf.float32
    assert words.dtype == tf.string and onehot.shape == (4, 2) and texts.class_names == ["neg", "pos"]
    assert len(replaced.notes()) == 2 and "20x30x1" in replaced.notes()[0]


def test_arrays_take_the_shape_of_the_models_input_when_the_script_spells_it(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("from tensorflow import keras\nFEATURES = 20\n\n\nmodel = keras.Sequential([\n"
                      "    keras.Input(shape=(FEATURES,)),\n    keras.layers.Dense(1)])\n")
    replaced = synthetic.install("missing", script=str(script))
    try:
        table = np.loadtxt("data/train.csv", delimiter=",")
        features = np.load("data/x.npy")
        labels = np.load("data/y.npy")
    finally:
        replaced.uninstall()
    assert table.shape == features.shape == (64, 20) and labels.shape == (64,)
    assert "shaped like the model's input on line 6" in replaced.notes()[0]


@pytest.mark.parametrize(("source", "shape"), [
    ("keras.Input((28, 28, 1))", (28, 28, 1)),
    ("SIZE = (32, 32)\nkeras.Input(shape=(*SIZE, 3))", (32, 32, 3)),
    ("layers.Dense(8, input_shape=(13,))", (13,)),
    ("keras.Input(shape=(None, 8))", None),  # not a fixed shape
    ("keras.Input(shape=(n,))", None),  # not a constant
    ("x = 1", None),
])
def test_the_model_input_is_read_from_constants_only(source, shape):
    found = synthetic.input_shape_of(source)
    assert (found[0] if found else None) == shape


def test_a_library_looking_for_an_optional_file_still_gets_its_error(numpy_only, tmp_path):
    """Only the script's own calls are replaced: here a 'library' (code under site-packages) calls np.load."""
    import sysconfig

    library = compile("import numpy as np\ndef probe_cache(path):\n    return np.load(path)\n",
                      os.path.join(sysconfig.get_paths()["purelib"], "somelib", "cache.py"), "exec")
    namespace: dict = {}
    exec(library, namespace)
    with pytest.raises(FileNotFoundError):
        namespace["probe_cache"](str(tmp_path / "cache.npy"))
    assert numpy_only.notes() == []


def test_an_installed_tensorflow_datasets_is_never_asked_to_download(tmp_path, monkeypatch):
    package = tmp_path / "tensorflow_datasets"
    package.mkdir()
    (package / "__init__.py").write_text("CALLS = []\n\ndef load(name, **kwargs):\n    CALLS.append(kwargs)\n"
                                         "    return 'prepared'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "tensorflow_datasets", raising=False)
    replaced = synthetic.install("missing")
    try:
        import tensorflow_datasets as tfds

        assert tfds.load("mnist", split="train") == "prepared"
        assert tfds.CALLS == [{"split": "train", "download": False}]
    finally:
        replaced.uninstall()
        sys.modules.pop("tensorflow_datasets", None)
    assert not any(isinstance(f, synthetic._AfterImport) for f in sys.meta_path)
