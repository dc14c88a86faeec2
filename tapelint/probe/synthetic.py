"""`tapelint probe --synthetic-data`: in the probe's child, hand the script synthetic data of a plausible shape
wherever its data source is not on this machine, and random weights wherever pretrained ones would have to be
downloaded. Nothing is ever downloaded. Every replacement is listed in the report with its line.

`install(mode)` patches the sources that are importable (Keras' dataset utilities, `tf.data` readers,
`keras.datasets`, NumPy's loaders, and pandas, PIL and OpenCV when present) and returns a `Synthetic` whose
`notes()` the child adds to the report and whose `uninstall()` puts everything back.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
import sysconfig
import types
from dataclasses import dataclass
from typing import Any, Callable

MODES = ("missing", "always")
ROWS = 64  # every synthetic source has this many rows, so that zip and concatenate line up
CLASSES = 5
IMAGE_SIZE = (64, 64)  # images of unknown size (files, tfds, PIL, OpenCV)
FEATURES = 8  # columns of an unknown table or array
AUDIO_SAMPLES = 16000  # one second at 16 kHz
WORDS = ("the", "model", "learns", "a", "small", "signal", "from", "noise", "and", "data", "good", "bad",
         "great", "film", "story", "slow", "fast", "never", "always", "plot")
# Findings whose evidence depends on the magnitudes of real pretrained weights.
WEAKENED = "dead units (TL804), the initial loss (TL810) and update sizes (TL808)"
_LABEL_NAME = re.compile(r"(^|[^a-z])(y|labels?|targets?|classes)([^a-z]|$)", re.IGNORECASE)
_IMAGE_KEY = re.compile(r"image|img|jpe?g|png|pixels|picture|photo", re.IGNORECASE)
_REMOTE = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


class _NoDownload(Exception):
    """get_file was asked for a file that is not in the Keras cache, under --synthetic-data."""


@dataclass
class Replacement:
    what: str  # the call, e.g. image_dataset_from_directory('data/train')
    site: str  # path:line in the script
    shape: str  # what was handed over instead
    weights: bool = False
    reason: str = "does not exist here"

    def note(self) -> str:
        if self.weights:
            return (f"synthetic data: {self.what} at {self.site} {self.reason}: {self.shape}; magnitudes differ from "
                    f"the real run, so findings on {WEAKENED} are weaker evidence")
        return f"synthetic data: {self.what} at {self.site} {self.reason}: replaced by {self.shape}"


def _library_roots() -> tuple[str, ...]:
    roots = {os.path.dirname(os.path.abspath(__file__)).rsplit(os.sep, 1)[0]}  # tapelint itself
    for key in ("purelib", "platlib", "stdlib", "platstdlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(os.path.abspath(path))
    return tuple(sorted(roots))


def _quote(value: Any) -> str:
    text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else repr(value)
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _is_remote(path: str) -> bool:
    return bool(_REMOTE.match(path))


def _path_of(value: Any) -> str | None:
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return value if isinstance(value, str) else None


class Synthetic:
    """The replacements of one probe run: the patches, the invented classes, and what was replaced where."""

    def __init__(self, mode: str, seed: int = 0) -> None:
        import numpy as np

        if mode not in MODES:
            raise ValueError(f"synthetic data mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self.np = np
        self.rng = np.random.default_rng(seed)
        self.class_names = [f"class_{index}" for index in range(CLASSES)]
        self.replaced: list[Replacement] = []
        self._undo: list[Callable[[], None]] = []
        self._roots = _library_roots()
        self._strict_downloads = 0
        self._undownloaded: set[str] = set()
        self._record_specs: list[dict[str, Any]] = []
        self._synthetic_files: dict[str, bytes] = {}
        self.tf: Any = None
        self.input_shape: tuple[int, ...] | None = None  # the model's input, read from the script
        self.input_line = 0

    # --- bookkeeping -----------------------------------------------------------------------------

    def site(self) -> str:
        """path:line of the innermost frame outside the libraries (the script's own call)."""
        frame = sys._getframe(1)
        while frame is not None:
            name = os.path.abspath(frame.f_code.co_filename)
            if not name.startswith(self._roots) and not frame.f_code.co_filename.startswith("<"):
                try:
                    shown = os.path.relpath(name)
                except ValueError:
                    shown = name
                return f"{name if shown.startswith('..') else shown}:{frame.f_lineno}"
            frame = frame.f_back  # type: ignore[assignment]
        return "<unknown>"

    def from_script(self) -> bool:
        """Whether the patched function was called by the script's own code, not by a library (which may probe
        for an optional file and expect the error)."""
        frame = sys._getframe(1)
        here = os.path.abspath(__file__)
        while frame is not None and os.path.abspath(frame.f_code.co_filename) == here:
            frame = frame.f_back  # type: ignore[assignment]
        if frame is None:
            return False
        name = frame.f_code.co_filename
        return not name.startswith("<") and not os.path.abspath(name).startswith(self._roots)

    def missing(self, path: Any) -> bool:
        """Whether a path source is to be replaced: always in `always` mode; otherwise when it is not here.
        A remote path (gs://, http://) is never looked up: that would be a download."""
        if self.mode == "always":
            return True
        text = _path_of(path)
        if text is None:
            return False
        return _is_remote(text) or not os.path.exists(text)

    def add(self, what: str, shape: str, weights: bool = False, reason: str | None = None) -> None:
        if reason is None:
            reason = "was replaced (--synthetic-data always)" if self.mode == "always" else "does not exist here"
        self.replaced.append(Replacement(what, self.site(), shape, weights, reason))

    def notes(self) -> list[str]:
        return [replacement.note() for replacement in self.replaced]

    def patch(self, owner: Any, name: str, replacement: Any) -> None:
        original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        setattr(owner, name, replacement)
        self._undo.append(lambda: setattr(owner, name, original))

    def patch_everywhere(self, original: Any, replacement: Any, prefixes: tuple[str, ...]) -> int:
        """Replace `original` in every loaded module under `prefixes` that holds it (the public API
        modules bind the same function under several names: keras.utils, tf.keras.preprocessing...). A class
        stays in the module that defines it, whose own code may use it as a type."""
        count = 0
        home = getattr(original, "__module__", None) if isinstance(original, type) else None
        for module_name, module in list(sys.modules.items()):
            if module is None or not module_name.startswith(prefixes) or module_name == home:
                continue
            namespace = getattr(module, "__dict__", None)
            if not isinstance(namespace, dict):
                continue
            for attribute, value in list(namespace.items()):
                if value is original:
                    self.patch(module, attribute, replacement)
                    count += 1
        return count

    def uninstall(self) -> None:
        while self._undo:
            self._undo.pop()()

    # --- values ------------------------------------------------------------------------------------

    def labels(self, rows: int = ROWS, classes: int = CLASSES) -> Any:
        # Every class appears: a classifier's loss and metrics see all of them.
        return self.np.arange(rows) % classes

    def images(self, rows: int, height: int, width: int, channels: int, dtype: str = "float32") -> Any:
        return self.rng.uniform(0, 255, size=(rows, height, width, channels)).astype(dtype)

    def texts(self, rows: int, max_length: int | None = None) -> list[str]:
        out = []
        for _ in range(rows):
            words = [str(w) for w in self.rng.choice(WORDS, size=int(self.rng.integers(6, 20)))]
            text = " ".join(words)
            out.append(text[:max_length] if max_length else text)
        return out

    def table(self, rows: int, columns: int) -> Any:
        return self.rng.normal(size=(rows, columns))

    def encoded(self, extension: str) -> bytes:
        """The bytes of one file of this kind: an image, a sound or a line of text."""
        tf = self.tf
        extension = extension.lower()
        if extension in (".jpg", ".jpeg"):
            return bytes(tf.io.encode_jpeg(self.images(1, *IMAGE_SIZE, 3, "uint8")[0]).numpy())
        if extension in (".png", ".gif", ".bmp"):
            return bytes(tf.io.encode_png(self.images(1, *IMAGE_SIZE, 3, "uint8")[0]).numpy())
        if extension == ".wav":
            samples = self.rng.uniform(-0.5, 0.5, size=(AUDIO_SAMPLES, 1)).astype("float32")
            return bytes(tf.audio.encode_wav(samples, 16000).numpy())
        return self.texts(1)[0].encode()


# --- NumPy, pandas, PIL, OpenCV --------------------------------------------------------------------


def _array_for(synthetic: Synthetic, name: str, columns: int | None = None, binary: bool = False) -> Any:
    """Labels for a label-like name; otherwise features shaped like the model's input when the script names
    one with constants (`keras.Input((20,))`), else FEATURES columns."""
    if _LABEL_NAME.search(os.path.basename(name)):
        return synthetic.labels()
    shape = synthetic.input_shape
    if columns is None and shape is not None and (len(shape) == 1 or binary):
        return synthetic.rng.normal(size=(ROWS, *shape)).astype("float32")
    return synthetic.table(ROWS, columns or FEATURES).astype("float32")


def input_shape_of(source: str) -> tuple[tuple[int, ...], int] | None:
    """The first model input shape the script spells with constants, and its line: `keras.Input((28, 28, 1))`,
    `Input(shape=(N,))` with `N = 20` at module level, `Dense(..., input_shape=(20,))`. None when there is none."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    constants: dict[str, Any] = {}
    for statement in tree.body:
        if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)):
            try:
                constants[statement.targets[0].id] = ast.literal_eval(statement.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue

    def value_of(node: ast.AST) -> Any:
        if isinstance(node, ast.Name):
            return constants.get(node.id)
        if isinstance(node, (ast.Tuple, ast.List)):
            parts: list[Any] = []
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    inner = value_of(element.value)
                    if not isinstance(inner, (tuple, list)):
                        return None
                    parts.extend(inner)
                else:
                    parts.append(value_of(element))
            return tuple(parts)
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None

    found: list[tuple[int, tuple[int, ...]]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        candidates = [k.value for k in node.keywords if k.arg == "input_shape"]
        if name in ("Input", "InputLayer"):
            candidates += [k.value for k in node.keywords if k.arg == "shape"] + node.args[:1]
        for candidate in candidates:
            shape = value_of(candidate)
            shape = (shape,) if isinstance(shape, int) and not isinstance(shape, bool) else shape
            if (isinstance(shape, tuple) and shape and len(shape) <= 4
                    and all(isinstance(d, int) and not isinstance(d, bool) and 0 < d <= 4096 for d in shape)):
                found.append((node.lineno, shape))
                break
    if not found:
        return None
    line, shape = min(found)
    return shape, line


class _Npz(dict):
    """What np.load gives for a missing .npz: any key is an array, labels for label-like keys."""

    def __init__(self, synthetic: Synthetic) -> None:
        super().__init__()
        self.synthetic = synthetic
        self.files: list[str] = []

    def __missing__(self, key: str) -> Any:
        value = _array_for(self.synthetic, key, binary=True)
        self[key] = value
        self.files.append(key)
        return value

    def __enter__(self) -> "_Npz":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def close(self) -> None:
        return None


def _patch_numpy(synthetic: Synthetic) -> None:
    np = synthetic.np
    original_load, original_loadtxt, original_genfromtxt = np.load, np.loadtxt, np.genfromtxt

    def load(file: Any, *args: Any, **kwargs: Any) -> Any:
        if not synthetic.from_script() or not synthetic.missing(file):
            return original_load(file, *args, **kwargs)
        path = _path_of(file) or ""
        if path.endswith(".npz"):
            synthetic.add(f"np.load({_quote(file)})", f"an .npz archive whose every key is {ROWS} rows "
                                                      f"(float32 ({ROWS}, {FEATURES}); labels 0..{CLASSES - 1} for "
                                                      "label-like keys)")
            return _Npz(synthetic)
        value = _array_for(synthetic, path, binary=True)
        synthetic.add(f"np.load({_quote(file)})", _describe_array(value, synthetic))
        return value

    def text_loader(original: Callable, name: str) -> Callable:
        def loader(fname: Any, *args: Any, **kwargs: Any) -> Any:
            if not synthetic.from_script() or not synthetic.missing(fname):
                return original(fname, *args, **kwargs)
            usecols = kwargs.get("usecols")
            columns = (1 if isinstance(usecols, int) else len(usecols)) if usecols is not None else None
            value = _array_for(synthetic, _path_of(fname) or "", columns).astype(kwargs.get("dtype") or "float64")
            if isinstance(usecols, int) and value.ndim == 2:
                value = value[:, 0]
            if kwargs.get("unpack"):
                value = value.T
            synthetic.add(f"np.{name}({_quote(fname)})", _describe_array(value, synthetic))
            return value

        return loader

    synthetic.patch(np, "load", load)
    synthetic.patch(np, "loadtxt", text_loader(original_loadtxt, "loadtxt"))
    synthetic.patch(np, "genfromtxt", text_loader(original_genfromtxt, "genfromtxt"))


def _describe_array(value: Any, synthetic: Synthetic) -> str:
    shape = "x".join(str(n) for n in value.shape)
    if value.ndim == 1 and value.dtype.kind in "iu":
        return f"labels of shape ({shape},) in 0..{CLASSES - 1} ({value.dtype})"
    text = f"an array of shape ({shape},) ({value.dtype})" if value.ndim == 1 else f"an array {shape} ({value.dtype})"
    if synthetic.input_shape is not None and tuple(value.shape[1:]) == synthetic.input_shape:
        text += f", shaped like the model's input on line {synthetic.input_line}"
    return text


def _patch_pandas(synthetic: Synthetic, pandas: Any) -> None:
    def frame(columns: list[str]) -> Any:
        data: dict[str, Any] = {}
        for column in columns:
            data[column] = (synthetic.labels() if _LABEL_NAME.search(column)
                            else synthetic.table(ROWS, 1)[:, 0])
        return pandas.DataFrame(data)

    def reader(original: Callable, name: str) -> Callable:
        def read(path: Any, *args: Any, **kwargs: Any) -> Any:
            if not synthetic.from_script() or not synthetic.missing(path):
                return original(path, *args, **kwargs)
            columns = kwargs.get("names") or kwargs.get("usecols") or kwargs.get("columns")
            width = synthetic.input_shape[0] if synthetic.input_shape and len(synthetic.input_shape) == 1 else None
            names = ([str(c) for c in columns] if columns is not None and not callable(columns)
                     else [f"feature_{i}" for i in range(width or FEATURES - 1)] + ["label"])
            synthetic.add(f"pandas.{name}({_quote(path)})", f"a DataFrame of {ROWS} rows, columns "
                                                            f"{', '.join(names[:10])} (labels 0..{CLASSES - 1} in "
                                                            "label-like columns, floats elsewhere)")
            return frame(names)

        return read

    for name in ("read_csv", "read_parquet"):
        if hasattr(pandas, name):
            synthetic.patch(pandas, name, reader(getattr(pandas, name), name))


def _patch_pil(synthetic: Synthetic, image_module: Any) -> None:
    original = image_module.open

    def open_(fp: Any, *args: Any, **kwargs: Any) -> Any:
        if _path_of(fp) is None or not synthetic.from_script() or not synthetic.missing(fp):
            return original(fp, *args, **kwargs)
        synthetic.add(f"PIL.Image.open({_quote(fp)})", f"an RGB image {IMAGE_SIZE[1]}x{IMAGE_SIZE[0]}")
        return image_module.fromarray(synthetic.images(1, *IMAGE_SIZE, 3, "uint8")[0], "RGB")

    synthetic.patch(image_module, "open", open_)


def _patch_cv2(synthetic: Synthetic, cv2: Any) -> None:
    original = cv2.imread

    def imread(filename: Any, flags: int = 1, *args: Any) -> Any:
        if not synthetic.from_script() or not synthetic.missing(filename):
            return original(filename, flags, *args)
        channels = 1 if flags == 0 else 3
        image = synthetic.images(1, *IMAGE_SIZE, channels, "uint8")[0]
        if channels == 1:
            image = image[..., 0]
        synthetic.add(f"cv2.imread({_quote(filename)})", f"a uint8 image {'x'.join(map(str, image.shape))}")
        return image

    synthetic.patch(cv2, "imread", imread)


# --- Keras and tf.data ---------------------------------------------------------------------------


def _arguments(function: Callable, first: Any, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments by name (`image_dataset_from_directory(path, "inferred", "categorical")`)."""
    import inspect

    try:
        bound = inspect.signature(function).bind_partial(first, *args, **kwargs).arguments
    except (TypeError, ValueError):
        return dict(kwargs)
    named = {key: value for key, value in bound.items() if key != "kwargs"}
    named.update(bound.get("kwargs") or {})
    return named


def _size(value: Any, default: tuple[int, int]) -> tuple[int, int]:
    if value is None:
        return default
    if isinstance(value, int):
        return value, value
    return int(value[0]), int(value[1])


class _KerasSources:
    """The Keras directory readers, keras.datasets, get_file, applications' weights and load_weights."""

    def __init__(self, synthetic: Synthetic) -> None:
        self.s = synthetic
        self.tf = synthetic.tf

    def classes_of(self, kwargs: dict[str, Any]) -> list[str]:
        given = kwargs.get("class_names")
        return [str(name) for name in given] if given else list(self.s.class_names)

    def finish(self, features: Any, labels: Any, kwargs: dict[str, Any], names: list[str],
               default_batch: int = 32) -> tuple[Any, str]:
        tf, np = self.tf, self.s.np
        label_mode = kwargs.get("label_mode", "int")
        if kwargs.get("labels") is None and "labels" in kwargs:
            label_mode = None
        if label_mode == "binary":
            labels = (labels % 2).astype("float32")[:, None]
            label_text = "binary labels (float32)"
        elif label_mode == "categorical":
            labels = np.eye(len(names), dtype="float32")[labels]
            label_text = f"one-hot labels over {len(names)} classes"
        elif label_mode is None:
            label_text = "no labels"
        else:
            labels = labels.astype("int32")
            label_text = f"int labels 0..{len(names) - 1}"
        batch = kwargs.get("batch_size", default_batch)
        dataset = (tf.data.Dataset.from_tensor_slices(features) if label_mode is None
                   else tf.data.Dataset.from_tensor_slices((features, labels)))
        if batch is not None:
            dataset = dataset.batch(int(batch))
        dataset.class_names = names
        dataset.file_paths = [f"synthetic/{names[int(i) % len(names)]}/{i}" for i in range(ROWS)]
        batches = f", batches of {batch}" if batch is not None else ", unbatched"
        return dataset, f"{label_text}, classes {', '.join(names[:6])}{'...' if len(names) > 6 else ''}{batches}"

    def subsets(self, make: Callable[[], Any], kwargs: dict[str, Any]) -> Any:
        return (make(), make()) if kwargs.get("subset") == "both" else make()

    def from_directory(self, original: Callable, name: str,
                       shape: Callable[[dict[str, Any]], tuple[Callable[[], Any], str]]) -> Callable:
        """A stand-in for keras' `<kind>_dataset_from_directory` loader `name`: `shape(kwargs)` gives what makes
        the features of one data set, and how the report describes them."""

        def replaced(directory: Any, *args: Any, **kwargs: Any) -> Any:
            if not self.s.missing(directory):
                return original(directory, *args, **kwargs)
            kwargs = _arguments(original, directory, args, kwargs)
            features, what = shape(kwargs)
            names = self.classes_of(kwargs)
            described: list[str] = []

            def make() -> Any:
                dataset, text = self.finish(features(), self.s.labels(classes=len(names)), kwargs, names)
                described.append(text)
                return dataset

            result = self.subsets(make, kwargs)
            self.s.add(f"{name}({_quote(directory)})", f"{ROWS} {what}, {described[0]}")
            return result

        replaced.__name__ = replaced.__qualname__ = name
        return replaced

    def image_dataset(self, original: Callable) -> Callable:
        def shape(kwargs: dict[str, Any]) -> tuple[Callable[[], Any], str]:
            height, width = _size(kwargs.get("image_size"), (256, 256))
            channels = {"grayscale": 1, "rgb": 3, "rgba": 4}.get(kwargs.get("color_mode", "rgb"), 3)
            return (lambda: self.s.images(ROWS, height, width, channels),
                    f"images {height}x{width}x{channels} (float32, 0..255)")

        return self.from_directory(original, "image_dataset_from_directory", shape)

    def text_dataset(self, original: Callable) -> Callable:
        def shape(kwargs: dict[str, Any]) -> tuple[Callable[[], Any], str]:
            return (lambda: self.s.np.array(self.s.texts(ROWS, kwargs.get("max_length")), dtype=object),
                    "texts of 6 to 20 words (string)")

        return self.from_directory(original, "text_dataset_from_directory", shape)

    def audio_dataset(self, original: Callable) -> Callable:
        def shape(kwargs: dict[str, Any]) -> tuple[Callable[[], Any], str]:
            length = int(kwargs.get("output_sequence_length") or kwargs.get("sampling_rate") or AUDIO_SAMPLES)
            return (lambda: self.s.rng.uniform(-0.5, 0.5, size=(ROWS, length, 1)).astype("float32"),
                    f"clips of {length} samples x 1 channel (float32, -0.5..0.5)")

        return self.from_directory(original, "audio_dataset_from_directory", shape)

    def get_file(self, original: Callable) -> Callable:
        """Never download: a file already in the cache is used; otherwise the path it would have is returned
        (it does not exist, so what reads it next is replaced), or, inside keras.datasets, _NoDownload."""

        def get_file(fname: Any = None, origin: Any = None, *args: Any, **kwargs: Any) -> Any:
            given = _arguments(original, fname, (origin, *args), kwargs)
            cache_dir = given.get("cache_dir") or os.environ.get("KERAS_HOME") or os.path.join(
                os.path.expanduser("~"), ".keras")
            name = fname or os.path.basename(str(origin or "download"))
            subdir = given.get("cache_subdir") or "datasets"
            path = os.path.join(os.fspath(cache_dir), subdir, os.fspath(name))
            alternative = os.path.join("/tmp", ".keras", subdir, os.fspath(name))
            for candidate in (path, alternative):
                if os.path.exists(candidate) and not given.get("force_download"):
                    return original(fname, origin, *args, **kwargs)
            if self.s._strict_downloads:
                raise _NoDownload(path)
            self.s._undownloaded.add(os.path.abspath(path))
            for suffix in (".tar.gz", ".tgz", ".zip", ".tar"):
                if path.endswith(suffix) and (given.get("extract") or given.get("untar")):
                    path = path[: -len(suffix)]
            self.s._undownloaded.add(os.path.abspath(path))
            return path

        return get_file

    def load_weights(self, original: Callable) -> Callable:
        def load_weights(model: Any, filepath: Any, *args: Any, **kwargs: Any) -> Any:
            path = _path_of(filepath)
            if path is None or os.path.exists(path) or os.path.exists(path + ".index"):
                return original(model, filepath, *args, **kwargs)
            if os.path.abspath(path) in self.s._undownloaded:
                self.s.add(f"pretrained weights {_quote(os.path.basename(path))}", "random initialisation instead",
                           True, "are not in the Keras cache and are not downloaded")
            else:
                self.s.add(f"`{getattr(model, 'name', 'model')}.load_weights({_quote(filepath)})`",
                           "skipped, the model keeps its random initialisation", True, "has no such file")
            return None

        return load_weights

    def dataset_loader(self, original: Callable, name: str) -> Callable:
        def load_data(*args: Any, **kwargs: Any) -> Any:
            if self.s.mode != "always":
                self.s._strict_downloads += 1
                try:
                    return original(*args, **kwargs)
                except _NoDownload:
                    pass
                finally:
                    self.s._strict_downloads -= 1
            (train, test), text = self.keras_dataset(name, kwargs)
            self.s.add(f"keras.datasets.{name}.load_data()", text,
                       reason=None if self.s.mode == "always" else "is not in the Keras cache (a download)")
            return train, test

        return load_data

    def keras_dataset(self, name: str, kwargs: dict[str, Any]) -> tuple[tuple[Any, Any], str]:
        s, np = self.s, self.s.np

        def part() -> tuple[Any, Any]:
            if name in ("mnist", "fashion_mnist"):
                return s.images(ROWS, 28, 28, 1, "uint8")[..., 0], s.labels(classes=10).astype("uint8")
            if name in ("cifar10", "cifar100"):
                classes = 10 if name == "cifar10" else (20 if kwargs.get("label_mode") == "coarse" else 100)
                return s.images(ROWS, 32, 32, 3, "uint8"), s.labels(classes=classes).astype("uint8")[:, None]
            if name in ("imdb", "reuters"):
                words = int(kwargs.get("num_words") or 10000)
                sequences = np.empty(ROWS, dtype=object)
                for row in range(ROWS):
                    sequences[row] = [1, *(int(w) for w in s.rng.integers(2, words, size=int(s.rng.integers(20, 80))))]
                return sequences, s.labels(classes=2 if name == "imdb" else 46)
            columns = 13 if name == "boston_housing" else 8
            return s.table(ROWS, columns), np.abs(s.table(ROWS, 1)[:, 0]) * 10
        train, test = part(), part()
        x, y = train
        if x.dtype == object:
            shape = f"{ROWS} sequences of word indices"
        else:
            shape = f"x {'x'.join(map(str, x.shape))} ({x.dtype})"
        kind = f"labels 0..{int(y.max())}" if y.dtype.kind in "iu" else "float targets"
        return (train, test), f"train and test of {ROWS} rows each: {shape}, {kind}"


def _patch_keras(synthetic: Synthetic) -> None:
    keras_sources = _KerasSources(synthetic)
    prefixes = ("keras", "tensorflow", "tf_keras")
    for api in ("keras.utils", "keras.preprocessing", "keras.datasets", "keras._tf_keras.keras.utils",
                "keras._tf_keras.keras.preprocessing", "keras._tf_keras.keras.datasets"):
        try:
            importlib.import_module(api)
        except Exception:  # noqa: BLE001 - an API module this Keras does not have
            pass
    readers = (("keras.src.utils.image_dataset_utils", "image_dataset_from_directory", keras_sources.image_dataset),
               ("keras.src.utils.text_dataset_utils", "text_dataset_from_directory", keras_sources.text_dataset),
               ("keras.src.utils.audio_dataset_utils", "audio_dataset_from_directory", keras_sources.audio_dataset),
               ("keras.src.utils.file_utils", "get_file", keras_sources.get_file))
    for module_name, name, wrap in readers:
        module = sys.modules.get(module_name)
        if module is None or not hasattr(module, name):
            continue
        original = getattr(module, name)
        synthetic.patch_everywhere(original, wrap(original), prefixes)
    for name in ("mnist", "fashion_mnist", "cifar10", "cifar100", "imdb", "reuters", "boston_housing",
                 "california_housing"):
        try:
            module = importlib.import_module(f"keras.src.datasets.{name}")
        except ImportError:
            continue
        original = module.load_data
        synthetic.patch_everywhere(original, keras_sources.dataset_loader(original, name), prefixes)
    try:
        from keras.src.models.model import Model
    except ImportError:
        return
    synthetic.patch(Model, "load_weights", keras_sources.load_weights(Model.__dict__["load_weights"]))


class _TFData:
    """tf.data.TFRecordDataset, Dataset.list_files and the tf.io.read_file that reads the listed names."""

    def __init__(self, synthetic: Synthetic) -> None:
        self.s = synthetic
        self.tf = synthetic.tf
        self.listed: set[int] = set()  # ids of datasets of synthetic file names

    def example(self, index: int) -> bytes:
        """One serialized tf.train.Example with the features the script parses (the last spec it gave
        tf.io.parse_*example); an empty one before any."""
        tf, s = self.tf, self.s
        spec = s._record_specs[-1] if s._record_specs else {}
        feature = {}
        for key, kind in spec.items():
            dtype = getattr(kind, "dtype", tf.float32)
            shape = [int(d) for d in (getattr(kind, "shape", None) or []) if d is not None]
            count = int(s.np.prod(shape)) if shape else (1 if hasattr(kind, "shape") else 3)
            if dtype == tf.string:
                if _IMAGE_KEY.search(key):
                    strings = [s.encoded(".png") for _ in range(count)]
                else:
                    strings = [text.encode() for text in s.texts(count)]
                feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=strings))
            elif dtype.is_integer:
                integers = [int((index + i) % CLASSES) for i in range(count)]
                feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=integers))
            else:
                floats = [float(v) for v in s.rng.normal(size=count)]
                feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=floats))
        return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()

    def records(self) -> Any:
        tf = self.tf

        def one(index: Any) -> Any:
            record = tf.py_function(lambda i: self.example(int(i)), [index], tf.string)
            record.set_shape([])
            return record

        return tf.data.Dataset.range(ROWS).map(one)

    def parse(self, original: Callable) -> Callable:
        def parse_example(serialized: Any, features: Any = None, *args: Any, **kwargs: Any) -> Any:
            if isinstance(features, dict):
                self.s._record_specs.append(dict(features))
            return original(serialized, features, *args, **kwargs)

        return parse_example

    def tfrecord_dataset(self, original: Any) -> Callable:
        def TFRecordDataset(filenames: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 - tf's name
            if id(filenames) in self.listed:
                missing = True
                shown = "the synthetic files of Dataset.list_files"
            elif isinstance(filenames, (str, bytes, os.PathLike)) or (
                    isinstance(filenames, (list, tuple)) and filenames
                    and all(isinstance(f, (str, bytes, os.PathLike)) for f in filenames)):
                names = [filenames] if isinstance(filenames, (str, bytes, os.PathLike)) else list(filenames)
                missing = any(self.s.missing(name) or _path_of(name) in self.s._synthetic_files for name in names)
                shown = _quote(names[0]) + (f" and {len(names) - 1} more" if len(names) > 1 else "")
            elif self.s._synthetic_files and hasattr(filenames, "dtype") and not hasattr(filenames, "numpy"):
                missing = True  # a file name inside interleave(), from a synthetic list_files
                shown = "a file name from the synthetic Dataset.list_files"
            else:
                missing = False
                shown = ""
            if not missing:
                return original(filenames, *args, **kwargs)
            if not any(r.what.startswith("tf.data.TFRecordDataset") for r in self.s.replaced):
                self.s.add(f"tf.data.TFRecordDataset({shown})",
                           f"{ROWS} serialized tf.train.Example records with the features the script parses "
                           f"(int64 features: labels 0..{CLASSES - 1}; string features: PNG images for image-like "
                           "keys, text otherwise; floats: normal)")
            return self.records()

        return TFRecordDataset

    def list_files(self, original: Callable) -> Callable:
        def list_files(file_pattern: Any, *args: Any, **kwargs: Any) -> Any:
            pattern = _path_of(file_pattern)
            if pattern is None:
                return original(file_pattern, *args, **kwargs)
            if self.s.mode != "always" and not _is_remote(pattern) and self.tf.io.gfile.glob(pattern):
                return original(file_pattern, *args, **kwargs)
            names = self.names_for(pattern)
            extension = os.path.splitext(pattern)[1]
            content = self.s.encoded(extension) if extension not in (".tfrecord", ".tfrecords", ".record") else b""
            for name in names:
                self.s._synthetic_files[name] = content
            dataset = self.tf.data.Dataset.from_tensor_slices(names)
            self.listed.add(id(dataset))
            records = extension.lower() in (".tfrecord", ".tfrecords", ".record")
            what = {"": "files", ".wav": "WAV files of 1 s at 16 kHz", ".txt": "text files"}.get(
                extension.lower(), "TFRecord files" if records else f"images {IMAGE_SIZE[1]}x{IMAGE_SIZE[0]}x3")
            folders = any(re.search(r"[*?[]", part) for part in pattern.replace("\\", "/").split("/")[:-1])
            self.s.add(f"tf.data.Dataset.list_files({_quote(pattern)})",
                       f"{len(names)} {what} named like the pattern"
                       + (f" (folders class_0..class_{CLASSES - 1})" if folders else "")
                       + ("; tf.data.TFRecordDataset reads them" if records else "; tf.io.read_file reads them"))
            return dataset

        return list_files

    def names_for(self, pattern: str) -> list[str]:
        parts = pattern.replace("\\", "/").split("/")
        wild = re.compile(r"\*\*|\*|\?|\[[^\]]*\]")
        if not wild.search(parts[-1]) and not any(wild.search(p) for p in parts):
            return [pattern]
        names = []
        for row in range(ROWS):
            folders = [wild.sub(self.s.class_names[row % CLASSES], part) if wild.search(part) else part
                       for part in parts[:-1]]
            last = wild.sub(str(row), parts[-1]) if wild.search(parts[-1]) else parts[-1]
            names.append("/".join([*folders, last]))
        return names

    def read_file(self, original: Callable) -> Callable:
        tf = self.tf

        def read_file(filename: Any, name: Any = None) -> Any:
            if not self.s._synthetic_files:
                return original(filename, name)
            text = _path_of(filename)
            if text is None and hasattr(filename, "numpy"):
                try:
                    text = filename.numpy().decode("utf-8", "replace")
                except Exception:  # noqa: BLE001 - not a scalar string
                    text = None
            if text is not None:
                content = self.s._synthetic_files.get(text)
                return tf.constant(content) if content is not None else original(filename, name)
            names = tf.constant(list(self.s._synthetic_files))
            contents = tf.constant(list(self.s._synthetic_files.values()))
            tensor = tf.convert_to_tensor(filename, tf.string)
            matches = tf.equal(names, tensor)
            return tf.cond(tf.reduce_any(matches),
                           lambda: tf.gather(contents, tf.argmax(tf.cast(matches, tf.int32))),
                           lambda: original(tensor, name))

        return read_file


def _patch_tf(synthetic: Synthetic) -> None:
    tf = synthetic.tf
    data = _TFData(synthetic)
    prefixes = ("tensorflow", "keras")
    from tensorflow.python.data.ops import dataset_ops

    list_files = dataset_ops.DatasetV2.__dict__["list_files"]
    synthetic.patch(dataset_ops.DatasetV2, "list_files", staticmethod(data.list_files(list_files.__func__)))
    synthetic.patch_everywhere(tf.data.TFRecordDataset, data.tfrecord_dataset(tf.data.TFRecordDataset), prefixes)
    synthetic.patch_everywhere(tf.io.read_file, data.read_file(tf.io.read_file), prefixes)
    for parse in (tf.io.parse_single_example, tf.io.parse_example):
        synthetic.patch_everywhere(parse, data.parse(parse), prefixes)


# --- tensorflow_datasets and tensorflow_hub, when they are not installed ---------------------------

TFDS_SPECS: dict[str, tuple[str, tuple[int, ...], int]] = {
    "mnist": ("image", (28, 28, 1), 10), "fashion_mnist": ("image", (28, 28, 1), 10),
    "cifar10": ("image", (32, 32, 3), 10), "cifar100": ("image", (32, 32, 3), 100),
    "tf_flowers": ("image", (*IMAGE_SIZE, 3), 5), "cats_vs_dogs": ("image", (*IMAGE_SIZE, 3), 2),
    "imdb_reviews": ("text", (), 2), "ag_news_subset": ("text", (), 4), "yelp_polarity_reviews": ("text", (), 2),
}


class _Info:
    def __init__(self, name: str, classes: list[str], splits: list[str], kind: str, shape: tuple[int, ...]) -> None:
        self.name = name
        label = types.SimpleNamespace(num_classes=len(classes), names=classes,
                                      int2str=lambda i: classes[int(i)], str2int=classes.index)
        data = types.SimpleNamespace(shape=shape, dtype="uint8" if kind == "image" else "string")
        self.features = {"label": label, kind: data}
        self.splits = {split: types.SimpleNamespace(num_examples=ROWS, name=split) for split in splits}
        self.supervised_keys = (kind, "label")

    def __repr__(self) -> str:
        return f"tfds.core.DatasetInfo(name={self.name!r}, synthetic=True)"


def _fake_tfds(synthetic: Synthetic) -> types.ModuleType:
    module = types.ModuleType("tensorflow_datasets")
    module.__doc__ = "tapelint probe --synthetic-data: a stand-in for tensorflow_datasets, which is not installed."

    def load(name: str, split: Any = None, as_supervised: bool = False, with_info: bool = False,
             batch_size: int | None = None, **kwargs: Any) -> Any:
        tf = synthetic.tf
        base = str(name).split("/")[0].split(":")[0]
        kind, shape, classes = TFDS_SPECS.get(base, ("image", (*IMAGE_SIZE, 3), CLASSES))
        names = [f"class_{i}" for i in range(classes)] if classes != CLASSES else list(synthetic.class_names)
        splits = split if isinstance(split, (list, tuple)) else [split or "train"]

        def one() -> Any:
            labels = synthetic.labels(classes=classes).astype("int64")
            if kind == "text":
                values: Any = synthetic.np.array(synthetic.texts(ROWS), dtype=object)
            else:
                height, width, channels = shape
                values = synthetic.images(ROWS, height, width, channels, "uint8")
            dataset = tf.data.Dataset.from_tensor_slices((values, labels) if as_supervised
                                                         else {kind: values, "label": labels})
            if batch_size is not None and batch_size > 0:
                dataset = dataset.batch(batch_size)
            elif batch_size == -1:
                return next(iter(dataset.batch(ROWS)))
            return dataset

        out = [one() for _ in splits]
        result: Any = out if isinstance(split, (list, tuple)) else (out[0] if split is not None else
                                                                    {"train": out[0], "test": one()})
        described = (f"{ROWS} {'texts' if kind == 'text' else 'images ' + 'x'.join(map(str, shape)) + ' uint8'} "
                     f"per split, labels 0..{classes - 1}" + (", as (input, label) pairs" if as_supervised else ""))
        synthetic.add(f"tfds.load({_quote(name)})", described, reason="needs tensorflow_datasets, not installed here")
        if with_info:
            return result, _Info(base, names, [str(s) for s in splits if s] or ["train", "test"], kind, shape)
        return result

    def as_numpy(value: Any) -> Any:
        if hasattr(value, "as_numpy_iterator"):
            return value.as_numpy_iterator()
        return synthetic.tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, value)

    module.load = load  # type: ignore[attr-defined]
    module.as_numpy = as_numpy  # type: ignore[attr-defined]
    module.disable_progress_bar = lambda: None  # type: ignore[attr-defined]
    split = types.SimpleNamespace(TRAIN="train", TEST="test", VALIDATION="validation")
    module.Split = split  # type: ignore[attr-defined]

    def missing(attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        raise AttributeError(f"tensorflow_datasets is not installed; tapelint's --synthetic-data stand-in has only "
                             f"load, as_numpy, disable_progress_bar and Split, not `{attribute}`")

    setattr(module, "__getattr__", missing)  # noqa: B010 - a module's __getattr__ (PEP 562)
    return module


def _fake_hub(synthetic: Synthetic, reason: str = "needs tensorflow_hub, not installed here") -> types.ModuleType:
    module = types.ModuleType("tensorflow_hub")
    module.__doc__ = "tapelint probe --synthetic-data: a stand-in for tensorflow_hub, which is not installed."
    import keras

    class KerasLayer(keras.layers.Layer):
        """A random stand-in for a hub model: text is hashed into an embedding; images are pooled and projected."""

        def __init__(self, handle: Any, trainable: bool = False, output_shape: Any = None, arguments: Any = None,
                     **kwargs: Any) -> None:
            kwargs.pop("input_shape", None)
            kwargs.pop("signature", None)
            kwargs.pop("signature_outputs_as_dict", None)
            kwargs.pop("output_key", None)
            kwargs.pop("load_options", None)
            super().__init__(trainable=trainable, **kwargs)
            self.handle = str(handle)
            width = output_shape[-1] if isinstance(output_shape, (list, tuple)) and output_shape else output_shape
            self.width = int(width or 128)
            synthetic.add(f"hub.KerasLayer({_quote(handle)})",
                          f"a random layer with {self.width} outputs instead (text: a hashed embedding; images: a "
                          "pooled projection)", True, reason)

        def build(self, input_shape: Any) -> None:
            self.text = getattr(self, "_input_is_text", False)
            depth = int(input_shape[-1]) if input_shape and input_shape[-1] is not None else 3
            self.kernel = self.add_weight(name="kernel", shape=(1000 if self.text else depth, self.width),
                                          initializer="glorot_uniform")

        def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
            self._input_is_text = str(getattr(inputs, "dtype", "")) in ("string", "<dtype: 'string'>")
            return super().__call__(inputs, *args, **kwargs)

        def call(self, inputs: Any) -> Any:
            tf = synthetic.tf
            if self.text:
                buckets = tf.strings.to_hash_bucket_fast(tf.strings.split(tf.reshape(inputs, [-1])), 1000)
                return tf.reduce_mean(tf.gather(self.kernel, buckets), axis=1)
            values = tf.cast(inputs, tf.float32)
            if len(values.shape) > 2:
                values = tf.reduce_mean(values, axis=list(range(1, len(values.shape) - 1)))
            return tf.matmul(values, self.kernel)

        def compute_output_shape(self, input_shape: Any) -> Any:
            return (input_shape[0], self.width)

    module.KerasLayer = KerasLayer  # type: ignore[attr-defined]

    def load(handle: Any, *args: Any, **kwargs: Any) -> Any:
        raise OSError(f"tensorflow_hub is not installed and --synthetic-data downloads nothing: hub.load({handle!r}) "
                      "has no stand-in (hub.KerasLayer has one)")

    module.load = load  # type: ignore[attr-defined]
    return module


class _StandIns(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: gives a stand-in module only for an import that would otherwise fail."""

    def __init__(self, makers: dict[str, Callable[[], types.ModuleType]]) -> None:
        self.makers = makers

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname in self.makers:
            return importlib.machinery.ModuleSpec(fullname, self)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        return self.makers[spec.name]()

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class _PatchingLoader:
    """The real loader of an installed module, which patches the module once it has run."""

    def __init__(self, loader: Any, patch: Callable[[types.ModuleType], None]) -> None:
        self._loader = loader
        self._patch = patch

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        self._loader.exec_module(module)
        self._patch(module)


class _AfterImport(importlib.abc.MetaPathFinder):
    """First on sys.meta_path: an installed tensorflow_datasets or tensorflow_hub is patched as it is imported,
    before the script uses it, so that it downloads nothing."""

    def __init__(self, patchers: dict[str, Callable[[types.ModuleType], None]]) -> None:
        self.patchers = patchers
        self.busy: set[str] = set()

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in self.patchers or fullname in self.busy:
            return None
        self.busy.add(fullname)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self.busy.discard(fullname)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _PatchingLoader(spec.loader, self.patchers[fullname])  # type: ignore[assignment]
        return spec


def _patch_installed_tfds(synthetic: Synthetic, module: types.ModuleType) -> None:
    original = module.load

    def load(name: Any, *args: Any, **kwargs: Any) -> Any:
        if synthetic.mode != "always":
            try:
                return original(name, *args, **{**kwargs, "download": False})
            except Exception:  # noqa: BLE001 - not prepared in the data dir: tfds would download it
                pass
        return getattr(_fake_tfds(synthetic), "load")(name, *args, **kwargs)

    module.load = load  # type: ignore[attr-defined]


def _hub_cached(handle: Any) -> bool:
    import hashlib
    import tempfile

    text = _path_of(handle)
    if text is None or os.path.exists(text):
        return True
    cache = os.environ.get("TFHUB_CACHE_DIR") or os.path.join(tempfile.gettempdir(), "tfhub_modules")
    return os.path.isdir(os.path.join(cache, hashlib.sha1(text.encode()).hexdigest()))


def _patch_installed_hub(synthetic: Synthetic, module: types.ModuleType) -> None:
    original_layer, original_load = module.KerasLayer, module.load
    stand_in = _fake_hub(synthetic, "is not in the TF Hub cache and is not downloaded")

    def keras_layer(handle: Any, *args: Any, **kwargs: Any) -> Any:
        if synthetic.mode != "always" and _hub_cached(handle):
            return original_layer(handle, *args, **kwargs)
        return stand_in.KerasLayer(handle, *args, **kwargs)

    def load(handle: Any, *args: Any, **kwargs: Any) -> Any:
        if _hub_cached(handle):
            return original_load(handle, *args, **kwargs)
        raise OSError(f"hub.load({handle!r}): not in the TF Hub cache, and --synthetic-data downloads nothing "
                      "(hub.KerasLayer has a stand-in, hub.load has none)")

    module.KerasLayer = keras_layer  # type: ignore[attr-defined]
    module.load = load  # type: ignore[attr-defined]


def _add_stand_ins(synthetic: Synthetic) -> None:
    makers: dict[str, Callable[[], types.ModuleType]] = {}
    patchers: dict[str, Callable[[types.ModuleType], None]] = {}
    for name, maker, patcher in (("tensorflow_datasets", _fake_tfds, _patch_installed_tfds),
                                 ("tensorflow_hub", _fake_hub, _patch_installed_hub)):
        if name in sys.modules:
            patcher(synthetic, sys.modules[name])
        elif importlib.util.find_spec(name) is None:
            if synthetic.tf is None:
                continue  # the stand-ins are made of TensorFlow
            makers[name] = (lambda make: lambda: make(synthetic))(maker)
        else:
            patchers[name] = (lambda patch: lambda module: patch(synthetic, module))(patcher)
    for finder, first in ((_StandIns(makers), False), (_AfterImport(patchers), True)):
        if not (finder.makers if isinstance(finder, _StandIns) else finder.patchers):
            continue
        sys.meta_path.insert(0, finder) if first else sys.meta_path.append(finder)
        synthetic._undo.append((lambda f: lambda: sys.meta_path.remove(f) if f in sys.meta_path else None)(finder))


def _optional(name: str) -> Any:
    if importlib.util.find_spec(name.split(".")[0]) is None:
        return None
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a broken optional library is simply not patched
        return None


def install(mode: str, tf: Any = None, script: str | None = None) -> Synthetic:
    """Patch every source that is importable here; `tf` is the imported tensorflow (None: NumPy, pandas, PIL
    and OpenCV only, for tests without TensorFlow). `script`: the script to read the model's input shape from."""
    synthetic = Synthetic(mode)
    synthetic.tf = tf
    if script is not None:
        try:
            with open(script, encoding="utf-8", errors="replace") as handle:
                hint = input_shape_of(handle.read())
        except OSError:
            hint = None
        if hint is not None:
            synthetic.input_shape, synthetic.input_line = hint
    try:
        _patch_numpy(synthetic)
        pandas = _optional("pandas")
        if pandas is not None:
            _patch_pandas(synthetic, pandas)
        image_module = _optional("PIL.Image")
        if image_module is not None:
            _patch_pil(synthetic, image_module)
        cv2 = _optional("cv2")
        if cv2 is not None:
            _patch_cv2(synthetic, cv2)
        if tf is not None:
            _patch_keras(synthetic)
            _patch_tf(synthetic)
        _add_stand_ins(synthetic)
    except BaseException:
        synthetic.uninstall()
        raise
    return synthetic

