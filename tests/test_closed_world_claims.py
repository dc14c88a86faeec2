"""Claims of absence hold only in a closed world. "This optimizer is never applied" (TL001, TL002) is said
only of an object no unseen code can reach: a module-level optimizer that another module of the project
imports, an attribute of a class another module imports (to subclass it or make one), or an object handed
to code that stores it where tapelint cannot follow (`self.__dict__.update(kwargs)`, `setattr`) is left
alone. An optimizer replaced before anything reads it (`opt = SGD()` then `opt = Adam()`) is of no
consequence, and a leftover nothing reads is dead code, harmless while every network has its own optimizer.

These are the false alarms of TL001/TL002 on real projects tapelint had never seen (optimizers made in a
`config.py` and applied by the training script importing them; `class PPO(VPG)` applying the base class's
optimizer in another module; PPO agents keeping unused `actor_opt`/`critic_opt` while actor and critic
apply their own), each in several spellings, with the buggy twins that must still be found."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tapelint.cache import Cache
from tapelint.config import Config, parse
from tapelint.engine import lint_source
from tapelint.runner import lint_paths

CONFIG = Config(select=("TL001", "TL002"), preview=True)

CONFIG_MODULE = """
    import tensorflow as tf

    generator = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(2)])
    discriminator = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(1)])
    gen_opt = tf.keras.optimizers.Adam(1e-4, beta_1=0.5)
    disc_opt = tf.keras.optimizers.Adam(4e-4, beta_1=0.5)
    bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)


    def gradients(noise, real):
        with tf.GradientTape(persistent=True) as tape:
            fake = generator(noise, training=True)
            fake_logits = discriminator(fake, training=True)
            real_logits = discriminator(real, training=True)
            g_loss = bce(tf.ones_like(fake_logits), fake_logits)
            d_loss = bce(tf.ones_like(real_logits), real_logits) + bce(tf.zeros_like(fake_logits), fake_logits)
        g_grads = tape.gradient(g_loss, generator.trainable_variables)
        d_grads = tape.gradient(d_loss, discriminator.trainable_variables)
        return g_grads, d_grads
"""

TRAIN_BODY = """
for epoch in range(10):
    for real in dataset:
        noise = tf.random.normal((64, 16))
        g_grads, d_grads = gradients(noise, real)
        {gen}.apply_gradients(zip(g_grads, generator.trainable_variables))
        {disc}.apply_gradients(zip(d_grads, discriminator.trainable_variables))
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def findings(root: Path, config: Config = CONFIG) -> list[tuple[str, int, str]]:
    result = lint_paths([root], config, jobs=1)
    assert not result.errors, result.errors
    return [(Path(d.path).name, d.line, d.code) for d in result.diagnostics]


def package(tmp_path: Path, train: str) -> Path:
    write(tmp_path, {"gan/__init__.py": "", "gan/config.py": CONFIG_MODULE, "gan/train.py": train})
    return tmp_path


def test_optimizers_imported_by_name_from_a_config_module_are_not_reported(tmp_path):
    train = "import tensorflow as tf\nfrom gan.config import gen_opt, disc_opt, gradients, generator, discriminator\n"
    assert findings(package(tmp_path, train + TRAIN_BODY.format(gen="gen_opt", disc="disc_opt"))) == []


def test_optimizers_of_a_config_module_imported_whole_are_not_reported(tmp_path):
    train = ("import tensorflow as tf\nimport gan.config as cfg\nfrom gan.config import gradients, generator, "
             "discriminator\n")
    assert findings(package(tmp_path, train + TRAIN_BODY.format(gen="cfg.gen_opt", disc="cfg.disc_opt"))) == []


def test_optimizers_of_a_config_module_imported_relatively_are_not_reported(tmp_path):
    train = "import tensorflow as tf\nfrom . import config\nfrom .config import gradients, generator, discriminator\n"
    assert findings(package(tmp_path, train + TRAIN_BODY.format(gen="config.gen_opt", disc="config.disc_opt"))) == []


