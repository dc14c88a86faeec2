"""Mixed precision: whether a `mixed_float16` policy holds where a step runs, and how a loop scales its loss.

A global policy is a setting: it holds from the moment the setter runs until another setter runs, in
execution order, not in the order of the text. `policy_at(facts, scope, order)` answers for one point:

- the last setter before the point in the same function (or at module level) decides, and a call before
  the point to a function of this module that sets the policy counts as a setter there (its last setter);
- with none before the point, the function starts with the policy of its callers at their calls (any
  caller under `mixed_float16` is enough), and a function nobody in this file calls (a Keras `train_step`,
  a callback of a library) starts with the policy the module leaves behind at its end;
- a unit-test method (a method of a `TestCase` subclass, `analysis/unit_tests`) starts with what the
  module and the class's `setUp`/`setUpClass` leave behind: another test method's setter (often undone in its
  `finally:` or `tearDown`) does not reach it, since the test runner runs every test on its own;
- a setter whose policy cannot be read (`set_global_policy(previous)`) ends what it can be known to hold.

Comments and strings are never code: only calls the parse sees count. `mixed_bfloat16` needs no loss
scaling and does not count.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.constants import string
from tapelint.analysis.facts import CallSite, Facts, Scope, arg_value
from tapelint.analysis.names import dotted
from tapelint.analysis.values import Kind, last_assignment, values_of

POLICY_SETTERS = frozenset(
    {
        "keras.mixed_precision.set_global_policy", "keras.mixed_precision.experimental.set_policy",
        "keras.mixed_precision.set_policy", "keras.config.set_dtype_policy", "keras.backend.set_floatx",
    }
)
POLICY_CLASSES = frozenset(
    {
        "keras.mixed_precision.Policy", "keras.mixed_precision.experimental.Policy", "keras.DTypePolicy",
        "keras.dtype_policies.DTypePolicy", "keras.mixed_precision.DTypePolicy",
    }
)
SCALE_METHODS = frozenset({"scale_loss", "get_scaled_loss"})
UNSCALE_METHODS = frozenset({"get_unscaled_gradients"})


def _policy_name(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int, depth: int = 0) -> str | None:
    if expr is None or depth > 4:
        return None
    text = string(expr)
    if text is not None:
        return text
    if isinstance(expr, cst.Call) and facts.resolve(expr.func) in POLICY_CLASSES:
        return _policy_name(facts, arg_value(expr, 0, "name"), scope, order, depth + 1)
    name = dotted(expr)
    if name is not None:
        binding = last_assignment(facts, name, scope, order)
        if binding is not None and binding.value is not None and binding.index is None:
            return _policy_name(facts, binding.value, binding.scope, binding.order, depth + 1)
    return None


def float16_policy(facts: Facts) -> CallSite | None:
    """The first call in the file that sets a global `mixed_float16` (or `float16`) policy, if any (wherever
    it runs: `policy_at` says where it holds)."""

    def compute() -> CallSite | None:
        for site in facts.calls:
            if site.qualified in POLICY_SETTERS and _setting(facts, site) is True:
                return site
        return None

    return facts.cached("float16_policy", compute)


def _setting(facts: Facts, site: CallSite) -> bool | None:
    """What a setter call sets: True for `mixed_float16`/`float16`, False for any other policy it names,
    None when the policy cannot be read."""
    name = _policy_name(facts, arg_value(site.node, 0), site.scope, site.order)
    if name is None:
        return None
    return name in FLOAT16_POLICIES


FLOAT16_POLICIES = frozenset({"mixed_float16", "float16"})
# The methods a test runner calls before each test method, and once before the class's tests.
_TEST_SETUP = ("setUpClass", "setUp")
_END = 1 << 60


@dataclass(frozen=True)
class _State:
    """The policy at a point: `on` True (a float16 policy, set by `site`), False (another policy or none),
    None (a setter whose policy cannot be read)."""

    on: bool | None
    site: CallSite | None = None


_OFF = _State(False)


class _Policies:
    def __init__(self, facts: Facts) -> None:
        from tapelint.analysis.unit_tests import in_unit_test

        self.f = facts
        self.in_unit_test = in_unit_test
        self.active: set[tuple[int, int]] = set()
        self.exits: dict[int, _State | None] = {}
        self.events: dict[int, list[tuple[int, CallSite, _State | None]]] = {}

    def events_in(self, scope: Scope) -> list[tuple[int, CallSite, _State | None]]:
        """The setters run directly in `scope`, and the calls in it of functions of this module that leave a
        policy set, in document order: (order, call, the state after it; None for a call that sets nothing)."""
        found = self.events.get(id(scope))
        if found is not None:
            return found
        found = []
        self.events[id(scope)] = found
        for site in self.f.calls:
            if site.scope is not scope:
                continue
            if site.qualified in POLICY_SETTERS:
                setting = _setting(self.f, site)
                found.append((site.order, site, _State(setting, site if setting else None)))
                continue
            for callee in _callees(self.f, site):
                after = self.exit_state(callee)
                if after is not None:
                    found.append((site.order, site, after))
        return found

    def exit_state(self, scope: Scope) -> _State | None:
        """The policy a function leaves set when it returns: its last setter (or call of a setting function),
        None when it sets none."""
        key = id(scope)
        if key in self.exits:
            return self.exits[key]
        self.exits[key] = None  # recursion: a function that calls itself sets nothing more
        events = self.events_in(scope)
        state = events[-1][2] if events else None
        self.exits[key] = state
        return state

    def at(self, scope: Scope, order: int, depth: int = 0) -> _State:
        key = (id(scope), order)
        if key in self.active or depth > 12:
            return _State(None)
        self.active.add(key)
        try:
            return self._at(scope, order, depth)
        finally:
            self.active.discard(key)

    def _at(self, scope: Scope, order: int, depth: int) -> _State:
        before = [e for e in self.events_in(scope) if e[0] < order]
        if before:
            return before[-1][2]  # type: ignore[return-value]
        if scope.is_module:
            return _OFF
        if self._test_method(scope):
            state = self.at(self.f.module_scope, _END, depth + 1)
            cls = self.f.classes.get(scope.class_name or "")
            for name in _TEST_SETUP:
                setup = cls.methods.get(name) if cls is not None else None
                after = self.exit_state(setup) if setup is not None else None
                if after is not None:
                    state = after
            return state
        callers = self.f.call_sites_of_scope(scope)
        if not callers:
            return self.at(self.f.module_scope, _END, depth + 1)
        unknown = None
        for site in callers:
            state = self.at(site.scope, site.order, depth + 1)
            if state.on:
                return state
            if state.on is None:
                unknown = state
        return unknown or _OFF

    def _test_method(self, scope: Scope) -> bool:
        """A method of a `TestCase` subclass that the test runner calls (nothing in this file does)."""
        return (scope.class_name is not None and scope.simple_name not in _TEST_SETUP
                and self.in_unit_test(self.f, scope) and not self.f.call_sites_of_scope(scope))


def _callees(facts: Facts, site: CallSite) -> list[Scope]:
    """The functions of this module a call runs (`helper(...)`, `self.helper(...)`), as the value model
    names its callee."""
    callee = values_of(facts, site.node.func, site.scope, site.order)
    return [v.scope for v in callee if v.kind is Kind.FUNCTION and v.scope is not None]


def policy_at(facts: Facts, scope: Scope, order: int) -> CallSite | None:
    """The setter of the `mixed_float16` (or `float16`) policy that holds at (`scope`, `order`), or None when
    no such policy holds there or it cannot be told."""
    if float16_policy(facts) is None:
        return None
    policies = facts.cached("mixed_precision.policies", lambda: _Policies(facts))
    state = policies.at(scope, order)
    return state.site if state.on else None


@dataclass
class ScalingUse:
    scales: list[CallSite]
    unscales: list[CallSite]


def scaling_in(facts: Facts, scope: Scope) -> ScalingUse:
    """`scale_loss`/`get_scaled_loss` and `get_unscaled_gradients` calls in `scope` and the helpers it calls."""
    scopes = [scope]
    for site in facts.calls:
        if site.scope is scope and site.func in facts.functions:
            target = facts.functions[site.func]
            if target not in scopes:
                scopes.append(target)
        elif site.scope is scope and site.func and site.func.startswith("self.") and scope.class_name:
            cls = facts.classes.get(scope.class_name)
            method = cls.methods.get(site.func[5:]) if cls else None
            if method is not None and method not in scopes:
                scopes.append(method)
    scales = [c for c in facts.calls if c.method in SCALE_METHODS and any(c.scope is s for s in scopes)]
    unscales = [c for c in facts.calls if c.method in UNSCALE_METHODS and any(c.scope is s for s in scopes)]
    return ScalingUse(scales, unscales)
