"""What a value is for: does it reach the training update, or only a metric, a log, a plot, a file, or nothing?

Rules that claim an effect on training ("the gradient is zero", "each step trains on the first batch") must
show that the value they judge takes part in training. `reach(facts, node, scope, order)` follows a value
*forward* from the expression `node`, the mirror image of `dataflow.gradient_flow`, which follows a loss
backwards:

- up through the expressions that contain it (arithmetic, a function or class of an imported library other
  than the sinks below, a model or loss called on it, subscripts, containers, string formatting): what they
  give back is made from it;
- into the names it is bound to (assignments, unpacking, `for` targets, comprehension targets,
  `xs.append(value)`, `d[k] = value`, `self.attr = value`), and on to every read that may see that binding
  (the value model's `reaching`; for `self.attr`, the reads in the methods of the same class);
- into the functions and methods of the module it is passed to (parameter by parameter, also nested
  `def`s, `tf.function(fn)` and `strategy.run(fn, args=(...))`), and back out of them through `return` to the call it came from, or to
  every call of the function when the walk started inside it.

Each path ends in one of these purposes:

- TRAINING: the target (first argument) of `tape.gradient`/`jacobian`, an argument of an optimizer's
  `apply_gradients`/`apply`/`minimize`, a model's `fit`/`train_on_batch`, `compile(loss=...)`, `add_loss`;
- METRIC: a Keras metric's `update_state` or call, a model's `evaluate`/`test_on_batch`,
  `compile(metrics=...)`, `add_metric`, `sklearn.metrics`;
- LOGGING: `print`, `tf.print`, `tf.summary`, `logging`, plotting and image libraries (matplotlib, PIL, ...),
  experiment trackers (wandb, mlflow, ...), writing files (`np.save`, `pickle.dump`, ...), and the logs a
  Keras `train_step`/`test_step` returns;
- NOTHING: it is never read (a bare expression statement, a name nobody reads, `tape.watch`, an `assert`);
- RETURNED: it is the result of a function that nothing in this file calls or names (its callers, if any,
  are in other files);
- UNKNOWN: it goes where the walk cannot follow (a method of an object of unknown type, a library call made
  only for its effect, which may keep the value, a variable's `assign`, a `global`, `yield`, a condition
  that steers control flow) or the walk ran out of budget.

A value may have several purposes (a loss is both differentiated and printed). `Reach.trains` is the answer
rules use: True when some path reaches training, None when none does but some path is UNKNOWN or RETURNED,
False when every path ends in a metric, a log or nothing. `Reach.judged_as_training` also accepts a value
whose only open end is RETURNED: a function that computes it for callers in other files is judged where it
is written (that is how a `losses.py` is linted), while a value handed to code that cannot be read is not.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import GRADIENT_METHODS, Binding, CallSite, Facts, Scope, arg_value
from tapelint.analysis.names import dotted
from tapelint.analysis.walk import child_nodes


class Purpose(str, enum.Enum):
    TRAINING = "training"
    METRIC = "metric"
    LOGGING = "logging"
    NOTHING = "nothing"
    RETURNED = "returned"  # the result of a function nothing in this file calls: its callers are elsewhere
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Reach:
    purposes: frozenset[Purpose]

    @property
    def trains(self) -> bool | None:
        """True: some path reaches the update. False: every path ends in a metric, a log or nothing.
        None: no path reaches the update as far as can be seen, but some path cannot be followed."""
        if Purpose.TRAINING in self.purposes:
            return True
        if Purpose.UNKNOWN in self.purposes or Purpose.RETURNED in self.purposes:
            return None
        return False

    @property
    def judged_as_training(self) -> bool:
        """Does the value reach the update, or is it the result of a function this file offers to callers it
        does not show (a loss helper of a `losses.py`, judged where it is written), with no path lost on the
        way? The test for rules whose finding is about the value's own computation."""
        return self.trains is True or (Purpose.RETURNED in self.purposes and Purpose.UNKNOWN not in self.purposes)


