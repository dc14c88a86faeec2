"""Patches what a custom training loop goes through so that a Recorder sees it: `tf.GradientTape.gradient`,
the optimizers' `apply`, loss `__call__`, and layer/model `__init__` and `__call__` (Keras 3, and tf_keras
when it is installed). `install()` returns a function that undoes every patch.

A `tf.function` runs as a graph, as it does without the probe ("graph" mode). While it is traced, the hooks
collect the values they need (summaries of the gradients computed in the graph, the weights read in the graph)
and hand them over together, in program order, at the step's gradient or at the end of the trace: in the
outermost graph of a function they are written into probe-owned variables (`_Stash`) that the host reads after
the step, in branches and loops they go to one stateful host callback (`tf.py_function`). The gradients the user
gets back depend on that write, so the weights are read before any update that uses them. The Recorder measures
the values after the step, at the latest when the probed steps could be over (`Recorder.defer`). Functions the
probe cannot run as graphs (XLA, `jit_compile=True`), and every function in "eager" mode, run eagerly;
`traced_rerun()` then runs the last such call once more as a graph after the probe stopped, to surface
graph-only errors."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import math
import os
import sys
import time
import weakref
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from tapelint.probe.measure import (DEFER_BYTES, DEFER_SECONDS, Recorder, StopProbe, is_trainable_variable,
                                     is_user_file, user_site)


class _State:
    recorder: Recorder | None = None
    layer_depth = 0
    loss_depth = 0
    apply_depth = 0
    # "graph": tf.functions run traced, measured through host callbacks; "eager": they run eagerly.
    mode = "graph"
    # tf.function name -> "graph" or the reason it ran eagerly, in the order they were first called.
    functions: dict[str, str] = {}
    # The last call of a function that ran eagerly: (function, args, kwargs), for `traced_rerun`.
    last_eager_call: tuple[Any, tuple, dict] | None = None
    # Errors inside the probe's own callbacks (never the user's): reported as notes.
    callback_errors: list[str] = []
    # Generated autograph file -> its source map, to name the user's line in traced code.
    source_maps: dict[str, Any] = {}
    # Per graph being traced (by id, with the graph): the hooks' values not yet handed to a host callback, as
    # (name, tensors, handler) in program order. They go with the next gradient's callback in that graph, or with
    # one callback at the end of the graph's trace: a traced step makes one or two host callbacks, not one per hook.
    pending: dict[int, tuple[Any, list[tuple[str, list[Any], Callable[[list[Any]], None]]]]] = {}
    # Per graph being traced: the handlers the last gradient callback runs after its own, while nothing else is
    # pending in that graph (an optimizer step right after the gradient rides on the gradient's callback).
    tails: dict[int, tuple[Any, list[Callable[[list[Any]], None]]]] = {}
    # The graphs being traced, outermost first (a tf.function's, then its branches' and nested functions').
    tracing: list[Any] = []
    # The stashes of traced steps (see `_Stash`), and how many tf.function calls ran since they were collected.
    stashes: list[Any] = []
    calls_since_collect = 0
    first_uncollected = 0.0
    # The most gradient calls the stashes may hold since they were collected (each call writes at most one row to
    # each stash of the function it ran).
    possible_gradients = 0
    # The tf.functions being called (a trace made during a call belongs to its function).
    calling: list[Any] = []


STATE = _State()


def _watching() -> bool:
    recorder = STATE.recorder
    return recorder is not None and not recorder.stopped


def _now() -> Recorder:
    """The recorder, once the queued work of earlier traced steps has run (what reaches it directly comes after)."""
    recorder = STATE.recorder
    assert recorder is not None
    recorder.drain()
    return recorder


def _recording() -> bool:
    from tensorflow.python.eager import record

    return record.could_possibly_record()


def _tracing() -> bool:
    """Inside a tf.function's trace (or a v1 graph): values are symbolic and arrive later, per step."""
    import tensorflow as tf

    return not tf.executing_eagerly()


# ----------------------------------------------------------------------------------------------------
# Where in the user's code a traced call sits


def _is_generated(filename: str) -> bool:
    return "__autograph_generated_file" in filename


def _autograph_site(filename: str, line: int) -> dict[str, Any] | None:
    """The user's line that autograph compiled into `filename`:`line`, from the converted function's source map."""
    source_map = STATE.source_maps.get(filename)
    if not source_map:
        return None
    for location, origin in source_map.items():
        if location.filename == filename and location.lineno == line:
            text = origin.source_code_line or ""
            return {"path": os.path.abspath(origin.loc.filename), "line": origin.loc.lineno,
                    "end_line": origin.loc.lineno, "column": origin.loc.col_offset,
                    "end_column": len(text.rstrip()) or origin.loc.col_offset,
                    "function": origin.function_name}
    return None