def test_a_config_module_whose_optimizers_no_module_imports_is_reported(tmp_path):
    """The buggy twin: the script imports the networks and the gradients, never the optimizers, and applies
    nothing, so the optimizers of config.py are never applied anywhere in the project."""
    train = "import tensorflow as tf\nfrom gan.config import gradients, generator, discriminator\n" + """
for real in dataset:
    g_grads, d_grads = gradients(tf.random.normal((64, 16)), real)
"""
    found = findings(package(tmp_path, train))
    assert [(name, line, code) for name, line, code in found] == [("config.py", 6, "TL001"), ("config.py", 7, "TL001")]
    messages = [d.message for d in lint_paths([tmp_path], CONFIG, jobs=1).diagnostics]
    assert all("none imports it" in m for m in messages), messages


BASE = """
    import tensorflow as tf


    class VPG:
        def __init__(self, obs_dim, n_actions, lr=3e-4):
            self.policy = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="tanh"),
                                               tf.keras.layers.Dense(n_actions)])
            self.optimizer = tf.keras.optimizers.Adam(lr)

        def policy_gradients(self, obs, actions, advantages):
            with tf.GradientTape() as tape:
                logits = self.policy(obs)
                logp = -tf.nn.sparse_softmax_cross_entropy_with_logits(labels=actions, logits=logits)
                loss = -tf.reduce_mean(logp * advantages)
            return tape.gradient(loss, self.policy.trainable_variables)
"""

PPO = """
    import tensorflow as tf
    from {module} import VPG


    class PPO(VPG):
        def update(self, obs, actions, advantages):
            grads = self.policy_gradients(obs, actions, advantages)
            grads, _ = tf.clip_by_global_norm(grads, 0.5)
            self.optimizer.apply_gradients(zip(grads, self.policy.trainable_variables))
"""


def test_an_optimizer_of_a_base_class_applied_by_a_subclass_in_another_module_is_not_reported(tmp_path):
    write(tmp_path, {"vpg.py": BASE, "ppo.py": PPO.format(module="vpg")})
    assert findings(tmp_path) == []


def test_the_base_class_in_a_package_subclassed_through_a_relative_import_is_not_reported(tmp_path):
    write(tmp_path, {"algos/__init__.py": "", "algos/vpg.py": BASE, "algos/ppo.py": PPO.format(module=".vpg")})
    assert findings(tmp_path) == []


def test_the_same_base_class_that_no_module_uses_is_reported(tmp_path):
    """The twin: nothing subclasses or imports VPG, and nothing in the project applies its optimizer."""
    write(tmp_path, {"vpg.py": BASE, "ppo.py": PPO.format(module="vpg").replace("from vpg import VPG", "VPG = object")})
    assert findings(tmp_path) == [("vpg.py", 9, "TL001")]


def lint(source: str) -> list[tuple[str, int]]:
    config = parse({"select": ["TL001", "TL002"], "preview": True}, "test", None)
    return [(d.code, d.line) for d in lint_source(textwrap.dedent(source), "agent.py", config)]


AGENT = """
    import numpy as np
    import tensorflow as tf


    class Actor:
        def __init__(self, state_dim, action_dim, lr):
            self.model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"),
                                              tf.keras.layers.Dense(action_dim, activation="tanh")])
            self.opt = tf.keras.optimizers.Adam(lr)

        def train(self, states, advantages):
            with tf.GradientTape() as tape:
                loss = -tf.reduce_mean(self.model(states) * advantages)
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.opt.apply_gradients(zip(grads, self.model.trainable_variables))


    class Critic:
        def __init__(self, state_dim, lr):
            self.model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)])
            self.opt = tf.keras.optimizers.Adam(lr)

        def train(self, states, returns):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(returns - self.model(states)))
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.opt.apply_gradients(zip(grads, self.model.trainable_variables))


    class Agent:
        def __init__(self, state_dim=3, action_dim=1):
            self.actor_opt = tf.keras.optimizers.Adam(3e-4)
            self.critic_opt = tf.keras.optimizers.Adam(1e-3)
            self.actor = Actor(state_dim, action_dim, 3e-4)
            self.critic = Critic(state_dim, 1e-3)

        def train(self, states, returns):
            advantages = returns - self.critic.model(states)
            self.actor.train(states, advantages)
            self.critic.train(states, returns)


    agent = Agent()
    for episode in range(100):
        states = np.random.rand(32, 3).astype("float32")
        agent.train(states, np.random.rand(32, 1).astype("float32"))
"""


