"""Light import and alias resolution: local names -> canonical qualified names.

libcst's QualifiedNameProvider runs a full scope analysis (ten times the cost of parsing). Rules only
need to know which names come from tensorflow/keras, so one cheap pass over the import statements is
enough. Every spelling of Keras (`tf.keras`, `keras`, `tf_keras`, `tensorflow.python.keras`) resolves
to the canonical prefix `keras.`; `tf.optimizers`, `tf.losses` and `tf.metrics` are Keras too.
"""

from __future__ import annotations

import libcst as cst

# Longest prefixes first; applied once to a fully expanded dotted name.
_CANONICAL_PREFIXES: tuple[tuple[str, str], ...] = (
    ("tensorflow.python.keras.", "keras."),
    ("tensorflow.compat.v2.keras.", "keras."),
    # On TF >= 2.16 `tf.compat.v1.keras` is Keras 3 too (checked on TF 2.21).
    ("tensorflow.compat.v1.keras.", "keras."),
    # The activation and math ops are the same functions under tf.compat.v1.
    ("tensorflow.compat.v1.nn.", "tensorflow.nn."),
    ("tensorflow.compat.v1.math.", "tensorflow.math."),
    ("tensorflow.keras.", "keras."),
    ("tensorflow.compat.v2.", "tensorflow."),
    ("tensorflow.optimizers.", "keras.optimizers."),
    ("tensorflow.losses.", "keras.losses."),
    ("tensorflow.metrics.", "keras.metrics."),
    ("tensorflow.initializers.", "keras.initializers."),
    ("tf_keras.", "keras."),
    ("keras.api._v2.keras.", "keras."),
    ("keras.src.", "keras."),
)

_ROOT_ALIASES = {
    "tensorflow.keras": "keras",
    "tensorflow.python.keras": "keras",
    "tensorflow.compat.v1.keras": "keras",
    "tensorflow.compat.v2.keras": "keras",
    "tf_keras": "keras",
    "tensorflow.optimizers": "keras.optimizers",
    "tensorflow.losses": "keras.losses",
    "tensorflow.metrics": "keras.metrics",
}

TF_ROOTS = ("tensorflow", "keras", "tf_keras")


def canonical(qualified: str) -> str:
    if qualified in _ROOT_ALIASES:
        return _ROOT_ALIASES[qualified]
    for prefix, replacement in _CANONICAL_PREFIXES:
        if qualified.startswith(prefix):
            return replacement + qualified[len(prefix):]
    return qualified


def dotted(node: cst.BaseExpression | cst.BaseAssignTargetExpression | None) -> str | None:
    """`a.b.c` for Name/Attribute chains, else None."""
    # Exact type tests: libcst's node classes are ABCs, and a failed `isinstance` against one goes through
    # ABCMeta (this runs for every attribute and call of a file, many times over).
    if type(node) is cst.Name:
        return node.value
    parts: list[str] = []
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is cst.Name:
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def _module_name(node: cst.BaseExpression) -> str:
    name = dotted(node)
    return name or ""


class ImportMap:
    """Maps local names bound by imports to their canonical qualified names."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        # Local name -> the module path as imported, before `canonical` merges the Keras spellings:
        # which package (Keras 3, tf_keras, tensorflow_hub) an object comes from (rules/_tl503_keras_packages.py).
        self.origins: dict[str, str] = {}
        self.uses_tf_keras = False
        self.imports_tensorflow = False
        self.imports_keras = False

    def add_import(self, node: cst.Import) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            full = _module_name(alias.name)
            self._note(full)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.aliases[alias.asname.name.value] = canonical(full)
                self.origins[alias.asname.name.value] = full
            else:
                root = full.split(".")[0]
                # `import tensorflow.keras` binds `tensorflow`; attribute access expands later.
                self.aliases.setdefault(root, root)
                self.origins.setdefault(root, root)

    def add_import_from(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None:
            return
        module = _module_name(node.module)
        self._note(module)
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = _module_name(alias.name)
            full = f"{module}.{name}"
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.aliases[local] = canonical(full)
            self.origins[local] = full

    def _note(self, module: str) -> None:
        root = module.split(".")[0]
        if root == "tf_keras":
            self.uses_tf_keras = True
        if root == "tensorflow":
            self.imports_tensorflow = True
        if root in ("keras", "tf_keras") or module.startswith("tensorflow.keras"):
            self.imports_keras = True

    @property
    def imports_tf_or_keras(self) -> bool:
        return self.imports_tensorflow or self.imports_keras

    def resolve(self, node: cst.BaseExpression | None) -> str | None:
        """Canonical qualified name of a Name/Attribute chain rooted in an import, else None."""
        name = dotted(node)
        if name is None:
            return None
        return self.resolve_dotted(name)

    def resolve_dotted(self, name: str) -> str | None:
        """`resolve` for a chain already spelled out (`dotted(node)`)."""
        expanded = self.expand_dotted(name)
        return canonical(expanded) if expanded is not None else None

    def expand_dotted(self, name: str) -> str | None:
        """The chain with its head replaced by what the import names, before the canonical spelling (which
        only rewrites a prefix into another, `tensorflow.keras.` into `keras.`); None when the head is no
        import."""
        head, _, rest = name.partition(".")
        base = self.aliases.get(head)
        if base is None:
            return None
        return f"{base}.{rest}" if rest else base


def origin(imports: ImportMap, node: cst.BaseExpression | None) -> str | None:
    """The dotted name of a Name/Attribute chain rooted in an import, spelled as imported (no
    canonical merging: `tf_keras.layers.Dense` stays `tf_keras...`, `tf.keras.X` is `tensorflow.keras.X`)."""
    name = dotted(node)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    base = imports.origins.get(head)
    if base is None:
        return None
    return f"{base}.{rest}" if rest else base


def is_tf_name(qualified: str | None) -> bool:
    return qualified is not None and qualified.split(".")[0] in TF_ROOTS