def trace_site(frame: Any) -> dict[str, Any] | None:
    """`user_site`, for a call made while a tf.function is traced: frames in autograph's generated code are
    mapped back to the user's line."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if _is_generated(filename):
            site = _autograph_site(filename, frame.f_lineno)
            if site is not None:
                return site
        elif is_user_file(filename):
            return user_site(frame)
        frame = frame.f_back
    return None


def map_error_frame(frame: dict[str, Any] | None) -> dict[str, Any] | None:
    """An error's user frame (`last_user_frame`) that points into autograph's generated code, mapped back."""
    if frame and _is_generated(frame.get("path") or ""):
        return _autograph_site(frame["path"], frame["line"]) or frame
    return frame


def _site(frame: Any) -> Any:
    """What the Recorder gets as a call's place: the frame itself when eager, its user site when traced (the
    frame is gone by the time the step runs)."""
    return trace_site(frame) if _tracing() else frame


def _convert_wrapper(original: Callable) -> Callable:
    """autograph's `_convert_actual`: remember each generated file's source map."""

    @functools.wraps(original)
    def convert(entity: Any, program_ctx: Any) -> Any:
        converted = original(entity, program_ctx)
        try:
            STATE.source_maps[converted.__code__.co_filename] = converted.ag_source_map
        except AttributeError:
            pass
        return converted

    return convert


# ----------------------------------------------------------------------------------------------------
# Host callbacks for traced steps


class _ProbeStopped(Exception):
    """Raised in a host callback once the probe has its steps: the step's graph stops there, as the eager
    step stops at StopProbe, and the tf.function's caller gets StopProbe (see `_function_call_wrapper`)."""


def _is_symbolic(value: Any) -> bool:
    import tensorflow as tf

    return isinstance(value, (tf.Tensor, tf.IndexedSlices)) and not hasattr(value, "_numpy")


def _deferred(structure: Any) -> tuple[list[Any], Callable[[list[Any]], Any]]:
    """The symbolic tensors in `structure`, and a function that puts their values back in their places."""
    import tensorflow as tf

    flat = tf.nest.flatten(structure, expand_composites=False)
    places = [i for i, value in enumerate(flat) if _is_symbolic(value)]

    def rebuild(values: list[Any]) -> Any:
        out = list(flat)
        for i, value in zip(places, values):
            out[i] = value
        return tf.nest.pack_sequence_as(structure, out, expand_composites=False)

    return [flat[i] for i in places], rebuild


def _callback_device(tensors: list[Any]) -> str | None:
    """Run the callback where the step's values are (a GPU step hands GPU tensors, so the Recorder reads the
    device the step ran on, not the host's)."""
    import tensorflow as tf

    for tensor in tensors:
        device = getattr(tensor, "device", "")
        if device:
            return device
    if tf.config.list_logical_devices("GPU"):
        return "/device:GPU:0"
    return None


def _guarded(body: Callable[[list[Any]], None], values: list[Any], name: str) -> None:
    try:
        body(values)
    except StopProbe:
        raise
    except Exception as error:  # noqa: BLE001 - the probe's own bug must not fail the user's step
        if len(STATE.callback_errors) < 5:
            STATE.callback_errors.append(f"{name}: {type(error).__name__}: {error}".splitlines()[0])


def _nbytes(value: Any) -> int:
    value = getattr(value, "values", value) if hasattr(value, "indices") else value
    try:
        return int(value.shape.num_elements() or 0) * value.dtype.size
    except (AttributeError, TypeError, ValueError):
        return 0


def _host_call(body: Callable[[list[Any]], None], tensors: list[Any], name: str, gradient_calls: int = 0) -> Any:
    """A stateful host callback that hands `body(values)` to the recorder each time the traced step runs (the
    recorder runs it at once or a little later, see `Recorder.defer`; the values are immutable tensors, so keeping
    them is enough). `gradient_calls`: how many `tape.gradient` calls it carries. Returns its output (a scalar) for
    control dependencies."""
    import tensorflow as tf

    # What the queue holds is counted from the static shapes where they are known (most of it: the weights).
    static_bytes, dynamic = 0, []
    for i, tensor in enumerate(tensors):
        size = _nbytes(tensor) if isinstance(tensor, tf.Tensor) and tensor.shape.is_fully_defined() else None
        if size is None:
            dynamic.append(i)
        else:
            static_bytes += size

    def run(*values: Any) -> Any:
        recorder = STATE.recorder
        if recorder is not None and not recorder.stopped:
            nbytes = static_bytes + sum(_nbytes(values[i]) for i in dynamic) if dynamic else static_bytes
            try:
                recorder.defer(functools.partial(_guarded, body, list(values), name), gradient_calls, nbytes)
            except StopProbe:
                raise _ProbeStopped("tapelint probe: the probed steps are done") from None
        elif recorder is not None and recorder.stopped:
            raise _ProbeStopped("tapelint probe: the probed steps are done")
        return True

    device = _callback_device(tensors)
    if device:
        with tf.device(device):
            return tf.py_function(run, tensors, Tout=tf.bool, name=f"tapelint_{name}")
    return tf.py_function(run, tensors, Tout=tf.bool, name=f"tapelint_{name}")


# Rows a stash keeps (steps between two collections), and the most bytes all stashes may hold.
STASH_ROWS = 16
STASH_BYTES = 128 * 2 ** 20
_STASH_DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8")


