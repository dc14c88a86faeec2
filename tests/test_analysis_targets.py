"""What the targets are: `tapelint.analysis.labels` reads one-hot labels, integer class ids and continuous values,
with their number of classes and range, from the code that makes them; anything it cannot prove is UNKNOWN.

Each program marks the expression asked about with `probe(expr)`. Every source has a test that reads it and a
near miss the reader must not claim more about.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from tapelint.analysis.facts import Facts
from tapelint.analysis.labels import (
    _KERAS_ABOVE,
    _KERAS_CLASSES,
    Encoding,
    LabelInfo,
    fit_targets,
    label_reader,
    merge,
)

ONE_HOT, INTEGER, CONTINUOUS, UNKNOWN = Encoding.ONE_HOT, Encoding.INTEGER, Encoding.CONTINUOUS, Encoding.UNKNOWN


def _facts(source: str) -> Facts:
    return Facts(cst.parse_module(textwrap.dedent(source)))


def targets(source: str) -> LabelInfo:
    facts = _facts(source)
    (site,) = facts.calls_to("probe")
    return label_reader(facts).encoding(site.node.args[0].value, site.scope, site.order)


def _code(source: str, info: LabelInfo) -> str | None:
    return None if info.node is None else cst.Module([]).code_for_node(info.node)


TF = "import tensorflow as tf\nimport numpy as np\n"
SK = "import numpy as np\nfrom sklearn import datasets\nfrom sklearn.model_selection import train_test_split\n"
PD = "import numpy as np\nimport pandas as pd\nfrom sklearn.preprocessing import LabelEncoder\n"


# ----------------------------------------------------------------------------- one-hot encoders


def test_to_categorical_gives_one_hot_rows_as_wide_as_its_number_of_classes():
    info = targets(TF + """
NUM_CLASSES = 10
y = tf.keras.utils.to_categorical(labels, NUM_CLASSES)
probe(y)
""")
    assert (info.encoding, info.classes, info.within) == (ONE_HOT, 10, (0.0, 1.0))
    assert info.evidence == "`tf.keras.utils.to_categorical`"
    assert _code("", info) == "tf.keras.utils.to_categorical(labels, NUM_CLASSES)"


def test_to_categorical_with_num_classes_keyword_and_keras_ops_one_hot():
    assert targets(TF + "probe(tf.keras.utils.to_categorical(y, num_classes=3))").classes == 3
    info = targets("import keras\nprobe(keras.ops.one_hot(y, 7))")
    assert (info.encoding, info.classes) == (ONE_HOT, 7)


def test_tf_one_hot_depth_is_its_number_of_classes():
    info = targets(TF + "probe(tf.one_hot(y, depth=5))")
    assert (info.encoding, info.classes, info.within) == (ONE_HOT, 5, (0.0, 1.0))


def test_near_miss_a_width_not_known_leaves_the_classes_unknown():
    assert targets(TF + "probe(tf.keras.utils.to_categorical(y))").classes is None
    info = targets(TF + "def f(n):\n    probe(tf.one_hot(y, n))\n")
    assert (info.encoding, info.classes) == (ONE_HOT, None)


def test_near_miss_tf_one_hot_with_its_own_on_value_is_not_within_zero_and_one():
    info = targets(TF + "probe(tf.one_hot(y, 3, on_value=5.0))")
    assert (info.encoding, info.within) == (ONE_HOT, None)


def test_rows_of_an_identity_matrix_are_one_hot():
    info = targets(TF + "probe(np.eye(4)[y])")
    assert (info.encoding, info.classes) == (ONE_HOT, 4)
    near = targets(TF + "def f(n):\n    probe(np.eye(n)[y])\n")  # near miss: a width not known
    assert (near.encoding, near.classes) == (ONE_HOT, None)
    assert targets(TF + "probe(np.ones(4)[y])").encoding is UNKNOWN


# ----------------------------------------------------------------------------- keras.datasets


def _installed_keras_datasets() -> set[str]:
    spec = importlib.util.find_spec("keras")
    if spec is None or spec.origin is None:
        pytest.skip("keras is not installed")
    folder = Path(spec.origin).parent / "datasets"
    return {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}


def test_every_installed_keras_dataset_is_known():
    # Read from the files, without importing keras (nor calling `load_data`, which downloads).
    assert _installed_keras_datasets() == set(_KERAS_CLASSES) | set(_KERAS_ABOVE)


@pytest.mark.parametrize("name, classes", sorted(_KERAS_CLASSES.items()))
def test_keras_dataset_labels_are_class_ids(name: str, classes: int):
    for part in ("train", "test"):
        info = targets(TF + f"""
