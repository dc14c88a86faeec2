"""Which loops run training steps (batch loops), which loops run whole passes of them (epoch loops), and
where stateful Keras metrics are created, updated, read and reset relative to those loops.

A point of the program "runs within" a loop when the loop encloses it in the same function, or encloses
a call of its function (through up to a few levels of calls, a `tf.function(f)` wrapper, or a function
handed to a call such as `strategy.run(f, ...)`). A training step is a `GradientTape` block, an apply
call (`apply_gradients`, `minimize`) or `train_on_batch`. A batch loop is a loop a step runs within; an
epoch loop is a loop another batch loop runs within. Nothing is judged by a name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from tapelint.analysis.blocks import Span, blocks
from tapelint.analysis.closed_world import reachable_from_other_modules
from tapelint.analysis.facts import CallSite, Facts, Scope
from tapelint.analysis.steps import STEP_APPLY_METHODS
from tapelint.analysis.values import Kind, Value, flatten, is_unknown, values

UPDATE_METHODS = frozenset({"update_state"})
READ_METHODS = frozenset({"result"})
# `reset_states` is the tf_keras spelling (removed in Keras 3: TL502's business); either resets.
RESET_METHODS = frozenset({"reset_state", "reset_states"})
# A model's `reset_metrics()` resets every metric the model tracks.
MODEL_RESETS = frozenset({"reset_metrics"})
_READ_OR_UPDATE = READ_METHODS | UPDATE_METHODS
_METRIC_METHODS = UPDATE_METHODS | READ_METHODS | RESET_METHODS
STEP_METHODS = STEP_APPLY_METHODS | {"train_on_batch"}
_CALL_LEVELS = 4


@dataclass(eq=False)
class Loops:
    """The loops of one module, placed relative to the training steps."""

    facts: Facts
    # id(scope) -> [(loop, scope the loop is in)]: the loops around the calls of that function.
    _outer: dict[int, list[tuple[Span, Scope]]] = field(default_factory=dict)
    _callers: dict[int, list[CallSite]] | None = None
    # (id(scope), order) -> (the loops around that point, their ids)
    _points: dict[tuple[int, int], tuple[list[Span], frozenset[int]]] = field(default_factory=dict)

    # ------------------------------------------------------------------ who calls a function
    def callers(self, scope: Scope) -> list[CallSite]:
        """Calls that run `scope`: direct calls, calls through a `tf.function(f)` wrapper bound to
        another name, calls that receive the function itself (`strategy.run(f, args=...)`), and
        `obj.method(...)` where the value model says `obj` is an instance of the method's class."""
        if self._callers is None:
            self._callers = self._index_callers()
        return self._callers.get(id(scope), [])

    def _index_callers(self) -> dict[int, list[CallSite]]:
        facts = self.facts
        found: dict[int, list[CallSite]] = {}

        def add(scope: Scope, site: CallSite) -> None:
            sites = found.setdefault(id(scope), [])
            if all(s is not site for s in sites):
                sites.append(site)

        for scope in facts.scopes:
            if scope.is_module:
                continue
            for site in facts.call_sites_of_scope(scope):
                add(scope, site)
        # A function handed over by name: `strategy.run(step, ...)`, `tf.function(step)`.
        for site in facts.calls:
            for arg in site.node.args:
                if type(arg.value) is not cst.Name:
                    continue
                function = facts.function_at(arg.value.value, site.order)
                if function is None or facts.is_param(arg.value.value, site.scope):
                    continue
                add(function, site)
                if site.qualified in ("tensorflow.function", "tensorflow.compat.v1.function"):
                    for binding in facts.bindings_of_value(site.node):
                        if binding.index is None and binding.target != arg.value.value:
                            for call in facts.calls_to(binding.target):
                                add(function, call)
        # `trainer.fit_epoch()` from outside the class.
        methods: dict[str, list[Scope]] = {}
        for info in facts.classes.values():
            for name, defined in info.methods.items():
                methods.setdefault(name, []).append(defined)
        resolver = values(facts)
        for site in facts.calls:
            method = site.method
            if method is None or method not in methods or (site.receiver or "").startswith("self"):
                continue
            func = site.node.func
            if not isinstance(func, cst.Attribute):
                continue  # (a call with a method is one of an attribute: `trainer.fit_epoch()`)
            receiver = resolver.of(func.value, site.scope, site.order)
            classes = {v.cls for v in receiver if v.kind in (Kind.INSTANCE, Kind.MODEL, Kind.LAYER)}
            for scope in methods[method]:
                if scope.class_name in classes:
                    add(scope, site)
        return found

    # ------------------------------------------------------------------ where a point runs
    def outer_loops(self, scope: Scope) -> list[tuple[Span, Scope]]:
        """The loops (with the function each is in) around the calls that run `scope`, transitively."""
        return self._outer_loops(scope, _CALL_LEVELS, set())

    def _outer_loops(self, scope: Scope, levels: int, active: set[int]) -> list[tuple[Span, Scope]]:
        cached = self._outer.get(id(scope))
        if cached is not None:
            return cached
        if scope.is_module or levels <= 0 or id(scope) in active:
            return []
        active.add(id(scope))
        spans = blocks(self.facts)
        out: list[tuple[Span, Scope]] = []
        for site in self.callers(scope):
            for loop in spans.loops_enclosing(site.order):
                if all(loop is not known for known, _ in out):
                    out.append((loop, site.scope))
            for loop, where in self._outer_loops(site.scope, levels - 1, active):
                if all(loop is not known for known, _ in out):
                    out.append((loop, where))
        active.discard(id(scope))
        if levels == _CALL_LEVELS:
            self._outer[id(scope)] = out
        return out

    def loops_around(self, scope: Scope, order: int) -> list[Span]:
        """Every loop the point (`scope`, `order`) runs within."""
        return list(self._around(scope, order)[0])

    def _around(self, scope: Scope, order: int) -> tuple[list[Span], frozenset[int]]:
        # Asked again and again for the same points (every metric use against every epoch loop): once
        # per point, with the ids for membership tests. `outer_loops` is memoised per function, so the
        # answer for a point never changes.
        key = (id(scope), order)
        found = self._points.get(key)
        if found is None:
            inner = blocks(self.facts).loops_enclosing(order)
            around = inner + [loop for loop, _ in self.outer_loops(scope) if all(loop is not i for i in inner)]
            found = self._points[key] = (around, frozenset(id(loop) for loop in around))
        return found

    def runs_within(self, scope: Scope, order: int, loop: Span) -> bool:
        return id(loop) in self._around(scope, order)[1]

    # ------------------------------------------------------------------ steps, batches, epochs
    def step_points(self) -> list[tuple[Scope, int]]:
        """Where training steps run: tape blocks, apply calls and `train_on_batch` calls."""

        def compute() -> list[tuple[Scope, int]]:
            points = [(t.scope, t.order) for t in self.facts.tapes]
            points += [(c.scope, c.order) for c in self.facts.calls if c.method in STEP_METHODS and c.receiver]
            return points

        return self.facts.cached("epochs.step_points", compute)

    def batch_loops(self) -> list[tuple[Span, Scope]]:
        """Loops a training step runs within, with the function each is in."""

        def compute() -> list[tuple[Span, Scope]]:
            spans = blocks(self.facts)
            found: list[tuple[Span, Scope]] = []
            seen: set[int] = set()
            tapes_by_scope: dict[int, list[int]] = {}
            for tape in self.facts.tapes:
                tapes_by_scope.setdefault(id(tape.scope), []).append(tape.order)
            applies = {c.order for c in self.facts.calls if c.method == "apply_gradients"}
            for scope, order in self.step_points():
                enclosing = spans.loops_enclosing(order)
                tapes = tapes_by_scope.get(id(scope)) if order in applies else None
                if tapes:
                    # An apply call in a loop that its tape is outside of (`for opt, part in ((o1, a), (o2, b)):
                    # opt.apply_gradients(...)`) applies parts of one step: the loop is no batch loop.
                    enclosing = [loop for loop in enclosing if any(loop.order < t <= loop.end_order for t in tapes)]
                pairs = [(loop, scope) for loop in enclosing] + self.outer_loops(scope)
                for loop, where in pairs:
                    if id(loop) not in seen:
                        seen.add(id(loop))
                        found.append((loop, where))
            return found

        return self.facts.cached("epochs.batch_loops", compute)

    def epoch_loops(self) -> list[Span]:
        """Loops that run another loop that runs training steps: one pass of the body is an epoch
        (or a larger unit, such as one run of a hyper-parameter sweep)."""

        def compute() -> list[Span]:
            batches = self.batch_loops()
            # A batch loop is an epoch loop when another batch loop runs within it: one pass over the
            # loops around each batch loop, not a test of every pair.
            holding: set[int] = set()
            for inner, where in batches:
                holding.update(i for i in self._around(where, inner.order)[1] if i != id(inner))
            found: list[Span] = []
            for outer, _ in batches:
                if id(outer) in holding and all(outer is not f for f in found):
                    found.append(outer)
            return found

        return self.facts.cached("epochs.epoch_loops", compute)