class _Stash:
    """A host callback's values, kept by the graph instead of handed over: each run of the step writes them into a
    row of probe-owned variables (a ring of `rows`), with a sequence number shared by all stashes. The values are
    flattened into one table per dtype (a row is one write per dtype). The host reads the rows later, in one read per
    table for many steps (`_collect`), and hands them to the callback's body in the order the steps ran. For the
    outermost graph of a tf.function only: it runs once per call, so a call writes at most one row, and the function
    wrapper knows when rows could be overwritten or the probed steps be over."""

    sequence: Any = None  # one counter for all stashes

    def __init__(self, body: Callable[[list[Any]], None], tensors: list[Any], name: str, gradient_calls: int,
                 rows: int) -> None:
        import tensorflow as tf
        from tensorflow.python.ops.resource_variable_ops import ResourceVariable

        self.body, self.name, self.gradient_calls, self.rows = body, name, gradient_calls, rows
        self.read = 0
        # The function whose calls write it (None when traced outside a call: any call may then write it).
        self.function = weakref.ref(STATE.calling[-1]) if STATE.calling else None
        # The graph that writes it (a call runs one of its function's graphs).
        self.graph = weakref.ref(_graph())
        self.row_bytes = sum(_nbytes(t) for t in tensors)

        def variable(initial: Any, name: str) -> Any:
            # The class itself, not tf.Variable: a tf.function allows new tf.Variables on its first trace only, and
            # retraces to check; probe-owned variables must not change how the user's function is traced.
            return ResourceVariable(initial, trainable=False, name=name)

        # Per tensor: (dtype, offset, shape) in its dtype's table; the int64 table starts with the sequence number.
        widths: dict[Any, int] = {tf.int64: 1}
        self.places: list[tuple[Any, int, list[int]]] = []
        for tensor in tensors:
            shape = tensor.shape.as_list()
            size = 1
            for d in shape:
                size *= d
            offset = widths.get(tensor.dtype, 0)
            widths[tensor.dtype] = offset + size
            self.places.append((tensor.dtype, offset, shape))
        with tf.init_scope():
            if _Stash.sequence is None:
                _Stash.sequence = variable(tf.constant(0, tf.int64), "tapelint_sequence")
            self.count = variable(tf.constant(0, tf.int64), "tapelint_count")
            self.tables = {dtype: variable(tf.zeros([rows, width], dtype), "tapelint_stash")
                           for dtype, width in widths.items()}
            # Where the step's values are: a float table sits where TensorFlow puts the model's weights (the GPU).
            self.device = next((t.device for d, t in self.tables.items() if d.is_floating), self.count.device)
        index = tf.reshape(tf.math.floormod(self.count.assign_add(1) - 1, rows), [1])
        parts: dict[Any, list[Any]] = {dtype: [] for dtype in widths}
        parts[tf.int64].append(tf.reshape(_Stash.sequence.assign_add(1), [1]))
        for tensor in tensors:
            parts[tensor.dtype].append(tf.reshape(tensor, [-1]))
        writes = []
        for dtype, table in self.tables.items():
            row = parts[dtype][0] if len(parts[dtype]) == 1 else tf.concat(parts[dtype], axis=0)
            writes.append(table.scatter_update(tf.IndexedSlices(tf.expand_dims(row, 0), index)))
        self.done = tf.group(writes)

    def skip(self) -> None:
        import tensorflow as tf

        with tf.init_scope():
            self.read = int(self.count.numpy())

    def collect(self) -> list[tuple[int, "_Stash", list[Any]]]:
        """The rows written since the last collection, as (sequence, stash, values)."""
        import tensorflow as tf

        count = int(self.count.numpy())
        new = count - self.read
        if new <= 0:
            return []
        if new > self.rows and len(STATE.callback_errors) < 5:
            STATE.callback_errors.append(f"{self.name}: {new - self.rows} steps ran between two reads of the probe's "
                                         "stash and were not measured")
        first = max(self.read, count - self.rows)
        self.read = count
        # Only the new rows (a gather per table), not the whole ring.
        indices = tf.constant([n % self.rows for n in range(first, count)], tf.int64)
        tables = {dtype: table.sparse_read(indices).numpy() for dtype, table in self.tables.items()}
        out = []
        for row in range(count - first):
            values = []
            for dtype, offset, shape in self.places:
                size = 1
                for d in shape:
                    size *= d
                # A view of the gathered rows, which nothing else holds or writes.
                value = tables[dtype][row, offset:offset + size].reshape(shape).view(_Value)
                value.device = self.device
                values.append(value)
            out.append((int(tables[tf.int64][row, 0]), self, values))
        return out


class _Value(np.ndarray):
    """A stashed value, read back: an array that answers `.numpy()` and `.device` as the tensor a host callback gets
    would (the callbacks' bodies take either)."""

    # A TensorFlow tensor's device string; numpy's stubs type ndarray.device as its array API's Literal["cpu"].
    device = ""  # type: ignore[assignment]

    def numpy(self) -> np.ndarray:
        return self.view(np.ndarray)


def _stash_rows(tensors: list[Any]) -> int:
    """How many rows a stash of `tensors` gets; 0 where it cannot be used (values whose shape or type is not fixed
    when traced, or too many bytes)."""
    import tensorflow as tf

    if not STATE.tracing:
        return 0
    size = 0
    for tensor in tensors:
        if not isinstance(tensor, tf.Tensor) or not tensor.shape.is_fully_defined() or \
                tensor.dtype.name not in _STASH_DTYPES:
            return 0
        size += _nbytes(tensor)
    held = sum(stash.rows * stash.row_bytes for stash in STATE.stashes)
    rows = STASH_ROWS
    while rows >= 2 and held + rows * size > STASH_BYTES:
        rows //= 2
    return rows if rows >= 2 else 0