(x_train, y_train), (x_test, y_test) = tf.keras.datasets.{name}.load_data()
probe(y_{part})
""")
        assert (info.encoding, info.classes, info.within) == (INTEGER, classes, (0.0, classes - 1.0))
        assert info.evidence == f"`{name}.load_data()`"


def test_cifar100_coarse_labels_have_twenty_classes_and_an_unread_mode_none_known():
    src = "from keras.datasets import cifar100\n(x, y), _ = cifar100.load_data(label_mode={})\nprobe(y)"
    assert targets(src.format('"coarse"')).classes == 20
    assert targets(src.format('"fine"')).classes == 100
    info = targets(src.format("mode"))
    assert (info.encoding, info.classes) == (INTEGER, None)


def test_house_prices_are_continuous_and_some_exceed_a_known_value():
    info = targets(TF + "(x, y), _ = tf.keras.datasets.boston_housing.load_data()\nprobe(y)")
    assert (info.encoding, info.below, info.above, info.within) == (CONTINUOUS, None, 5.0, None)
    assert info.evidence == "`boston_housing.load_data()`"
    info = targets("import keras\n_, (x, y) = keras.datasets.california_housing.load_data(version='small')\nprobe(y)")
    assert (info.encoding, info.above) == (CONTINUOUS, 1.0)


def test_a_loader_result_can_be_indexed_before_it_is_unpacked():
    info = targets(TF + "x, y = tf.keras.datasets.mnist.load_data()[1]\nprobe(y)")
    assert (info.encoding, info.classes) == (INTEGER, 10)
    info = targets(TF + "data = tf.keras.datasets.reuters.load_data()\ntrain = data[0]\nprobe(train[1])")
    assert (info.encoding, info.classes) == (INTEGER, 46)
    assert targets(TF + "x, y = tf.keras.datasets.mnist.load_data()[i]\nprobe(y)").encoding is UNKNOWN


def test_image_loaders_give_uint8_pixels_and_their_features_are_no_labels():
    info = targets(TF + "(x, y), _ = tf.keras.datasets.mnist.load_data()\nprobe(x)")
    assert (info.encoding, info.within, info.above) == (CONTINUOUS, (0.0, 255.0), 1.0)
    # Near misses: the word ids of imdb and the house features are not known values.
    assert targets(TF + "(x, y), _ = tf.keras.datasets.imdb.load_data()\nprobe(x)").encoding is UNKNOWN
    assert targets(TF + "(x, y), _ = tf.keras.datasets.boston_housing.load_data()\nprobe(x)").encoding is UNKNOWN


# ----------------------------------------------------------------------------- sklearn.datasets


@pytest.mark.parametrize("call, classes", [
    ("datasets.make_classification(n_samples=100, n_classes=4, n_informative=4)", 4),
    ("datasets.make_classification(n_samples=100)", 2),
    ("datasets.make_blobs(n_samples=100, centers=5)", 5),
    ("datasets.make_blobs(n_samples=100)", 3),
    ("datasets.make_blobs(n_samples=100, centers=[[0, 0], [1, 1], [2, 2], [3, 3]])", 4),
    ("datasets.make_moons(n_samples=100, noise=0.1)", 2),
    ("datasets.make_circles(n_samples=100)", 2),
])
def test_sklearn_generators_give_class_ids(call: str, classes: int):
    info = targets(SK + f"X, y = {call}\nprobe(y)")
    assert (info.encoding, info.classes) == (INTEGER, classes)
    assert info.within == (0.0, classes - 1.0)


def test_near_miss_the_generated_features_and_an_unknown_count_are_not_claimed():
    assert targets(SK + "X, y = datasets.make_classification()\nprobe(X)").encoding is UNKNOWN
    info = targets(SK + "def f(k):\n    X, y = datasets.make_blobs(centers=k)\n    probe(y)\n")
    assert (info.encoding, info.classes) == (INTEGER, None)


def test_make_regression_targets_have_both_signs():
    info = targets(SK + "X, y = datasets.make_regression(n_samples=200, n_features=5)\nprobe(y)")
    assert (info.encoding, info.below, info.above) == (CONTINUOUS, -1.0, 1.0)


@pytest.mark.parametrize("args", ["n_samples=5", "bias=100.0", "n_informative=0", "n_samples=n"])
def test_near_miss_make_regression_with_few_samples_or_a_bias_proves_no_sign(args: str):
    info = targets(SK + f"def f(n):\n    X, y = datasets.make_regression({args})\n    probe(y)\n")
    assert (info.encoding, info.below, info.above) == (CONTINUOUS, None, None)


@pytest.mark.parametrize("loader, classes", [
    ("load_iris", 3), ("load_digits", 10), ("load_breast_cancer", 2), ("load_wine", 3)])
def test_sklearn_toy_loaders_give_class_ids_split_or_as_a_bunch(loader: str, classes: int):
    split = targets(SK + f"X, y = datasets.{loader}(return_X_y=True)\nprobe(y)")
    assert (split.encoding, split.classes) == (INTEGER, classes)
    bunch = targets(SK + f"data = datasets.{loader}()\ny = data.target\nprobe(y)")
    assert (bunch.encoding, bunch.classes) == (INTEGER, classes)
    keyed = targets(SK + f"data = datasets.{loader}()\nprobe(data['target'])")
    assert (keyed.encoding, keyed.classes) == (INTEGER, classes)


def test_sklearn_regression_loaders_are_continuous_above_one():
    for loader in ("load_diabetes", "fetch_california_housing"):
        info = targets(SK + f"X, y = datasets.{loader}(return_X_y=True)\nprobe(y)")
        assert (info.encoding, info.above, info.below) == (CONTINUOUS, 1.0, None)
    assert targets(SK + "probe(datasets.load_diabetes().target)").encoding is CONTINUOUS


def test_near_miss_a_bunchs_features_and_a_split_loader_read_as_a_bunch_are_unknown():
    assert targets(SK + "probe(datasets.load_iris().data)").encoding is UNKNOWN
    assert targets(SK + "data = datasets.load_iris(return_X_y=True)\nprobe(data.target)").encoding is UNKNOWN


def test_load_digits_with_fewer_classes():
    assert targets(SK + "X, y = datasets.load_digits(n_class=5, return_X_y=True)\nprobe(y)").classes == 5


# ----------------------------------------------------------------------------- train_test_split


def test_train_test_split_parts_carry_what_their_array_holds():
    src = SK + """