# Libraries whose functions only show, record or store what they are given: passing a value to any of
# them (or to a method of an object they made: `fig, ax = plt.subplots()`, `logger = logging.getLogger()`)
# cannot feed training.
_LOGGING_PREFIXES = (
    "logging.", "matplotlib.", "seaborn.", "plotly.", "bokeh.", "wandb.", "mlflow.", "neptune.", "comet_ml.",
    "tensorboardX.", "torch.utils.tensorboard.", "IPython.", "PIL.", "imageio.", "skimage.io.", "tqdm.",
    "pprint.", "json.dump", "pickle.dump", "csv.", "tensorflow.summary.", "tensorflow.print",
    "tensorflow.io.write_file", "tensorflow.keras.utils.plot_model", "keras.utils.plot_model",
    "keras.utils.save_img", "keras.preprocessing.image.save_img", "numpy.save", "numpy.savez", "numpy.savetxt",
    "cv2.imshow", "cv2.imwrite", "scipy.io.wavfile.write", "soundfile.write", "librosa.display.",
    "tensorflow.debugging.assert", "tensorflow.Assert",
)
_LOGGING_EXACT = frozenset({"logging", "matplotlib.pyplot", "wandb", "mlflow", "tqdm", "tqdm.tqdm",
                            "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "pprint.pprint"})
_METRIC_PREFIXES = ("sklearn.metrics.",)
# Builtins that give back something made from their arguments.
_BUILTIN_COMPUTE = frozenset({"float", "int", "bool", "str", "repr", "format", "round", "abs", "sum", "min", "max",
                              "list", "tuple", "set", "dict", "sorted", "reversed", "zip", "enumerate", "iter",
                              "next", "len", "map", "filter", "any", "all", "divmod", "pow", "complex", "range",
                              "slice"})
_BUILTIN_NOTHING = frozenset({"isinstance", "issubclass", "type", "id", "hasattr", "callable", "hash"})
_FILE_METHODS = frozenset({"write", "writelines", "writerow", "writerows"})
_CONTAINER_ADDERS = frozenset({"append", "extend", "insert", "add", "update", "appendleft", "setdefault", "put"})
_TRAINING_METHODS = frozenset({"fit", "train_on_batch", "fit_generator"})
_EVALUATION_METHODS = frozenset({"evaluate", "test_on_batch", "evaluate_generator"})
_REPLICA_RUNNERS = frozenset({"run", "experimental_run_v2"})
_WRAPPERS = frozenset({"tensorflow.function", "tensorflow.compat.v1.function", "tensorflow.autograph.to_graph"})
# Methods of a model that put a value into its state rather than compute with it.
_STATE_SETTERS = frozenset({"set_weights", "load_weights", "add_update", "add_loss", "add_metric", "compile"})
_KERAS_LOG_STEPS = frozenset({"train_step", "test_step"})
_BUDGET = 1500
_MAX_CALLS = 6

# What the walk carries: a value-holding expression, or a binding whose reads hold it. `returns` is the
# stack of calls the walk entered functions through (a `return` goes back to the last one); `index` is the
# element of a tuple or list the value is (when it is one element of a literal or of a returned tuple).
_Returns = tuple[CallSite, ...]


class _Walk:
    def __init__(self, facts: Facts) -> None:
        from tapelint.analysis.values import values

        self.f = facts
        self.values = values(facts)
        self.found: set[Purpose] = set()
        self.seen: set[tuple] = set()
        self.budget = _BUDGET
        self.pending: list[tuple] = []

    # ------------------------------------------------------------------ driver
    def run(self, node: cst.CSTNode, scope: Scope, order: int) -> frozenset[Purpose]:
        self.pending.append(("expr", node, scope, order, (), None))
        while self.pending:
            if self.budget <= 0:
                self.found.add(Purpose.UNKNOWN)
                break
            self.budget -= 1
            item = self.pending.pop()
            key = (item[0], id(item[1]), id(item[2]), id(item[4][-1]) if item[4] else 0, item[5])
            if key in self.seen:
                continue
            self.seen.add(key)
            if item[0] == "expr":
                self._expr(item[1], item[2], item[3], item[4], item[5])
            elif item[0] == "binding":
                self._binding(item[1], item[4])
            elif item[0] == "param":
                self._param(item[1], item[2], item[4])
        return frozenset(self.found) or frozenset({Purpose.NOTHING})

    def end(self, purpose: Purpose) -> None:
        self.found.add(purpose)

    def expr(self, node: cst.CSTNode, scope: Scope, order: int, returns: _Returns, index: int | None = None) -> None:
        self.pending.append(("expr", node, scope, order, returns, index))

    def binding(self, binding: Binding, returns: _Returns) -> None:
        self.pending.append(("binding", binding, binding.scope, binding.order, returns, None))

    # ------------------------------------------------------------------ one expression: what holds it
    def _expr(self, node: cst.CSTNode, scope: Scope, order: int, returns: _Returns, index: int | None) -> None:
        f = self.f
        parent = parent_of(f, node)
        if parent is None:
            self.end(Purpose.UNKNOWN)
            return
        kind = type(parent)
        if type(parent) is cst.Arg:
            call = parent_of(f, parent)
            if isinstance(call, cst.Call):
                self._argument(call, parent, node, scope, order, returns, index)
            else:
                self.end(Purpose.UNKNOWN)  # a class's bases, a decorator's arguments
            return
        if kind is cst.Call:
            if parent.func is node:  # type: ignore[attr-defined]
                self.expr(parent, scope, order, returns)  # a function or loss object called: its result
            else:
                self.end(Purpose.UNKNOWN)
            return
        if kind is cst.Attribute:
            self._attribute(parent, scope, order, returns)  # type: ignore[arg-type]
            return
        if kind in (cst.Element, cst.StarredElement):
            container = parent_of(f, parent)
            position = None
            if isinstance(container, (cst.Tuple, cst.List)) and kind is cst.Element:
                position = next((i for i, e in enumerate(container.elements) if e is parent), None)
            if container is not None:
                self.expr(container, scope, order, returns, position)
            return
        if kind is cst.DictElement:
            container = parent_of(f, parent)  # `{"loss": value}`: the dict holds it
            if container is not None:
                self.expr(container, scope, order, returns)
            return
        if kind in (cst.Assign, cst.AnnAssign):
            self._assigned(parent, node, scope, order, returns, index)
            return
        if kind is cst.AssignTarget:
            return  # the node is a target, not a value (`self.x = ...`)
        if kind is cst.AugAssign:
            self._augmented(parent, node, scope, order, returns)  # type: ignore[arg-type]
            return
        if kind is cst.NamedExpr:
            for binding in f.bindings_of_value(node):
                if binding.node is parent:
                    self.binding(binding, returns)
            self.expr(parent, scope, order, returns)
            return
        if kind is cst.Return:
            self._returned(scope, order, returns, index)
            return
        if kind is cst.Expr:
            self.end(Purpose.NOTHING)  # evaluated as a statement; nobody keeps it
            return
        if kind in (cst.Assert, cst.Del):
            self.end(Purpose.NOTHING)
            return
        if kind is cst.For:
            if parent.iter is node:  # type: ignore[attr-defined]
                self._loop_targets(node, returns)
            else:
                self.end(Purpose.UNKNOWN)
            return
        if kind is cst.CompFor:
            if parent.iter is node:  # type: ignore[attr-defined]
                self._loop_targets(node, returns)
            else:
                self.end(Purpose.UNKNOWN)
            return
        if kind in (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp):
            self.expr(parent, scope, order, returns)  # the element: the whole comprehension holds it
            return
        if kind is cst.Lambda:
            self.expr(parent, scope, order, returns)  # the body: whoever calls the lambda gets it
            return
        if kind is cst.Subscript or kind is cst.SubscriptElement or kind is cst.Index or kind is cst.Slice:
            self.expr(parent, scope, order, returns)  # `x[0]`, and `data[i]` with `i` our value
            return
        if kind in (cst.BinaryOperation, cst.UnaryOperation, cst.BooleanOperation, cst.Comparison,
                    cst.ComparisonTarget, cst.IfExp, cst.Tuple, cst.List, cst.Set, cst.Dict, cst.Await,
                    cst.FormattedStringExpression, cst.FormattedString, cst.ConcatenatedString):
            if kind is cst.IfExp and parent.test is node:  # type: ignore[attr-defined]
                self.end(Purpose.UNKNOWN)  # steers which value is taken
                return
            self.expr(parent, scope, order, returns, index if kind in (cst.Tuple, cst.List) else None)
            return
        # `if value:`, `while value:`, `with value as x`, `yield value`, `raise value`, a decorator, a default
        self.end(Purpose.UNKNOWN)

    def _attribute(self, attribute: cst.Attribute, scope: Scope, order: int, returns: _Returns) -> None:
        """The value is the object of an attribute: `x.numpy()`, `x.shape`, `xs.append(...)`."""
        outer = parent_of(self.f, attribute)
        if isinstance(outer, cst.Call) and outer.func is attribute:
            method = attribute.attr.value
            if method in _FILE_METHODS and self._logging_object(attribute.value, scope, order):
                self.end(Purpose.LOGGING)
                return
            self.expr(outer, scope, order, returns)  # a method of the value: what it returns is made from it
            return
        self.expr(attribute, scope, order, returns)

    # ------------------------------------------------------------------ bound to names
    def _assigned(self, statement: cst.CSTNode, node: cst.CSTNode, scope: Scope, order: int, returns: _Returns,
                  index: int | None) -> None:
        f = self.f
        bound = [b for b in f.bindings_of_value(node) if b.node is statement]
        if index is not None:
            bound = [b for b in bound if b.index in (None, index) and (not b.path or b.path[0] in (index, -1))]
        for binding in bound:
            self.binding(binding, returns)
        # `d[k] = value`, `obj.items[0] = value`: the container holds it now.
        stored = False
        for store in f.stores:
            if store.value is node:
                stored = True
                self._stored_into(store.target, store.scope, store.order, returns)
        if not bound and not stored:
            targets = [t.target for t in getattr(statement, "targets", ())] or [getattr(statement, "target", None)]
            for target in targets:
                if target is not None and not isinstance(target, (cst.Name, cst.Attribute, cst.Tuple, cst.List)):
                    self._stored_into(target, scope, order, returns)
                    stored = True
            if not stored:
                self.end(Purpose.UNKNOWN)

    def _stored_into(self, target: cst.CSTNode, scope: Scope, order: int, returns: _Returns) -> None:
        """`history[k] = value`: every later read of the container `history` may see it."""
        root = target
        while isinstance(root, (cst.Subscript, cst.Attribute)):
            if isinstance(root, cst.Attribute) and dotted(root) is not None:
                break
            root = root.value
        name = dotted(root) if isinstance(root, (cst.Name, cst.Attribute)) else None
        if name is None:
            self.end(Purpose.UNKNOWN)
            return
        self._container_reads(name, scope, order, returns)

    def _container_reads(self, name: str, scope: Scope, order: int, returns: _Returns,
                         skip: cst.CSTNode | None = None) -> None:
        """A value put into the container `name` at (`scope`, `order`): the reads of the container after it
        (`skip`: the container as the adding call names it, which is no later read)."""
        holders = self._holders(name, scope, order)
        if holders is None:
            self.end(Purpose.UNKNOWN)
            return
        if not holders:
            # A parameter or a name bound elsewhere: what the caller does with the container is not in sight.
            self.end(Purpose.UNKNOWN)
            return
        for binding in holders:
            for use in self._reads(binding):
                if use.node is not skip and (use.order > order or use.scope is not scope):
                    self.expr(use.node, use.scope, use.order, returns)

    def _augmented(self, statement: cst.AugAssign, node: cst.CSTNode, scope: Scope, order: int,
                   returns: _Returns) -> None:
        found = [b for b in self.f.bindings if b.node is statement and b.augmented]
        if not found:
            self._stored_into(statement.target, scope, order, returns)
            return
        for binding in found:
            self.binding(binding, returns)

    def _loop_targets(self, iterated: cst.CSTNode, returns: _Returns) -> None:
        targets = self._loop_index().get(id(iterated), [])
        if not targets:
            self.end(Purpose.NOTHING)  # `for _ in values:` binds nothing that is read
            return
        for binding in targets:
            self.binding(binding, returns)

    def _loop_index(self) -> dict[int, list[Binding]]:
        def build() -> dict[int, list[Binding]]:
            index: dict[int, list[Binding]] = {}
            for binding in self.f.bindings:
                iterated = self.f.loop_bindings.get(id(binding))
                if iterated is not None:
                    index.setdefault(id(iterated), []).append(binding)
            return index

        return self.f.cached("purpose.loop_targets", build)

    def _binding(self, binding: Binding, returns: _Returns) -> None:
        if binding.class_body is not None or binding.target.split(".")[0] in binding.scope.declared_outside:
            self.end(Purpose.UNKNOWN)  # a class attribute, a `global`: read where bindings are not followed
            return
        reads = self._reads(binding)
        if not reads:
            self.end(Purpose.NOTHING)
            return
        for use in reads:
            self.expr(use.node, use.scope, use.order, returns)

    def _reads(self, binding: Binding) -> list:
        """The reads of the name bound here that may see this binding (not assignment targets)."""
        f = self.f
        name = binding.target
        if name.startswith("self.") and binding.scope.class_name is not None:
            uses = [u for u in self._uses_named(name) if u.scope.class_name == binding.scope.class_name]
            return [u for u in uses if not self._is_target(u.node)]
        found = []
        start = binding.comprehension[0] if binding.comprehension is not None else binding.ready
        for use in f.uses_after(name, binding.scope, start):
            if use.name != name or self._is_target(use.node):
                continue
            if any(b is binding for b in self.values.reaching(name, use.scope, use.order)):
                found.append(use)
        return found

    def _uses_named(self, name: str) -> list:
        def build() -> dict[str, list]:
            index: dict[str, list] = {}
            for use in self.f.name_uses:
                index.setdefault(use.name, []).append(use)
            return index

        return self.f.cached("purpose.uses_by_name", build).get(name, [])

    def _is_target(self, node: cst.CSTNode) -> bool:
        """Is the name written here rather than read (`self.x = ...`, `x: int = ...`)? An augmented
        assignment's target is read first, so it counts as a read."""
        parent = parent_of(self.f, node)
        return isinstance(parent, cst.AssignTarget) or isinstance(parent, cst.AnnAssign) and parent.target is node

    def _holders(self, name: str, scope: Scope, order: int) -> list[Binding] | None:
        if name.startswith("self.") and scope.class_name is not None:
            return [b for b in self.f.bindings_of(name) if b.scope.class_name == scope.class_name]
        return self.values.reaching(name, scope, order)

    # ------------------------------------------------------------------ returned
    def _returned(self, scope: Scope, order: int, returns: _Returns, index: int | None) -> None:
        if scope.is_module:
            self.end(Purpose.UNKNOWN)
            return
        if returns:
            site = returns[-1]
            self.expr(site.node, site.scope, site.order, returns[:-1], index)
            return
        sites = self._callers(scope)
        if not sites:
            if scope.class_name is not None and scope.simple_name in _KERAS_LOG_STEPS:
                self.end(Purpose.LOGGING if scope.simple_name == "train_step" else Purpose.METRIC)
                return
            references = self._references(scope)
            if not references:
                self.end(Purpose.RETURNED)  # returned to callers out of sight
                return
            for use in references:
                self.expr(use.node, use.scope, use.order, ())
            return
        for site in sites:
            self.expr(site.node, site.scope, site.order, (), index)

    def _callers(self, scope: Scope) -> list[CallSite]:
        """The calls that run `scope`: by its name, `obj.method(...)` on an object of its class, and for
        a Keras `call`/`__call__`, `model(x)` on an object of the class (or `self(x)` inside it)."""
        from tapelint.analysis.values import Kind

        f = self.f
        sites = list(f.call_sites_of_scope(scope))
        if scope.class_name is None:
            return sites
        name = scope.simple_name
        runs_call = name in ("call", "__call__")
        for site in f.calls:
            if any(s is site for s in sites):
                continue
            if runs_call and site.func == "self" and site.scope.class_name == scope.class_name:
                sites.append(site)
                continue
            if site.method == name and site.receiver not in (None, "self"):
                found = self.values.of(site.node.func, site.scope, site.order)
                if any(v.kind is Kind.FUNCTION and v.scope is scope for v in found):
                    sites.append(site)
            elif runs_call and site.func not in (None, "self") and site.method != name:
                found = self.values.of(site.node.func, site.scope, site.order)
                if any(v.cls == scope.class_name and v.kind in (Kind.MODEL, Kind.LAYER, Kind.INSTANCE)
                       for v in found):
                    sites.append(site)
        return sites

    def _references(self, scope: Scope) -> list:
        """The function named without being called (`compile(loss=my_loss)`, `map(fn, xs)`)."""
        if scope.class_name is not None or scope.parent is None or not scope.parent.is_module:
            return []
        name = scope.simple_name
        found = []
        for use in self._uses_named(name):
            parent = parent_of(self.f, use.node)
            if isinstance(parent, cst.Call) and parent.func is use.node:
                continue
            if self.f.function_at(name, use.order) is scope and not self.values.reaching(name, use.scope, use.order):
                found.append(use)
        return found

    # ------------------------------------------------------------------ passed to a call
    def _argument(self, call: cst.Call, arg: cst.Arg, node: cst.CSTNode, scope: Scope, order: int,
                  returns: _Returns, index: int | None) -> None:
        f = self.f
        site = f.call_site(call)
        if site is None:
            self.end(Purpose.UNKNOWN)
            return
        func = call.func
        method = site.method
        position = _position(call, arg)
        keyword = arg.keyword.value if arg.keyword is not None else None
        # --- training: a differentiated target, an optimizer step, a Keras training call
        if method in GRADIENT_METHODS and self._is_tape(func.value, site):  # type: ignore[attr-defined]
            if position == 0 or keyword == "target":
                self.end(Purpose.TRAINING)
            else:
                self.expr(call, site.scope, site.order, returns)  # differentiated with respect to it
            return
        if method == "watch" and self._is_tape(func.value, site):  # type: ignore[attr-defined]
            self.end(Purpose.NOTHING)
            return
        if method is not None and any(a.site is site for a in self._apply_sites()):
            self.end(Purpose.TRAINING)
            return
        receiver = func.value if isinstance(func, cst.Attribute) else None
        if method is not None and receiver is not None:
            model = self._model_receiver(receiver, site)
            if method in _TRAINING_METHODS and model is None:
                # Keras's own step methods, on an object that is not known to be anything else (a model
                # from another module): the same reading as the apply calls of `optimizers.apply_sites`.
                self.end(Purpose.TRAINING)
                return
            if model:
                if method in _TRAINING_METHODS:
                    self.end(Purpose.TRAINING)
                    return
                if method in _EVALUATION_METHODS:
                    self.end(Purpose.METRIC)
                    return
                if method == "compile":
                    if keyword in ("metrics", "weighted_metrics"):
                        self.end(Purpose.METRIC)
                    elif keyword in ("loss", "loss_weights") or position == 1:
                        self.end(Purpose.TRAINING)
                    else:
                        self.end(Purpose.NOTHING)
                    return
            if method == "add_loss":
                self.end(Purpose.TRAINING)
                return
            if method == "add_metric":
                self.end(Purpose.METRIC)
                return
        # --- metrics
        if self._metric_call(func, method, site):
            self.end(Purpose.METRIC)
            return
        # --- logs, plots, files
        qualified = site.qualified if not self._shadowed(site.func, site) else None
        if qualified is not None:
            if qualified.startswith(_METRIC_PREFIXES):
                self.end(Purpose.METRIC)
                return
            if qualified in _LOGGING_EXACT or qualified.startswith(_LOGGING_PREFIXES):
                self.end(Purpose.LOGGING)
                return
        if isinstance(func, cst.Name) and not self._shadowed(func.value, site) and func.value not in f.functions \
                and func.value not in f.classes:
            name = func.value
            if name == "print":
                self.end(Purpose.LOGGING)
                return
            if name == "open":
                self.end(Purpose.NOTHING)
                return
            if name in _BUILTIN_NOTHING:
                self.end(Purpose.NOTHING)
                return
            if name in _BUILTIN_COMPUTE:
                self.expr(call, site.scope, site.order, returns)
                return
        if receiver is not None and self._logging_object(receiver, site.scope, site.order):
            self.end(Purpose.LOGGING)
            return
        # --- a replica function: `strategy.run(step, args=(x, y))`
        if method in _REPLICA_RUNNERS and keyword == "args":
            target = arg_value(call, 0, "fn")
            if target is not None and index is not None:
                self._enter_by_position(target, index, site, returns)
                return
            self.end(Purpose.UNKNOWN)
            return
        # --- a container: `xs.append(value)`, `history["loss"].append(value)`
        if method in _CONTAINER_ADDERS and receiver is not None:
            root = receiver
            while isinstance(root, cst.Subscript):
                root = root.value
            held = dotted(root)
            if held is not None and self._holders(held, site.scope, site.order):
                self._container_reads(held, site.scope, site.order, returns, skip=root)
                return
        # --- a function or class of an imported library (none of the sinks above), a method of a model, of an
        # object a library made or of a string: its result is made from the value (`tf.reduce_mean`,
        # `np.mean`, `tl.cost.cross_entropy`, `model.predict`, `dist.log_prob`, `"{}".format`). Called for
        # its effect alone (its result dropped), it may have kept the value somewhere: unknown.
        if qualified is not None or receiver is not None and self._computing_receiver(receiver, method, site):
            if id(call) in f.statement_values:
                self.end(Purpose.UNKNOWN)
            else:
                self.expr(call, site.scope, site.order, returns)
            return
        if receiver is not None and dotted(receiver) == "self" and (method or "").startswith("assert") \
                and only_in_unit_tests(f, site.scope):
            self.end(Purpose.NOTHING)  # `self.assertLess(loss, 0.1)` in a test
            return
        # --- a function, method or class of this module: into its parameter; a model or loss: its output
        self._callee(call, site, position, keyword, returns)

    def _computing_receiver(self, receiver: cst.BaseExpression, method: str | None, site: CallSite) -> bool:
        """Is `receiver.method(...)` a computation on an object whose methods give back values (a Keras model
        or layer other than setting its weights, an object a library made, a string)?"""
        from tapelint.analysis.values import Kind

        if isinstance(receiver, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
            return True
        found = self.values.of(receiver, site.scope, site.order)
        if not found or any(v.kind is Kind.UNKNOWN for v in found):
            return False
        if all(v.kind is Kind.CONSTANT and isinstance(v.const, str) for v in found):
            return True
        if all(v.kind in (Kind.MODEL, Kind.LAYER) and v.cls not in self.f.classes for v in found):
            return method not in _STATE_SETTERS
        return all(v.kind in (Kind.EXTERNAL, Kind.DATASET) for v in found)

    def _callee(self, call: cst.Call, site: CallSite, position: int | None, keyword: str | None,
                returns: _Returns) -> None:
        from tapelint.analysis.values import Kind

        found = self.values.of(call.func, site.scope, site.order)
        nested = self._nested_function(call.func, site)
        if nested is not None:
            self._enter(nested, call, site, position, keyword, returns)
            return
        if not found:
            self.end(Purpose.UNKNOWN)
            return
        for value in found:
            if value.kind is Kind.FUNCTION and value.scope is not None and isinstance(value.node, cst.FunctionDef):
                self._enter(value.scope, call, site, position, keyword, returns)
            elif value.kind is Kind.CLASS and value.cls in self.f.classes:
                init = self.f.classes[value.cls].methods.get("__init__")
                if init is None:
                    self.expr(call, site.scope, site.order, returns)
                else:
                    self._enter(init, call, site, position, keyword, returns)
            elif value.kind in (Kind.MODEL, Kind.LAYER, Kind.LOSS, Kind.FUNCTION):
                self.expr(call, site.scope, site.order, returns)  # the output is made from the input
            elif value.kind is Kind.EXTERNAL and value.cls in _WRAPPERS and isinstance(value.node, cst.Call):
                # `step = tf.function(train_step)`: calling it runs the wrapped function.
                wrapped = self.values.of(arg_value(value.node, 0, "func"), site.scope, site.order)
                functions = [w for w in wrapped if w.kind is Kind.FUNCTION and w.scope is not None
                             and isinstance(w.node, cst.FunctionDef)]
                if not functions or len(functions) != len(wrapped):
                    self.end(Purpose.UNKNOWN)
                for w in functions:
                    self._enter(w.scope, call, site, position, keyword, returns)  # type: ignore[arg-type]
            elif value.kind is Kind.EXTERNAL:
                self.expr(call, site.scope, site.order, returns)  # an object a library made, called on it
            elif value.kind is Kind.INSTANCE and value.cls in self.f.classes:
                self._call_object(value.cls, call, site, position, keyword, returns)
            else:
                self.end(Purpose.UNKNOWN)

    def _call_object(self, cls: str, call: cst.Call, site: CallSite, position: int | None, keyword: str | None,
                     returns: _Returns) -> None:
        """`net(x)` on an object of a class of this module: its own `__call__`, or, for a class built on a
        library class (a tensorlayer or Sonnet model), what that library's call gives back."""
        from tapelint.analysis.values import Kind

        method = self.values.member(cls, "__call__")
        functions = [v for v in method if v.kind is Kind.FUNCTION and v.scope is not None]
        if functions:
            for value in functions:
                self._enter(value.scope, call, site, position, keyword, returns)  # type: ignore[arg-type]
            return
        if self.values.library_bases(cls):
            self.expr(call, site.scope, site.order, returns)
            return
        self.end(Purpose.UNKNOWN)

    def _nested_function(self, func: cst.BaseExpression, site: CallSite) -> Scope | None:
        """`step(x)` where `step` is a function defined inside an enclosing function (the value model knows
        module-level `def`s only), and no assignment or parameter of that name is in the way."""
        if not isinstance(func, cst.Name) or self.values.reaching(func.value, site.scope, site.order):
            return None
        for current in site.scope.chain():
            if func.value in current.params:
                return None
            found = [s for s in self.f.scopes if s.parent is current and s.class_name is None
                     and s.simple_name == func.value and not current.is_module]
            if found:
                before = [s for s in found if s.order < site.order]
                return (before or found)[-1]
        return None

    def _enter(self, callee: Scope, call: cst.Call, site: CallSite, position: int | None, keyword: str | None,
               returns: _Returns) -> None:
        if len(returns) >= _MAX_CALLS:
            self.end(Purpose.UNKNOWN)
            return
        params = list(callee.params)
        if callee.class_name is not None and params and "staticmethod" not in callee.decorators:
            params = params[1:]
        param = None
        if keyword is not None:
            param = keyword if keyword in params else None
        elif position is not None and position < len(params):
            param = params[position]
        if param is None:
            self.end(Purpose.UNKNOWN)  # `*args`, `**kwargs`, or more arguments than parameters
            return
        self.pending.append(("param", param, callee, callee.order, (*returns, site), None))

    def _enter_by_position(self, target: cst.BaseExpression, index: int, site: CallSite, returns: _Returns) -> None:
        from tapelint.analysis.values import Kind

        found = self.values.of(target, site.scope, site.order)
        functions = [v for v in found if v.kind is Kind.FUNCTION and v.scope is not None
                     and isinstance(v.node, cst.FunctionDef)]
        if not functions or len(functions) != len(found):
            self.end(Purpose.UNKNOWN)
            return
        for value in functions:
            params = list(value.scope.params)  # type: ignore[union-attr]
            if value.scope.class_name is not None and params and params[0] == "self":  # type: ignore[union-attr]
                params = params[1:]
            if index >= len(params):
                self.end(Purpose.UNKNOWN)
                continue
            # The replica function's result is per-replica values handed back to the caller of `run`.
            self.pending.append(("param", params[index], value.scope, value.scope.order, (*returns, site), None))  # type: ignore[union-attr]

    def _param(self, param: str, callee: Scope, returns: _Returns) -> None:
        f = self.f
        reads = [u for u in f.uses_after(param, callee, callee.order)
                 if u.name == param and not self._is_target(u.node)
                 and f.param_scope(param, u.scope) is callee and not self.values.reaching(param, u.scope, u.order)]
        if not reads:
            self.end(Purpose.NOTHING)
            return
        for use in reads:
            self.expr(use.node, use.scope, use.order, returns)

    # ------------------------------------------------------------------ what a callee or receiver is
    def _apply_sites(self):  # type: ignore[no-untyped-def]
        from tapelint.analysis.optimizers import apply_sites

        return apply_sites(self.f)

    def _is_tape(self, receiver: cst.BaseExpression, site: CallSite) -> bool:
        from tapelint.analysis.values import Kind

        if any(s is site for s in self.f.gradient_calls()):
            return True
        found = self.values.of(receiver, site.scope, site.order)
        return bool(found) and all(v.kind is Kind.TAPE for v in found)

    def _model_receiver(self, receiver: cst.BaseExpression, site: CallSite) -> bool | None:
        """True: a Keras model. False: surely something else. None: cannot be told."""
        from tapelint.analysis.values import Kind

        found = self.values.of(receiver, site.scope, site.order)
        if found and all(v.kind is Kind.MODEL for v in found):
            return True
        if any(v.kind is Kind.UNKNOWN for v in found):
            return None
        return False

    def _metric_call(self, func: cst.BaseExpression, method: str | None, site: CallSite) -> bool:
        """`metric(y, p)`, `self.acc(y, p)` or `metric.update_state(...)` on a Keras metric object."""
        from tapelint.analysis.values import Kind

        def metric(target: cst.BaseExpression) -> bool:
            found = self.values.of(target, site.scope, site.order)
            return bool(found) and all(
                v.kind is Kind.METRIC or v.kind is Kind.EXTERNAL and (v.cls or "").startswith("keras.metrics.")
                and (v.cls or "").rsplit(".", 1)[-1][:1].isupper()
                for v in found)

        if method == "update_state" and isinstance(func, cst.Attribute):
            return metric(func.value)
        return isinstance(func, (cst.Name, cst.Attribute)) and metric(func)

    def _shadowed(self, name: str | None, site: CallSite) -> bool:
        if not name:
            return False
        head = name.split(".")[0]
        return bool(self.f.visible_bindings(head, site.scope)) or self.f.is_param(head, site.scope)

    def _logging_object(self, receiver: cst.BaseExpression, scope: Scope, order: int) -> bool:
        """Is the receiver an object a logging, plotting or file library made (`ax` of `plt.subplots()`,
        `open(path)`), followed through its name's one binding?"""
        f = self.f
        expr: cst.BaseExpression | None = receiver
        for _ in range(6):
            if isinstance(expr, cst.Call):
                qualified = f.resolve(expr.func)
                if qualified is not None and (qualified in _LOGGING_EXACT or qualified.startswith(_LOGGING_PREFIXES)):
                    return True
                if isinstance(expr.func, cst.Name) and expr.func.value == "open" and not f.visible_bindings("open", scope):
                    return True
                if isinstance(expr.func, cst.Attribute):
                    expr = expr.func.value  # `tqdm(...).set_postfix`, `plt.figure().add_subplot(...)`
                    continue
                return False
            if isinstance(expr, cst.Subscript):
                expr = expr.value  # `axes[0].imshow(...)`
                continue
            name = dotted(expr) if expr is not None else None
            if name is None:
                return False
            qualified = f.imports.resolve_dotted(name)
            if qualified is not None and not f.visible_bindings(name.split(".")[0], scope):
                return qualified in _LOGGING_EXACT or qualified.startswith(_LOGGING_PREFIXES)
            holders = self._holders(name, scope, order)
            if not holders or len(holders) > 2:
                return False
            binding = holders[-1]
            expr = binding.source if binding.source is not None else binding.value
            scope, order = binding.scope, binding.order
        return False


def _position(call: cst.Call, arg: cst.Arg) -> int | None:
    if arg.keyword is not None or arg.star:
        return None
    positional = [a for a in call.args if a.keyword is None and not a.star]
    for i, a in enumerate(positional):
        if a is arg:
            return i
    return None


def parent_of(facts: Facts, node: cst.CSTNode) -> cst.CSTNode | None:
    """The node that holds `node` directly (None for a top-level statement or an unknown node)."""
    top = facts.top_statement.get(id(node))
    if top is None or top < 0:
        return None
    parents = facts.cached(("purpose.parents", top), lambda: _parents(facts.module.body[top]))
    return parents.get(id(node))


def _parents(root: cst.CSTNode) -> dict[int, cst.CSTNode]:
    parents: dict[int, cst.CSTNode] = {}
    stack = [root]
    while stack:
        current = stack.pop()
        for child in child_nodes(current):
            parents[id(child)] = current
            stack.append(child)
    return parents


def scope_at(facts: Facts, order: int) -> Scope:
    """The innermost function whose body holds the node at `order` (the module when none does)."""
    best = facts.module_scope
    for scope in facts.scopes:
        if scope.node is not None and scope.body_order <= order <= scope.end_order:
            if best.node is None or scope.order > best.order:
                best = scope
    return best


def reach(facts: Facts, node: cst.CSTNode, scope: Scope | None = None, order: int | None = None) -> Reach:
    """Where the value of the expression `node` goes (see the module's docstring). `scope` and `order` place
    it; a call's own are used when not given."""
    if scope is None or order is None:
        site = facts.call_site(node) if isinstance(node, cst.Call) else None
        if site is not None:
            scope, order = site.scope, site.order
        elif order is not None:
            scope = scope_at(facts, order)
        else:
            return Reach(frozenset({Purpose.UNKNOWN}))
    key = ("purpose.reach", id(node))
    cached = facts.cached(key, lambda: (node, _Walk(facts).run(node, scope, order)))
    if cached[0] is not node:
        return Reach(_Walk(facts).run(node, scope, order))
    return Reach(cached[1])


def reaches_update(facts: Facts, node: cst.CSTNode, scope: Scope | None = None, order: int | None = None) -> bool | None:
    """`reach(...).trains`: True when the value takes part in training, False when it only reaches metrics,
    logs or nothing, None when that cannot be told."""
    return reach(facts, node, scope, order).trains


def only_in_unit_tests(facts: Facts, scope: Scope) -> bool:
    """Does code in `scope` run only as part of unit tests: inside a method of a `TestCase` subclass
    (`analysis/unit_tests`), or in a function whose every caller in this file does? A test that fits two
    samples to see the loss fall is no training run: claims about how well a model would train (NaN or zero
    gradients, underflow, a frozen backbone, swapped loss arguments) do not apply to it; claims of a crash do."""

    def compute() -> bool:
        from tapelint.analysis.unit_tests import in_unit_test

        pending, seen = [scope], set()
        while pending:
            current = pending.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            if len(seen) > 32:
                return False
            if in_unit_test(facts, current):
                continue
            if current.is_module:
                return False
            callers = facts.call_sites_of_scope(current)
            if not callers:
                return False  # run by code out of sight (or nothing): not known to be a test
            pending.extend(site.scope for site in callers)
        return True

    return facts.cached(("purpose.only_in_unit_tests", id(scope)), compute)