def _collect() -> None:
    """Queue the stashes' new rows in the recorder, in the order the steps wrote them."""
    recorder = STATE.recorder
    if recorder is None or not STATE.stashes:
        return
    if STATE.calls_since_collect == 0 and not STATE.calling and not recorder.finishing:
        # No tf.function call ran or runs since the last collection, so none wrote a row (a concrete function
        # called by itself, which the wrapper does not see, is collected at the end): an eager hook pays no reads.
        return
    STATE.calls_since_collect = 0
    STATE.possible_gradients = 0
    import tensorflow as tf

    rows = []
    with tf.init_scope():  # read eagerly, also when called while a function is traced
        for stash in STATE.stashes:
            rows += stash.collect()
    # A function that is gone writes no more.
    STATE.stashes = [stash for stash in STATE.stashes if stash.function is None or stash.function() is not None]
    rows.sort(key=lambda row: row[0])
    for _, stash, values in rows:
        recorder.queue(functools.partial(_guarded, stash.body, values, stash.name), stash.gradient_calls,
                       sum(v.nbytes for v in values))


def _after_call(recorder: Recorder, function: Any, started: float) -> None:
    """After a tf.function call: collect the stashes before a row could be overwritten, and measure at once when
    this call could hold the step that ends the probe (or the oldest uncollected step is old)."""
    if not STATE.stashes:
        return
    STATE.calls_since_collect += 1
    now = time.monotonic()
    if STATE.calls_since_collect == 1:
        # From the start of the call: a step slower than DEFER_SECONDS is measured right after it.
        STATE.first_uncollected = started
    # A call runs one graph (a trace) of its function, which writes at most one row to each of its stashes: the
    # most gradient calls of one graph is an upper bound of the call's.
    per_graph: dict[int, int] = {}
    for stash in STATE.stashes:
        if stash.function is None or stash.function() is function:
            per_graph[id(stash.graph())] = per_graph.get(id(stash.graph()), 0) + stash.gradient_calls
    STATE.possible_gradients += max(per_graph.values(), default=0)
    oldest = min(STATE.first_uncollected, recorder.queued_since() or now)
    if recorder.gradient_calls_seen() + STATE.possible_gradients > recorder.max_steps or \
            now - oldest > DEFER_SECONDS:
        recorder.drain()
    elif STATE.calls_since_collect >= min(stash.rows for stash in STATE.stashes):
        _collect()
        if recorder.queued_bytes() > DEFER_BYTES:
            recorder.drain()


def _graph() -> Any:
    from tensorflow.python.framework import ops

    return ops.get_default_graph()


def _add_piece(name: str, tensors: list[Any], handler: Callable[[list[Any]], None], graph: Any = None) -> None:
    """Values of a hook in a traced step, handed over with the graph's next callback (see `STATE.pending`)."""
    graph = graph if graph is not None else _graph()
    entry = STATE.pending.get(id(graph))
    if entry is None or entry[0] is not graph:
        entry = STATE.pending[id(graph)] = (graph, [])
    entry[1].append((name, list(tensors), handler))
    STATE.tails.pop(id(graph), None)


def _take_pending(graph: Any) -> list[tuple[str, list[Any], Callable[[list[Any]], None]]]:
    entry = STATE.pending.pop(id(graph), None)
    return entry[1] if entry is not None and entry[0] is graph else []


def _emit(pieces: list[tuple[str, list[Any], Callable[[list[Any]], None]]], gradient_calls: int = 0,
          tail: list[Callable[[list[Any]], None]] | None = None) -> Any:
    """One host callback for `pieces` (in program order), then the handlers of `tail`."""
    tensors: list[Any] = []
    spans: list[tuple[Callable[[list[Any]], None], int, int]] = []
    for _, piece_tensors, handler in pieces:
        spans.append((handler, len(tensors), len(tensors) + len(piece_tensors)))
        tensors += piece_tensors

    def body(values: list[Any]) -> None:
        for handler, start, end in spans:
            handler(values[start:end])
        for handler in tail or ():
            handler([])

    name = "_".join(name for name, _, _ in pieces)
    graph = _graph()
    if STATE.tracing and STATE.tracing[0] is graph:
        rows = _stash_rows(tensors)
        if rows:
            try:
                stash = _Stash(body, tensors, name, gradient_calls, rows)
            except Exception as error:  # noqa: BLE001 - the probe's own failure: hand the values over as before
                if len(STATE.callback_errors) < 5:
                    STATE.callback_errors.append(f"{name}: {type(error).__name__}: {error}".splitlines()[0])
            else:
                STATE.stashes.append(stash)
                return stash.done
    return _host_call(body, tensors, name, gradient_calls)


def _flush_outer(graph: Any) -> None:
    """Before a callback is made in `graph`: what is pending in the graphs around it (a function or branch being
    traced inside another) gets its own callback there, created now, so it runs before this one, as it did."""
    for key, (other, pieces) in list(STATE.pending.items()):
        if other is graph:
            continue
        del STATE.pending[key]
        STATE.tails.pop(key, None)
        if pieces:
            with other.as_default():
                _emit(pieces)