import tensorflow as tf
X, y = datasets.make_classification(n_classes=3, n_informative=3)
y = tf.keras.utils.to_categorical(y, 3)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2)
probe({})
"""
    for name in ("y_train", "y_test"):
        info = targets(src.format(name))
        assert (info.encoding, info.classes) == (ONE_HOT, 3)
    assert targets(src.format("X_train")).encoding is UNKNOWN  # near miss: the features


def test_train_test_split_of_three_arrays_and_of_a_starred_list():
    src = SK + "X, y = datasets.make_blobs(centers=4)\na, b, c, d, e, f = train_test_split(X, w, y)\nprobe({})"
    assert targets(src.format("f")).classes == 4
    assert targets(src.format("c")).encoding is UNKNOWN
    starred = SK + "X, y = datasets.make_blobs(centers=4)\na, b, c, d = train_test_split(*arrays)\nprobe(d)"
    assert targets(starred).encoding is UNKNOWN


# ----------------------------------------------------------------------------- argmax


def test_argmax_of_one_hot_labels_gives_ids_with_their_classes():
    info = targets(TF + "y = tf.keras.utils.to_categorical(labels, 10)\nprobe(np.argmax(y, axis=1))")
    assert (info.encoding, info.classes, info.within) == (INTEGER, 10, (0.0, 9.0))
    assert targets(TF + "y = tf.one_hot(labels, 4)\nprobe(tf.argmax(y, axis=-1))").classes == 4


def test_near_miss_argmax_without_an_axis_or_of_predictions_gives_ids_of_unknown_count():
    info = targets(TF + "y = tf.keras.utils.to_categorical(labels, 10)\nprobe(np.argmax(y))")
    assert (info.encoding, info.classes) == (INTEGER, None)
    info = targets(TF + "probe(np.argmax(model.predict(x), axis=1))")
    assert (info.encoding, info.classes) == (INTEGER, None)


# ----------------------------------------------------------------------------- scaling


SCALE = TF + "from sklearn.preprocessing import MinMaxScaler, StandardScaler\n"


def test_min_max_scaled_targets_lie_in_the_feature_range():
    info = targets(SCALE + "probe(MinMaxScaler().fit_transform(y))")
    assert (info.encoding, info.within) == (CONTINUOUS, (0.0, 1.0))
    assert info.evidence == "`MinMaxScaler.fit_transform`"
    info = targets(SCALE + "scaler = MinMaxScaler(feature_range=(-1, 1))\ny = scaler.fit_transform(y)\nprobe(y)")
    assert info.within == (-1.0, 1.0)


def test_transform_after_fit_on_the_same_data_is_in_range_and_on_other_data_is_not():
    fitted = SCALE + "scaler = MinMaxScaler()\nscaler.fit(y_train)\nprobe(scaler.transform({}))"
    assert targets(fitted.format("y_train")).within == (0.0, 1.0)
    near = targets(fitted.format("y_test"))  # near miss: test data may fall outside the training range
    assert (near.encoding, near.within) == (CONTINUOUS, None)
    refitted = SCALE + "scaler = MinMaxScaler()\nscaler.fit(y_train)\ny_train = y_train * 2\nprobe(scaler.transform(y_train))"
    assert targets(refitted).within is None
    clipped = SCALE + "scaler = MinMaxScaler(clip=True)\nscaler.fit(y_train)\nprobe(scaler.transform(y_test))"
    assert targets(clipped).within == (0.0, 1.0)


def test_standard_scaled_targets_have_both_signs():
    info = targets(SCALE + "scaler = StandardScaler()\ny = scaler.fit_transform(y.reshape(-1, 1))\nprobe(y)")
    assert (info.encoding, info.below, info.above, info.within) == (CONTINUOUS, 0.0, 0.0, None)
    near = targets(SCALE + "probe(StandardScaler(with_mean=False).fit_transform(y))")
    assert (near.encoding, near.below, near.above) == (CONTINUOUS, None, None)


def test_near_miss_a_scaler_the_value_model_cannot_name_is_unknown():
    src = SCALE + "def f(scaler):\n    probe(scaler.fit_transform(y))\n"
    assert targets(src).encoding is UNKNOWN


def test_pixels_divided_by_255_lie_in_zero_and_one():
    src = TF + "(x_train, _), _ = tf.keras.datasets.cifar10.load_data()\nx = x_train.astype('float32') / {}\nprobe(x)"
    for divisor in ("255.", "255.0", "255"):
        info = targets(src.format(divisor))
        assert (info.encoding, info.within) == (CONTINUOUS, (0.0, 1.0))


def test_division_by_the_own_maximum_needs_non_negative_values():
    src = TF + "(x_train, _), _ = tf.keras.datasets.mnist.load_data()\nprobe(x_train / x_train.max())"
    assert targets(src).within == (0.0, 1.0)
    assert targets(TF + "(x, _), _ = tf.keras.datasets.mnist.load_data()\nprobe(x / np.max(x))").within == (0.0, 1.0)
    # Near misses: prices and regression targets are not proved non-negative.
    boston = TF + "(x, y), _ = tf.keras.datasets.boston_housing.load_data()\nprobe(y / y.max())"
    assert targets(boston).encoding is UNKNOWN
    assert targets(SK + "X, y = datasets.make_regression()\nprobe(y / y.max())").encoding is UNKNOWN


def test_near_miss_division_of_unknown_values_and_other_arithmetic_are_unknown():
    assert targets(TF + "probe(y / 255.0)").encoding is UNKNOWN
    mnist = TF + "(x, y), _ = tf.keras.datasets.mnist.load_data()\nprobe({})"
    for expr in ("y + 1", "y * 2", "y - y.mean()", "y / -2.0", "y / z"):
        assert targets(mnist.format(expr)).encoding is UNKNOWN, expr


# ----------------------------------------------------------------------------- pandas


def test_get_dummies_of_a_column_is_one_hot_and_values_keep_it():
    info = targets(PD + "df = pd.read_csv('data.csv')\nprobe(pd.get_dummies(df['species']).values)")
    assert (info.encoding, info.classes) == (ONE_HOT, None)
    info = targets(PD + "df = pd.read_csv('data.csv')\ny = df.pop('label')\nprobe(pd.get_dummies(y).to_numpy())")
    assert info.encoding is ONE_HOT


def test_near_miss_get_dummies_of_a_frame_passes_its_number_columns_through():
    assert targets(PD + "df = pd.read_csv('data.csv')\nprobe(pd.get_dummies(df))").encoding is UNKNOWN
    assert targets(PD + "df = pd.read_csv('d.csv')\nprobe(pd.get_dummies(df[['a']]))").encoding is UNKNOWN
    assert targets(PD + "probe(pd.get_dummies(df, columns=['a']))").encoding is UNKNOWN


def test_label_encoder_and_category_codes_give_class_ids():
    assert targets(PD + "probe(LabelEncoder().fit_transform(df['species']))").encoding is INTEGER
    info = targets(PD + "encoder = LabelEncoder()\nencoder.fit(names)\ny = encoder.transform(names)\nprobe(y)")
    assert (info.encoding, info.evidence) == (INTEGER, "`LabelEncoder.transform`")
    assert targets(PD + "probe(df['species'].astype('category').cat.codes)").encoding is INTEGER
    assert targets(PD + "s = df['c'].astype('category')\nprobe(s.cat.codes.values)").encoding is INTEGER


def test_factorize_codes_are_class_ids_and_its_uniques_are_not():
    src = PD + "codes, uniques = pd.factorize(df['species'])\nprobe({})"
    assert targets(src.format("codes")).encoding is INTEGER
    assert targets(src.format("uniques")).encoding is UNKNOWN


def test_near_miss_a_column_of_a_frame_is_unknown():
    for expr in ("df['label'].values", "df['label'].to_numpy()", "df.label.values", "self.cat.codes"):
        assert targets(PD + "df = pd.read_csv('d.csv')\nprobe({})".format(expr)).encoding is UNKNOWN, expr


# ----------------------------------------------------------------------------- pass-through steps


@pytest.mark.parametrize("step", [
    "np.array(y)", "tf.constant(y)", "tf.convert_to_tensor(y)", "y.reshape(-1, 1)", "np.reshape(y, (-1,))",
    "y.astype('float32')", "tf.cast(y, tf.float32)", "y[:1000]", "y[idx]", "y.flatten()",
])
def test_steps_that_keep_values_keep_classes_and_ranges(step: str):
    info = targets(TF + f"(x, y), _ = tf.keras.datasets.cifar10.load_data()\nprobe({step})")
    assert (info.encoding, info.classes, info.within) == (INTEGER, 10, (0.0, 9.0)), step
    info = targets(TF + f"(x, y), _ = tf.keras.datasets.boston_housing.load_data()\nprobe({step})")
    assert (info.encoding, info.above) == (CONTINUOUS, 5.0), step


def test_near_miss_casting_continuous_values_to_integers_or_selecting_a_one_hot_column():
    prices = TF + "(x, y), _ = tf.keras.datasets.boston_housing.load_data()\nprobe({})"
    assert targets(prices.format("y.astype('int32')")).encoding is UNKNOWN
    assert targets(prices.format("tf.cast(y, tf.int64)")).encoding is UNKNOWN
    one_hot = TF + "y = tf.one_hot(labels, 3)\nprobe({})"
    assert targets(one_hot.format("y[:, 0]")).encoding is UNKNOWN
    assert targets(one_hot.format("y[:10, :]")).encoding is ONE_HOT
    assert targets(TF + "(x, y), _ = tf.keras.datasets.mnist.load_data()\nprobe(y.astype(bool))").encoding is UNKNOWN


def test_integer_literals_and_random_ids():
    assert targets(TF + "probe(tf.constant([3, 0, 7]))").encoding is INTEGER
    info = targets(TF + "probe(np.random.randint(0, 5, size=(100,)))")
    assert (info.encoding, info.classes, info.within) == (INTEGER, 5, (0.0, 4.0))
    info = targets(TF + "probe(np.random.randint(2, 6, 100))")
    assert (info.encoding, info.classes, info.within) == (INTEGER, None, (2.0, 5.0))


# ----------------------------------------------------------------------------- names, parameters, merging


def test_two_reaching_assignments_merge_when_they_agree():
    src = TF + """