def loops(facts: Facts) -> Loops:
    """The module's loop placement (one per `Facts`)."""
    return facts.cached("epochs.loops", lambda: Loops(facts))


# ---------------------------------------------------------------------- metrics
@dataclass(eq=False)
class MetricUse:
    site: CallSite
    what: str  # "update" | "read" | "reset"
    metrics: frozenset[Value]  # the metric objects it may act on (created in this module)
    unknown: bool  # the receiver may be something the value model cannot read


def _created_metric(value: Value) -> bool:
    return value.kind is Kind.METRIC and isinstance(value.node, cst.Call)


def metric_uses(facts: Facts) -> list[MetricUse]:
    """Updates (`m.update_state(...)`, `m(y, p)`), reads (`m.result()`) and resets (`m.reset_state()`,
    `m.reset_states()`, `model.reset_metrics()`) of metric objects, in document order."""

    def compute() -> list[MetricUse]:
        resolver = values(facts)
        # Names that may hold a metric: called directly (`train_loss(loss)`) only these are resolved.
        metric_names = {c.receiver for c in facts.calls if c.method in _READ_OR_UPDATE and c.receiver}
        for binding in facts.bindings:
            if type(binding.value) is cst.Call and (facts.resolve(binding.value.func) or "").startswith(
                    "keras.metrics."):
                metric_names.add(binding.target)
        found: list[MetricUse] = []
        for site in facts.calls:
            func = site.node.func
            method = site.method
            if method in MODEL_RESETS:
                found.append(MetricUse(site, "reset", frozenset(), True))
                continue
            if method in _METRIC_METHODS and isinstance(func, cst.Attribute):
                what = "update" if method in UPDATE_METHODS else "read" if method in READ_METHODS else "reset"
                receiver = resolver.of(func.value, site.scope, site.order)
            elif site.qualified is None and site.func in metric_names:
                what = "update"
                receiver = resolver.of(func, site.scope, site.order)
                if not any(_created_metric(v) for v in receiver):
                    continue
            else:
                continue
            metrics = frozenset(v for v in flatten(receiver) if _created_metric(v))
            unknown = is_unknown(receiver) or any(v.kind is Kind.METRIC and not _created_metric(v) for v in receiver)
            if metrics or (what == "reset" and unknown):
                found.append(MetricUse(site, what, metrics, unknown))
        return found

    return facts.cached("epochs.metric_uses", compute)