def _trace_end_wrapper(original: Callable) -> Callable:
    """`func_graph_from_py_func`, which traces every tf.function and control-flow branch: queued work of earlier
    steps runs before the trace (its hooks come after it), and what is still pending when the traced body returns
    gets one callback at its end."""

    @functools.wraps(original)
    def func_graph_from_py_func(name: Any, python_func: Callable, *args: Any, **kwargs: Any) -> Any:
        if STATE.recorder is None:
            return original(name, python_func, *args, **kwargs)
        _now()

        def traced(*call_args: Any, **call_kwargs: Any) -> Any:
            graph = _graph()
            STATE.tracing.append(graph)
            try:
                outputs = python_func(*call_args, **call_kwargs)
            except BaseException:
                _take_pending(graph)
                STATE.tails.pop(id(graph), None)
                raise
            else:
                pieces = _take_pending(graph)
                STATE.tails.pop(id(graph), None)
                if pieces and STATE.recorder is not None:
                    _emit(pieces)
            finally:
                if STATE.tracing and STATE.tracing[-1] is graph:
                    STATE.tracing.pop()
            return outputs

        return original(name, traced, *args, **kwargs)

    return func_graph_from_py_func


def _after(done: Any, value: Any) -> Any:
    """`value` (a tensor, IndexedSlices or None), available only once the callback `done` has run."""
    import tensorflow as tf

    if value is None:
        return None
    with tf.control_dependencies([done]):
        if isinstance(value, tf.IndexedSlices):
            return tf.IndexedSlices(tf.identity(value.values), tf.identity(value.indices), value.dense_shape)
        if isinstance(value, tf.Tensor):
            return tf.identity(value)
    return value


# ----------------------------------------------------------------------------------------------------
# The wrappers


def _gradient_wrapper(original: Callable) -> Callable:
    @functools.wraps(original)
    def gradient(self: Any, target: Any, sources: Any, *args: Any, **kwargs: Any) -> Any:
        recorder = STATE.recorder
        if recorder is None:
            return original(self, target, sources, *args, **kwargs)
        import tensorflow as tf

        flat = tf.nest.flatten(sources)
        trainable = [v for v in flat if is_trainable_variable(v)]
        if not trainable:
            return original(self, target, sources, *args, **kwargs)
        if _tracing():
            return _traced_gradient(original, self, target, sources, flat, trainable, sys._getframe(1),
                                    args, kwargs)
        recorder = _now()
        recorder.count_gradient_call()
        recorder.before_gradient(trainable, sys._getframe(1), self)
        result = original(self, target, sources, *args, **kwargs)
        recorder.after_gradient(target, flat, tf.nest.flatten(result, expand_composites=False))
        return result

    return gradient


def _summary_ops(gradient: Any) -> tuple[Any, Any, Any, int, int | None] | None:
    """In the graph: what `Recorder._measure` reads of a dense gradient g, in few ops: sum(g**2) and sum(|g|) in
    float64 (the norm is the root of the first; g is finite exactly when it is finite, as a float32 squared cannot
    overflow a float64; all zero exactly when it is 0), and for a kernel (rank >= 2) the largest |g| of each unit's
    column (last axis), NaN when the column holds one, as numpy's max. Returns (sum of squares, sum of |g|, column
    maxima or None, size, units or None); None for what the host measures whole (IndexedSlices, unknown shapes,
    float64 gradients, whose squares could overflow)."""
    import tensorflow as tf

    if not isinstance(gradient, tf.Tensor) or not gradient.dtype.is_floating or gradient.dtype == tf.float64 \
            or gradient.shape.rank is None:
        return None
    shape = gradient.shape.as_list()
    if any(d is None for d in shape):
        return None
    size = 1
    for d in shape:
        size *= d
    wide = tf.cast(gradient, tf.float64)
    magnitude = tf.abs(wide)
    squares = tf.reduce_sum(tf.square(wide))
    total = tf.reduce_sum(magnitude)
    if len(shape) >= 2 and shape[-1]:
        return squares, total, tf.reduce_max(tf.reshape(magnitude, [-1, shape[-1]]), axis=0), size, shape[-1]
    return squares, total, None, size, None


def _read_value(variable: Any) -> Any:
    """The variable's value, read in the graph where the gradient is taken (so before the update that uses it);
    None when it cannot be read there (the host reads it then)."""
    import tensorflow as tf

    inner = getattr(variable, "_value", None)
    if not (inner is not None and hasattr(inner, "assign") and hasattr(inner, "handle")):
        inner = variable
    try:
        value = inner.read_value() if hasattr(inner, "read_value") else tf.convert_to_tensor(inner)
    except Exception:  # noqa: BLE001 - distributed or unusual variables are read by the host, as before
        return None
    return value if isinstance(value, tf.Tensor) else None