if big:
    y = tf.keras.utils.to_categorical(labels, {})
else:
    y = tf.keras.utils.to_categorical(labels, 10)
probe(y)
"""
    info = targets(src.format(10))
    assert (info.encoding, info.classes) == (ONE_HOT, 10)
    info = targets(src.format(5))
    assert (info.encoding, info.classes) == (ONE_HOT, None)


def test_near_miss_two_reaching_assignments_that_disagree_are_unknown():
    src = TF + """
y = tf.keras.utils.to_categorical(labels, 10)
if sparse:
    y = np.argmax(y, axis=1)
probe(y)
"""
    assert targets(src).encoding is UNKNOWN


def test_parameters_read_every_call_site():
    src = SK + """
def train(y):
    probe(y)
X, a = datasets.make_blobs(centers=3)
X, b = datasets.make_blobs(centers={})
train(a)
train(b)
"""
    info = targets(src.format(3))
    assert (info.encoding, info.classes) == (INTEGER, 3)
    assert targets(src.format(4)).classes is None
    assert targets(src.format("k")).classes is None


def test_merge_keeps_what_both_paths_prove():
    a = LabelInfo(CONTINUOUS, below=-1.0, above=2.0, within=(-3.0, 3.0))
    b = LabelInfo(CONTINUOUS, below=-2.0, above=1.0, within=(-1.0, 5.0))
    assert merge(a, b) == LabelInfo(CONTINUOUS, below=-1.0, above=1.0, within=(-3.0, 5.0))
    assert merge(a, LabelInfo(CONTINUOUS)).below is None
    assert merge(a, LabelInfo(INTEGER)).encoding is UNKNOWN


def test_a_dataset_loop_keeps_the_classes():
    info = targets(TF + """