@dataclass(eq=False)
class NeverReset:
    metric: Value
    loop: Span
    update: CallSite
    read: CallSite


def metrics_never_reset(facts: Facts) -> list[NeverReset]:
    """Metrics created outside an epoch loop, updated and read (`result()`) within it, and never reset
    within it: each epoch's `result()` is the running value since the first epoch. A reset whose
    receiver cannot be read counts as a reset (silence when in doubt)."""

    def compute() -> list[NeverReset]:
        placement = loops(facts)
        epochs = placement.epoch_loops()
        if not epochs:
            return []
        uses = metric_uses(facts)
        keyed: dict[int, Value] = {}
        for use in uses:
            for metric in use.metrics:
                keyed.setdefault(metric.key, metric)
        # The uses of each metric, and the resets any metric may see, in document order (once, not per metric).
        by_metric: dict[Value, list[MetricUse]] = {}
        for use in uses:
            for metric in use.metrics:
                by_metric.setdefault(metric, []).append(use)
        resets_of_unknown = [u for u in uses if u.what == "reset" and u.unknown]
        position = {id(u): i for i, u in enumerate(uses)}
        found: list[NeverReset] = []
        for metric in keyed.values():
            created = metric.node
            if not isinstance(created, cst.Call):
                continue  # (never: a use's metrics are those created by a call, _created_metric)
            if any(reachable_from_other_modules(facts, b) for b in facts.bindings_of_value(created)):
                continue  # another module of the project may reset it (tapelint.analysis.closed_world)
            creation = facts.call_site(created)
            mine = by_metric.get(metric, [])
            resets = [u for u in mine if u.what == "reset"]
            if resets_of_unknown:
                merged = {id(u): u for u in (*resets, *resets_of_unknown)}
                resets = sorted(merged.values(), key=lambda u: position[id(u)])
            # Only a loop around one of its updates can qualify (below, no update in it means no finding).
            update_loops = {i for u in mine if u.what == "update"
                            for i in placement._around(u.site.scope, u.site.order)[1]}
            best: NeverReset | None = None
            for loop in epochs:
                if id(loop) not in update_loops:
                    continue
                if creation is not None and placement.runs_within(creation.scope, creation.order, loop):
                    continue  # created anew in every pass
                if any(placement.runs_within(r.site.scope, r.site.order, loop) for r in resets):
                    continue
                updates = [u for u in mine if u.what == "update"
                           and placement.runs_within(u.site.scope, u.site.order, loop)]
                reads = [u for u in mine if u.what == "read"
                         and placement.runs_within(u.site.scope, u.site.order, loop)]
                if not updates or not reads:
                    continue
                if best is None or loop.order > best.loop.order:  # the innermost such loop
                    best = NeverReset(metric, loop, updates[0].site, reads[0].site)
            if best is not None:
                found.append(best)
        found.sort(key=lambda n: n.update.order)
        return found

    return facts.cached("epochs.metrics_never_reset", compute)