def _traced_gradient(original: Callable, tape: Any, target: Any, sources: Any, flat: list[Any],
                     trainable: list[Any], frame: Any, args: tuple, kwargs: dict) -> Any:
    """The gradient's host callback gets, instead of the gradients and weights themselves where it can: one
    float64 table of per-gradient summaries computed in the graph, the kernels' per-unit masks, and the
    trainable variables' values read in the graph (the host keeps a copy to measure the update)."""
    import tensorflow as tf
    from tensorflow.python.eager import record

    from tapelint.probe.measure import GradientSummary, var_key

    site = trace_site(frame)
    result = original(tape, target, sources, *args, **kwargs)
    gradients = tf.nest.flatten(result, expand_composites=False)
    target_tensors, rebuild_target = _deferred(target)
    with record.stop_recording():
        # Per flat source: ("none",), ("whole", input index) or ("summary", index, size, column offset, units).
        places: list[tuple] = []
        sums: list[Any] = []
        columns: list[Any] = []
        whole: list[Any] = []
        width = 0
        for gradient in gradients:
            summary = _summary_ops(gradient) if gradient is not None else None
            if gradient is None:
                places.append(("none",))
            elif summary is None:
                places.append(("whole", len(whole)))
                whole.append(gradient)
            else:
                squares, total, maxima, size, units = summary
                places.append(("summary", len(sums) // 2, size, width, units))
                sums += [squares, total]
                if maxima is not None:
                    columns.append(maxima)
                    width += units or 0
        reads: list[tuple[int, Any]] = []
        for variable in trainable:
            value = _read_value(variable)
            if value is not None:
                reads.append((var_key(variable), value))
        inputs = list(target_tensors) + whole + [value for _, value in reads]
        if sums:
            inputs.append(tf.stack(sums))
            if columns:
                inputs.append(tf.concat(columns, axis=0) if len(columns) > 1 else columns[0])
    n_target, n_whole, n_reads = len(target_tensors), len(whole), len(reads)

    def body(values: list[Any]) -> None:
        recorder = STATE.recorder
        assert recorder is not None
        at = n_target + n_whole
        read_values = {key: value.numpy() for (key, _), value in zip(reads, values[at:at + n_reads])}
        at += n_reads
        measured: list[Any] = []
        if sums:
            device = values[at].device
            numbers = values[at].numpy().tolist()
            alive = values[at + 1].numpy() > 0 if columns else None
        for place in places:
            if place[0] == "none":
                measured.append(None)
            elif place[0] == "whole":
                measured.append(values[n_target + place[1]])
            else:
                _, index, size, offset, units = place
                squares, total = numbers[2 * index], numbers[2 * index + 1]
                finite = math.isfinite(squares)
                measured.append(GradientSummary(
                    nonfinite=not finite, zero=finite and squares == 0.0, norm=math.sqrt(squares) if squares >= 0
                    else squares, mav=total / size if size else 0.0, size=size,
                    alive=None if units is None or alive is None else alive[offset:offset + units], device=device))
        recorder.before_gradient(trainable, site, tape, read_values)
        recorder.after_gradient(rebuild_target(values[:n_target]), flat, measured, read_values)

    graph = _graph()
    _flush_outer(graph)
    tail: list[Callable[[list[Any]], None]] = []
    done = _emit(_take_pending(graph) + [("gradient", inputs, body)], gradient_calls=1, tail=tail)
    STATE.tails[id(graph)] = (graph, tail)
    routed = [_after(done, g) for g in gradients]
    STATE.recorder.traced_gradients(routed, site)  # type: ignore[union-attr]
    return tf.nest.pack_sequence_as(result, routed, expand_composites=False)


def _record_apply(optimizer: Any, grads: list[Any], variables: list[Any], frame: Any) -> None:
    if not _tracing():
        _now().optimizer_applied(optimizer, grads, variables, frame)
        return
    site = trace_site(frame)
    # Only which gradients are None matters here; the values were measured at `tape.gradient`.
    present = [None if g is None else True for g in grads]

    def body(values: list[Any]) -> None:
        STATE.recorder.optimizer_applied(optimizer, present, variables, site)  # type: ignore[union-attr]

    graph = _graph()
    tail = STATE.tails.get(id(graph))
    if tail is not None and tail[0] is graph:
        # Right after a gradient in the same graph (not in a branch): it runs exactly when that callback has run.
        tail[1].append(body)
    else:
        _add_piece("apply", [], body, graph)


def _apply_wrapper(original: Callable) -> Callable:
    @functools.wraps(original)
    def apply(self: Any, grads: Any, trainable_variables: Any = None, *args: Any, **kwargs: Any) -> Any:
        if STATE.apply_depth or not _watching():
            return original(self, grads, trainable_variables, *args, **kwargs)
        grads = list(grads)
        variables = list(trainable_variables) if trainable_variables is not None else \
            list(getattr(self, "_trainable_variables", []) or [])
        _record_apply(self, grads, variables, sys._getframe(1))
        STATE.apply_depth += 1
        try:
            return original(self, grads, trainable_variables if trainable_variables is None else variables,
                            *args, **kwargs)
        finally:
            STATE.apply_depth -= 1

    return apply


def _apply_gradients_wrapper(original: Callable) -> Callable:
    """For optimizers whose `apply_gradients` does not go through `apply` (tf_keras, legacy)."""

    @functools.wraps(original)
    def apply_gradients(self: Any, grads_and_vars: Any, *args: Any, **kwargs: Any) -> Any:
        if STATE.apply_depth or not _watching():
            return original(self, grads_and_vars, *args, **kwargs)
        pairs = list(grads_and_vars)
        _record_apply(self, [g for g, _ in pairs], [v for _, v in pairs], sys._getframe(1))
        STATE.apply_depth += 1
        try:
            return original(self, pairs, *args, **kwargs)
        finally:
            STATE.apply_depth -= 1

    return apply_gradients


def _init_wrapper(original: Callable, kind: str) -> Callable:
    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        recorder = STATE.recorder
        if recorder is not None:
            recorder.drain()
            where = _site(sys._getframe(1))
            if kind == "layer":
                recorder.layer_created(self, where)
            elif kind == "loss":
                recorder.loss_created(self, where)
            else:
                recorder.optimizer_created(self, where)

    return __init__


def _loss_call_wrapper(original: Callable) -> Callable:
    @functools.wraps(original)
    def __call__(self: Any, y_true: Any, y_pred: Any, *args: Any, **kwargs: Any) -> Any:
        if STATE.loss_depth or not _watching():
            return original(self, y_true, y_pred, *args, **kwargs)
        STATE.loss_depth += 1
        try:
            result = original(self, y_true, y_pred, *args, **kwargs)
        finally:
            STATE.loss_depth -= 1
        if _recording():
            if _tracing():
                _traced_loss(self, y_true, y_pred, result, sys._getframe(1))
            else:
                _now().loss_called(self, y_true, y_pred, result, sys._getframe(1))
        return result

    return __call__


def _traced_loss(loss: Any, y_true: Any, y_pred: Any, result: Any, frame: Any) -> None:
    site = trace_site(frame)
    # Keras marks a softmax's output with its logits; the value the callback gets has to carry the mark too.
    logits_mark = hasattr(y_pred, "_keras_logits")
    tensors, rebuild = _deferred((y_true, y_pred, result))

    def body(values: list[Any]) -> None:
        true, pred, value = rebuild(values)
        if logits_mark and not hasattr(pred, "_keras_logits"):
            try:
                pred._keras_logits = True
            except AttributeError:
                pass
        STATE.recorder.loss_called(loss, true, pred, value, site)  # type: ignore[union-attr]

    _add_piece("loss", tensors, body)


def _layer_call_wrapper(original: Callable) -> Callable:
    @functools.wraps(original)
    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        # Only the outermost call (the model the loop calls) is recorded; the layers inside it pass through.
        if STATE.layer_depth or not _watching():
            return original(self, *args, **kwargs)
        STATE.layer_depth += 1
        try:
            result = original(self, *args, **kwargs)
        finally:
            STATE.layer_depth -= 1
        if _recording():
            _now().outputs_computed(result)
            if _tracing():
                _traced_model_call(self, args, kwargs, sys._getframe(1))
            else:
                _now().model_called(self, args, kwargs, sys._getframe(1))
        return result

    return __call__


def _traced_model_call(layer: Any, args: tuple, kwargs: dict, frame: Any) -> None:
    site = trace_site(frame)
    # Only the inputs are read (their batch, dtype and range); other arguments stay as they were traced.
    inputs = args[0] if args else kwargs.get("inputs", kwargs.get("x"))
    tensors, rebuild = _deferred(inputs)

    def body(values: list[Any]) -> None:
        value = rebuild(values)
        if args:
            call_args, call_kwargs = (value, *args[1:]), kwargs
        else:
            call_args, call_kwargs = args, {**kwargs, ("inputs" if "inputs" in kwargs else "x"): value}
        STATE.recorder.model_called(layer, call_args, call_kwargs, site)  # type: ignore[union-attr]

    _add_piece("model", tensors, body)


def _function_name(function: Any) -> str:
    name = getattr(function, "_name", None) or getattr(getattr(function, "_python_function", None), "__name__", None)
    return str(name or "tf.function")


def _function_call_wrapper(original: Callable) -> Callable:
    """`tf.function`'s `__call__`: decides whether a step runs traced or eagerly, and turns the probe's stop
    inside a traced step into StopProbe for the script."""

    @functools.wraps(original)
    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        recorder = STATE.recorder
        if recorder is None or _tracing():
            return original(self, *args, **kwargs)  # a nested function is inlined into its caller's trace
        if recorder.stopped:
            raise StopProbe()
        import tensorflow as tf

        name = _function_name(self)
        if STATE.mode == "eager":
            STATE.functions.setdefault(name, "eager (--functions eager)")
            STATE.last_eager_call = (self, args, kwargs)
            return original(self, *args, **kwargs)
        if getattr(self, "_jit_compile", False):
            # XLA compiles the whole function and cannot call back into Python: run it eagerly.
            STATE.functions.setdefault(name, "eager (jit_compile=True: XLA cannot call the probe's callbacks)")
            STATE.last_eager_call = (self, args, kwargs)
            was = tf.config.functions_run_eagerly()
            tf.config.run_functions_eagerly(True)
            try:
                return original(self, *args, **kwargs)
            finally:
                tf.config.run_functions_eagerly(was)
        STATE.functions.setdefault(name, "graph")
        STATE.calling.append(self)
        started = time.monotonic()
        try:
            result = original(self, *args, **kwargs)
        except Exception:
            if recorder.stopped:
                raise StopProbe() from None
            raise
        finally:
            STATE.calling.pop()
        _after_call(recorder, self, started)
        if recorder.stopped:
            raise StopProbe()
        return result

    return __call__


def traced_rerun(call: tuple[Any, tuple, dict]) -> tuple[str, BaseException] | None:
    """After the probe stopped and its instrumentation is removed: run `call`, the last call of a function that
    ran eagerly (`STATE.last_eager_call`), once more, traced as it runs without the probe. Returns (function
    name, error) when tracing or running it fails: a graph-only error the eager run could not show (`.numpy()`
    inside a tf.function)."""
    import tensorflow as tf

    function, args, kwargs = call
    tf.config.run_functions_eagerly(False)
    undo = None
    try:
        # Keep the source maps of what autograph converts now, so the error names the user's line.
        from tensorflow.python.autograph.impl import api as autograph_api

        undo = autograph_api._convert_actual
        autograph_api._convert_actual = _convert_wrapper(undo)
    except (ImportError, AttributeError):
        pass
    try:
        function(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - reported as the script's error
        return _function_name(function), error
    finally:
        if undo is not None:
            autograph_api._convert_actual = undo
    return None


def error_line(error: BaseException) -> str:
    """One line for an error. A traced function's errors start with "in user code:" and a traceback; their
    last line says what went wrong."""
    text = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    if len(text) > 1 and text[0].startswith("in user code"):
        last = text[-1]
        return last if last.split(":", 1)[0].endswith(("Error", "Exception")) else f"{type(error).__name__}: {last}"
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def _targets() -> list[tuple[Any, str, Callable[[Callable], Callable]]]:
    import tensorflow as tf

    targets: list[tuple[Any, str, Callable[[Callable], Callable]]] = [
        (tf.GradientTape, "gradient", _gradient_wrapper),
    ]
    try:
        from tensorflow.python.autograph.impl import api as autograph_api
        from tensorflow.python.eager.polymorphic_function.polymorphic_function import Function

        targets += [(Function, "__call__", _function_call_wrapper),
                    (autograph_api, "_convert_actual", _convert_wrapper)]
    except (ImportError, AttributeError):
        pass
    try:
        from tensorflow.python.framework import func_graph as func_graph_module

        targets.append((func_graph_module, "func_graph_from_py_func", _trace_end_wrapper))
    except (ImportError, AttributeError):
        pass
    try:
        from keras.src.layers.layer import Layer
        from keras.src.losses.loss import Loss
        from keras.src.optimizers.base_optimizer import BaseOptimizer

        targets += [
            (BaseOptimizer, "__init__", lambda f: _init_wrapper(f, "optimizer")),
            (BaseOptimizer, "apply", _apply_wrapper),
            (Loss, "__init__", lambda f: _init_wrapper(f, "loss")),
            (Loss, "__call__", _loss_call_wrapper),
            (Layer, "__init__", lambda f: _init_wrapper(f, "layer")),
            (Layer, "__call__", _layer_call_wrapper),
        ]
        for module_name, class_name in (("keras.src.optimizers.loss_scale_optimizer", "LossScaleOptimizer"),
                                        ("keras.src.optimizers.multi_optimizer", "MultiOptimizer")):
            try:
                cls = getattr(importlib.import_module(module_name), class_name)
            except (ImportError, AttributeError):
                continue
            if "apply" in vars(cls):
                targets.append((cls, "apply", _apply_wrapper))
    except ImportError:
        pass
    # Keras 2 through tf_keras, only when the user has it.
    if importlib.util.find_spec("tf_keras") is not None:
        try:
            import tf_keras

            optimizer_classes = [tf_keras.optimizers.Optimizer]
            legacy = getattr(getattr(tf_keras.optimizers, "legacy", None), "Optimizer", None)
            if legacy is not None and legacy not in optimizer_classes:
                optimizer_classes.append(legacy)
            for cls in optimizer_classes:
                targets += [(cls, "__init__", lambda f: _init_wrapper(f, "optimizer")),
                            (cls, "apply_gradients", _apply_gradients_wrapper)]
            targets += [
                (tf_keras.losses.Loss, "__init__", lambda f: _init_wrapper(f, "loss")),
                (tf_keras.losses.Loss, "__call__", _loss_call_wrapper),
                (tf_keras.layers.Layer, "__init__", lambda f: _init_wrapper(f, "layer")),
                (tf_keras.layers.Layer, "__call__", _layer_call_wrapper),
            ]
        except Exception:  # noqa: BLE001 - a broken tf_keras must not stop the probe of a Keras 3 script
            pass
    return targets


def install(recorder: Recorder, mode: str = "graph") -> Callable[[], None]:
    """Patch the classes and route what they see to `recorder`. Returns the undo function. `mode`: "graph"
    runs tf.functions traced, "eager" runs them eagerly (as `tf.config.run_functions_eagerly(True)`)."""
    STATE.recorder = recorder
    STATE.mode = mode
    STATE.functions = {}
    STATE.last_eager_call = None
    STATE.callback_errors = []
    STATE.pending = {}
    STATE.tails = {}
    STATE.tracing = []
    STATE.calling = []
    STATE.calls_since_collect = 0
    STATE.possible_gradients = 0
    # Functions traced under an earlier recorder keep their stashes: this recorder starts from their next rows.
    for stash in STATE.stashes:
        stash.skip()
    recorder.sources.append(_collect)
    undo: list[tuple[Any, str, Any, bool]] = []
    for cls, attr, wrap in _targets():
        own = attr in vars(cls)
        original = getattr(cls, attr, None)
        if original is None:
            continue
        if getattr(original, "__tapelint_wrapped__", False):
            continue
        wrapped = wrap(original)
        wrapped.__tapelint_wrapped__ = True  # type: ignore[attr-defined]
        setattr(cls, attr, wrapped)
        undo.append((cls, attr, original, own))

    def uninstall() -> None:
        recorder.finishing = True
        try:
            recorder.drain()  # the queued steps' work needs the recorder's hooks' state
        except StopProbe:
            pass
        for cls, attr, original, own in reversed(undo):
            if own:
                setattr(cls, attr, original)
            else:
                delattr(cls, attr)
        STATE.recorder = None
        STATE.pending = {}
        STATE.tails = {}
        STATE.tracing = []
        STATE.layer_depth = STATE.loss_depth = STATE.apply_depth = 0

    return uninstall


@contextmanager
def installed(recorder: Recorder, mode: str = "graph") -> Iterator[Recorder]:
    uninstall = install(recorder, mode)
    try:
        yield recorder
    finally:
        uninstall()