def test_unused_leftover_optimizers_beside_networks_that_each_apply_their_own_are_not_reported():
    """marload/DeepRL-TensorFlow2 PPO_Continuous: the agent's two optimizers are dead code, harmless."""
    assert lint(AGENT) == []


def test_optimizer_handed_over_through_kwargs_or_setattr_is_not_reported():
    kwargs = """
    import tensorflow as tf

    class Agent:
        def __init__(self, **kwargs):
            self.gamma = 0.99
            self.__dict__.update(kwargs)
            self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])

        def train(self, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))

    agent = Agent(optimizer=tf.keras.optimizers.Adam(1e-3))
    for x, y in batches:
        agent.train(x, y)
    """
    assert lint(kwargs) == []
    settings = kwargs.replace("def __init__(self, **kwargs):", "def __init__(self, settings):").replace(
        "self.__dict__.update(kwargs)", "for key, value in settings.items():\n                setattr(self, key, value)"
    ).replace("Agent(optimizer=tf.keras.optimizers.Adam(1e-3))", 'Agent({"optimizer": tf.keras.optimizers.Adam(1e-3)})')
    assert lint(settings) == []


def test_an_optimizer_replaced_before_anything_reads_it_is_not_reported():
    """PacktPublishing's SparseAutoEncoder notebook: `opt = SGD(...)`, then `opt = Adam(1e-2)` before
    `train_loop(model, opt, ...)`; also when the name is only read inside the function it is passed to."""
    assert lint("""
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(784)])
    opt = tf.keras.optimizers.SGD(learning_rate=0.01)
    # on second thought
    opt = tf.keras.optimizers.Adam(learning_rate=1e-2)

    def train_loop(model, opt, dataset, epochs=10):
        for epoch in range(epochs):
            for x in dataset:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - x))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))

    train_loop(model, opt, batches)
    """) == []


def test_a_second_optimizer_never_applied_while_the_first_steps_both_networks_is_reported():
    """The buggy twin of the leftovers: a GAN whose generator optimizer steps both networks while the
    discriminator's sits unused (TL002, info), the shape in which an update is lost."""
    assert lint("""
    import tensorflow as tf

    generator = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(2)])
    discriminator = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(1)])
    gen_opt = tf.keras.optimizers.Adam(1e-4)
    disc_opt = tf.keras.optimizers.Adam(4e-4)

    for real in dataset:
        with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
            fake = generator(tf.random.normal((64, 16)), training=True)
            g_loss = -tf.reduce_mean(discriminator(fake, training=True))
            d_loss = tf.reduce_mean(discriminator(fake, training=True)) - tf.reduce_mean(discriminator(real, training=True))
        gen_opt.apply_gradients(zip(g_tape.gradient(g_loss, generator.trainable_variables), generator.trainable_variables))
        gen_opt.apply_gradients(zip(d_tape.gradient(d_loss, discriminator.trainable_variables), discriminator.trainable_variables))
    """) == [("TL002", 7)]