# ---------------------------------------------------------------------- datasets
@dataclass(eq=False)
class FreshIterator:
    site: CallSite  # the `next(...)` (or `.get_next()`) call
    dataset: cst.BaseExpression  # what `iter(...)` is given
    loop: Span  # the loop of training steps it runs in


def _builtin(facts: Facts, func: cst.BaseExpression, name: str, order: int) -> bool:
    """`func` is the builtin `name`: not an import, a function of this module or a rebound name."""
    return (isinstance(func, cst.Name) and func.value == name and facts.resolve(func) is None
            and facts.function_at(name, order) is None and not facts.bindings_of(name))


def fresh_iterator_reads(facts: Facts) -> list[FreshIterator]:
    """`next(iter(ds))` (or `iter(ds).get_next()`) on a `tf.data.Dataset`, run within a loop of training
    steps that is not itself an epoch loop: every pass makes a new iterator and reads its first batch.
    A read under an `if` of that loop (a periodic sample) is left out."""

    def compute() -> list[FreshIterator]:
        placement = loops(facts)
        resolver = values(facts)
        spans = blocks(facts)
        epochs = placement.epoch_loops()
        batch_loops = [loop for loop, _ in placement.batch_loops() if all(loop is not e for e in epochs)]
        if not batch_loops:
            return []
        found: list[FreshIterator] = []
        for site in facts.calls:
            call = site.node
            if _builtin(facts, call.func, "next", site.order) and call.args:
                made = call.args[0].value
            elif site.method == "get_next" and not call.args and isinstance(call.func, cst.Attribute):
                made = call.func.value
            else:
                continue
            if not (isinstance(made, cst.Call) and _builtin(facts, made.func, "iter", site.order) and made.args):
                continue
            dataset = made.args[0].value
            kinds = resolver.of(dataset, site.scope, site.order)
            if not kinds or any(v.kind is not Kind.DATASET for v in kinds):
                continue
            around = placement.loops_around(site.scope, site.order)
            loop = next((b for b in reversed(around) if any(b is c for c in batch_loops)), None)
            if loop is None:
                continue
            same_function = any(loop is inner for inner in spans.loops_enclosing(site.order))
            if any(loop.order < g.order or not same_function for g in spans.guards(site.order)):
                continue  # `if step % 100 == 0: sample = next(iter(val_ds))`
            found.append(FreshIterator(site, dataset, loop))
        return found

    return facts.cached("epochs.fresh_iterator_reads", compute)