(x, y), _ = tf.keras.datasets.mnist.load_data()
ds = tf.data.Dataset.from_tensor_slices((x, tf.one_hot(y, 10))).shuffle(100).batch(32)
for images, labels in ds:
    probe(labels)
""")
    assert (info.encoding, info.classes) == (ONE_HOT, 10)


# ----------------------------------------------------------------------------- fit_targets


def _fit_targets(source: str) -> LabelInfo:
    facts = _facts(source)
    (fit,) = [site for site in facts.calls if site.method == "fit"]
    return fit_targets(facts, fit)


def test_fit_targets_reads_y_by_position_or_keyword():
    src = SK + "X, y = datasets.make_classification(n_classes=3, n_informative=3)\nmodel.fit({})"
    for args in ("X, y", "X, y=y", "x=X, y=y"):
        info = _fit_targets(src.format(args))
        assert (info.encoding, info.classes) == (INTEGER, 3), args


def test_fit_targets_reads_element_one_of_a_dataset_or_a_generator():
    info = _fit_targets(TF + """
(x, y), _ = tf.keras.datasets.mnist.load_data()
ds = tf.data.Dataset.from_tensor_slices((x / 255.0, tf.keras.utils.to_categorical(y, 10))).batch(32)
model.fit(ds, epochs=3)
""")
    assert (info.encoding, info.classes) == (ONE_HOT, 10)
    info = _fit_targets("from keras.preprocessing.image import ImageDataGenerator\n"
                        "gen = ImageDataGenerator().flow_from_directory('data', class_mode='sparse')\nmodel.fit(gen)")
    assert info.encoding is INTEGER


def test_near_miss_fit_targets_of_an_unknown_dataset_or_no_arguments_is_unknown():
    assert _fit_targets("def f(ds):\n    model.fit(ds)\n").encoding is UNKNOWN
    assert _fit_targets("model.fit()").encoding is UNKNOWN