def test_a_cached_claim_of_absence_is_not_answered_once_another_module_imports_the_object(tmp_path):
    """The cache keys a file by its own text; a claim that rests on what other modules import holds only
    while that stays the same."""
    train = "import tensorflow as tf\nfrom gan.config import gradients, generator, discriminator\n" + """
for real in dataset:
    g_grads, d_grads = gradients(tf.random.normal((64, 16)), real)
"""
    package(tmp_path, train)
    (tmp_path / "pyproject.toml").write_text("[tool.tapelint]\npreview = true\nselect = [\"TL001\"]\n")
    from tapelint.config import load

    config = load(tmp_path / "pyproject.toml")
    first = lint_paths([tmp_path], config, jobs=1, cache=Cache.for_config(config))
    assert [d.code for d in first.diagnostics] == ["TL001", "TL001"]
    again = lint_paths([tmp_path], config, jobs=1, cache=Cache.for_config(config))
    # nothing changed: answered from the cache (the empty `__init__.py` needs no entry)
    assert again.cached == 2 and len(again.diagnostics) == 2
    (tmp_path / "gan" / "apply.py").write_text("from gan.config import gen_opt, disc_opt\n")
    after = lint_paths([tmp_path], config, jobs=1, cache=Cache.for_config(config))
    assert after.diagnostics == []


TRAIN_LIB = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_loss = tf.keras.metrics.Mean(name="train_loss")


    def run(dataset, epochs, on_epoch_end):
        for epoch in range(epochs):
            for x, y in dataset:
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                train_loss.update_state(loss)
            print(epoch, float(train_loss.result()))
            on_epoch_end(epoch)
"""


def test_a_metric_that_another_module_imports_and_resets_is_not_reported(tmp_path):
    write(tmp_path, {"train_lib.py": TRAIN_LIB, "callbacks.py": """
        from train_lib import train_loss

        def on_epoch_end(epoch):
            train_loss.reset_state()
    """})
    config = Config(select=("TL601",), preview=True)
    assert findings(tmp_path, config) == []
    (tmp_path / "callbacks.py").write_text("def on_epoch_end(epoch):\n    print('epoch', epoch)\n")
    assert findings(tmp_path, config) == [("train_lib.py", 17, "TL601")]


ACCUMULATE = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.01)
    accum = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]

    for step, (x, y) in enumerate(batches):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        for a, g in zip(accum, grads):
            a.assign_add(g / 4)
        if (step + 1) % 4 == 0:
            optimizer.apply_gradients(zip(accum, model.trainable_variables))
"""


def test_an_accumulator_another_module_imports_and_zeroes_is_not_reported(tmp_path):
    write(tmp_path, {"accumulate.py": ACCUMULATE, "hooks.py": """
        import tensorflow as tf
        from accumulate import accum

        def zero():
            for a in accum:
                a.assign(tf.zeros_like(a))
    """})
    config = Config(select=("TL011",), preview=True)
    assert findings(tmp_path, config) == []
    (tmp_path / "hooks.py").write_text("def zero():\n    pass\n")
    assert findings(tmp_path, config) == [("accumulate.py", 15, "TL011")]


def test_what_other_modules_import_is_read_from_their_import_statements(tmp_path, monkeypatch):
    """The reverse index itself: names, whole-module imports, relative imports, broken files and the bound."""
    from tapelint import project

    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/config.py": "import tensorflow as tf\nopt = tf.keras.optimizers.Adam()\n",
        "pkg/train.py": "import os; from pkg.config import (opt,  # the optimizer\n    model as m)\n",
        "pkg/broken.py": "from pkg.config import (\n",  # does not parse: ignored, not an error
        "tools/report.py": "print('config is not imported here')\n",
    })
    config = str(tmp_path / "pkg" / "config.py")
    assert project.imported_names(config) == {"opt", "model"}
    (tmp_path / "pkg" / "eval.py").write_text("from . import config\n")
    assert project.imported_names(config) == {"opt", "model"}  # read once per run: not seen yet
    project.forget_import_tables()
    assert project.imported_names(config) == {"*"}
    assert project.imported_names(str(tmp_path / "pkg" / "train.py")) == set()
    assert project.imported_names(str(tmp_path / "notebook.ipynb")) == set()
    assert project.imported_names("<stdin>") == set()
    monkeypatch.setattr(project, "MAX_IMPORTER_FILES", 3)
    project.forget_import_tables()
    assert project.imported_names(str(tmp_path / "pkg" / "train.py")) is None  # too large to read: unknown
