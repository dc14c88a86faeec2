"""Runs the user's script in a child process under the probe: time limit, optional memory limit, device
choice, no stray processes. Imports no TensorFlow itself."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Sequence

from tapelint.errors import InputError
from tapelint.probe import processes
from tapelint.probe.report import ProbeResult
from tapelint.probe_settings import run_limit_problem

OUTPUT_TAIL_LINES = 15
MAX_LINE = 300


def _memory_limiter(megabytes: int):  # type: ignore[no-untyped-def]
    def limit() -> None:
        import resource

        # RLIMIT_DATA covers the heap and private writable mappings but not address space that CUDA
        # reserves without touching it, so it works on GPU machines where RLIMIT_AS would break CUDA.
        size = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_DATA, (size, size))

    return limit


class _OutputTail:
    """Reads the child's output as it comes and keeps only its last bytes: a script that prints without end
    costs neither memory nor disk."""

    LIMIT = 64 * 1024

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.data = bytearray()
        self.total = 0
        self.thread = threading.Thread(target=self._pump, name="tapelint-probe-output", daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        while True:
            try:
                chunk = os.read(self.stream.fileno(), 65536)
            except OSError:
                return
            if not chunk:
                return
            self.total += len(chunk)
            self.data += chunk
            if len(self.data) > 2 * self.LIMIT:
                del self.data[: len(self.data) - self.LIMIT]

    def lines(self, wait: float = 2.0) -> list[str]:
        self.thread.join(wait)
        text = bytes(self.data[-self.LIMIT:]).decode("utf-8", "replace")
        lines = [line for line in text.splitlines() if line.strip()][-OUTPUT_TAIL_LINES:]
        return [line if len(line) <= MAX_LINE else line[:MAX_LINE] + f"... ({len(line)} characters)" for line in lines]


class _Terminated(BaseException):
    """SIGTERM or SIGHUP reached tapelint while the probe ran: stop the child, then leave."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _report_status(path: Path) -> str | None:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("status")
    except (OSError, ValueError, AttributeError):
        return None


def _how_it_ended(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name}" + (" (a crash in native code)" if -returncode in (signal.SIGSEGV, signal.SIGBUS,
                                                                                       signal.SIGABRT) else "")
    return f"exited with status {returncode} without returning to the probe (os._exit?)"


# What the C and C++ runtimes print when an allocation fails under RLIMIT_DATA: glibc's strerror(ENOMEM),
# the dynamic loader's mmap failure, OpenBLAS's buffer allocation, C++'s bad_alloc, TensorFlow's OOM.
# What running out of the address space that --memory-limit leaves looks like (only read when a limit is set).
_OUT_OF_MEMORY = ("cannot allocate memory", "failed to map segment", "memory allocation", "bad_alloc",
                  "memoryerror", "out of memory")


def _says_out_of_memory(line: str) -> bool:
    lowered = line.lower()
    return "OOM" in line or any(text in lowered for text in _OUT_OF_MEMORY)


# A script that keeps going after the probe stopped it (it caught the stop) is killed this long after.
STOP_GRACE_S = 3.0
POLL_S = 0.2


# The oldest Python tapelint's probe code runs on (pyproject's requires-python).
MIN_PYTHON = (3, 10)
FUNCTION_MODES = ("graph", "eager")

# Run by the interpreter the probe is asked to use: its version, and whether it has TensorFlow (found, not
# imported: that takes seconds and is the child's job).
_INTERPRETER_CHECK = ("import sys, importlib.util as u; "
                      "print(sys.version_info[0], sys.version_info[1], int(u.find_spec('tensorflow') is not None))")


def check_interpreter(python: str) -> str:
    """The interpreter to run the child with: `python` if it can run the probe. Raises InputError with one line
    saying why not (missing, not runnable, too old, no TensorFlow)."""
    if os.sep not in python and (os.altsep is None or os.altsep not in python):
        import shutil

        found = shutil.which(python)
        if found is None:
            raise InputError(f"--python {python}: no such interpreter on PATH")
        python = found
    if not os.path.exists(python):
        raise InputError(f"--python {python}: no such file")
    try:
        done = subprocess.run([python, "-c", _INTERPRETER_CHECK], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as error:
        raise InputError(f"--python {python}: cannot run it ({getattr(error, 'strerror', None) or error})") from None
    try:
        major, minor, has_tensorflow = (int(part) for part in done.stdout.split())
    except ValueError:
        detail = (done.stderr.strip().splitlines() or ["it printed nothing"])[-1]
        raise InputError(f"--python {python}: not a Python interpreter tapelint can use ({detail})") from None
    if (major, minor) < MIN_PYTHON:
        raise InputError(f"--python {python}: Python {major}.{minor} is too old for the probe (it needs "
                         f"{MIN_PYTHON[0]}.{MIN_PYTHON[1]} or newer)")
    if not has_tensorflow:
        raise InputError(f"--python {python}: that interpreter has no TensorFlow (install tensorflow or "
                         "tensorflow-cpu there)")
    return python


def run_probe(script: str | os.PathLike, args: Sequence[str] = (), *, steps: int = 1, timeout: float = 300.0,
              device: str = "auto", memory_limit_mb: int | None = None, settings: dict[str, Any] | None = None,
              cwd: str | os.PathLike | None = None, python: str | None = None,
              functions: str = "graph", synthetic_data: str | None = None) -> ProbeResult:
    """Run `script` with `args` under the probe and return what it found. Raises InputError for problems
    with the request itself (no such script, no TensorFlow, bad option values).

    `python`: the interpreter to run the script with (the project's own virtualenv); default: this one.
    `functions`: "graph" runs tf.functions traced, as the script runs without the probe; "eager" runs them
    eagerly and traces the last one once more at the end.
    `synthetic_data`: "missing" replaces the data sources and pretrained weights that are not on this machine
    with synthetic ones (tapelint.probe.synthetic), "always" replaces every data source; None: neither."""
    path = Path(script)
    if not path.is_file():
        raise InputError(f"{script}: no such file")
    if steps < 1:
        raise InputError("--steps must be at least 1")
    for key, value in (("timeout", timeout), ("memory-limit", memory_limit_mb)):
        problem = run_limit_problem(key, value)
        if problem:
            raise InputError(f"--{key} {problem}")
    if device not in ("auto", "cpu", "gpu"):
        raise InputError(f"--device must be cpu or gpu, not {device!r}")
    if functions not in FUNCTION_MODES:
        raise InputError(f"--functions must be graph or eager, not {functions!r}")
    if synthetic_data not in (None, "missing", "always"):
        raise InputError(f"--synthetic-data must be missing or always, not {synthetic_data!r}")
    if python is not None:
        interpreter = check_interpreter(python)
    elif importlib.util.find_spec("tensorflow") is None:
        raise InputError("the probe needs TensorFlow in this environment: pip install tensorflow-cpu (or tensorflow), or install "
                         "tapelint with its probe extra; or point --python at an interpreter that has it")
    else:
        interpreter = sys.executable

    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["TF_FORCE_GPU_ALLOW_GROWTH"] = "true"
    env["PYTHONUNBUFFERED"] = "1"
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = "-1"
    # The child imports this very tapelint even when it runs from a source tree or in another interpreter
    # (--python); appended, so that the script's own modules still come first.
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = (env["PYTHONPATH"] + os.pathsep if env.get("PYTHONPATH") else "") + package_root

    options = {"script": str(path), "args": list(args), "steps": steps, "device": device, "functions": functions,
               "synthetic_data": synthetic_data, "parent": os.getpid()}
    started = time.monotonic()
    subreaper = processes.become_subreaper()
    me = os.getpid()
    before = set(processes.children_of(me, processes.table()))
    previous: dict[signal.Signals, Any] = {}

    def terminate(signum: int, frame: Any) -> None:  # noqa: ARG001
        for sig in previous:  # a second signal must not cut the clean-up short
            signal.signal(sig, signal.SIG_IGN)
        raise _Terminated(signum)

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            previous[sig] = signal.signal(sig, terminate)
    stray = 0
    killed_after_stop = False
    processes.sweep_stale_folders()
    folder = processes.ProbeFolder()
    process: subprocess.Popen | None = None

    def stop_everything() -> int:
        """Stop the script's process group, and everything it started outside it (setsid daemons and their
        children, re-parented to us as subreaper). Returns how many of those outside the group were stopped."""
        assert process is not None
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        # The child is among our new children until it is reaped (after that its pid may name another process).
        killed = processes.stop_all(lambda table: [pid for pid in processes.children_of(me, table)
                                                   if pid not in before])
        return sum(1 for proc in killed if proc.group != process.pid and proc.pid != process.pid)

    try:
        report_path = folder.path / "report.json"
        process = subprocess.Popen(
            [interpreter, "-m", "tapelint.probe.child", str(report_path), json.dumps(options)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
            cwd=str(cwd) if cwd is not None else None, start_new_session=True,
            preexec_fn=_memory_limiter(memory_limit_mb) if memory_limit_mb else None,
        )
        timed_out = False
        stopped_since: float | None = None
        try:
            output = _OutputTail(process.stdout)
            while True:
                try:
                    returncode = process.wait(timeout=POLL_S)
                    break
                except subprocess.TimeoutExpired:
                    pass
                now = time.monotonic()
                if now - started > timeout:
                    timed_out = True
                    break
                if stopped_since is None:
                    if _report_status(report_path) == "stopped":
                        stopped_since = now
                elif now - stopped_since > STOP_GRACE_S:
                    killed_after_stop = True  # the script caught the probe's stop and kept going
                    break
            # Whatever the script started goes with it: its process group, then anything that left the group
            # (setsid daemons, their children) and was re-parented to us.
            stray = stop_everything()
            returncode = process.wait()
            if not subreaper:
                stray = 0  # without /proc and a subreaper, what left the group cannot be counted
        except BaseException:
            stop_everything()
            process.wait()
            raise
        tail = output.lines()
        if process.stdout is not None:
            process.stdout.close()
        elapsed = time.monotonic() - started
        payload: dict[str, Any] | None = None
        if report_path.is_file():
            try:
                payload = json.loads(report_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                payload = None
    except _Terminated as stop:
        raise SystemExit(128 + stop.signum) from None
    finally:
        folder.remove()
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    steps_done = ((payload or {}).get("evidence") or {}).get("steps_completed", 0)
    memory_note = ""
    if memory_limit_mb:
        error_text = str(((payload or {}).get("error") or {}).get("message") or "")
        error_type = ((payload or {}).get("error") or {}).get("type")
        hit = (returncode in (-signal.SIGKILL, -signal.SIGSEGV, -signal.SIGABRT)
               or error_type == "MemoryError"
               or any(_says_out_of_memory(line) for line in [*tail, error_text])
               # Before the first step, under a limit, a SystemError is C code whose allocation failed
               # ("error return without exception set", "returned NULL without setting an exception"):
               # seen on a fresh virtualenv importing TensorFlow under 200 MB.
               # No report at all: the child died before TensorFlow finished importing (exit status 127 from
               # the dynamic loader, a signal), which under a limit is the limit.
               or (payload is None and returncode != 0)
               or (not steps_done and (error_type == "SystemError"
                                       or any("SystemError" in line for line in [*tail, error_text]))))
        if hit:
            memory_note = f"the script exceeded the memory limit of {memory_limit_mb} MB"
            if (payload or {}).get("status") == "setup-error":
                # A limit too low to import TensorFlow is the limit's failure, not a broken installation.
                payload = {**(payload or {}), "status": "crashed"}
    if payload is None or (payload.get("status") in ("starting", "running", "finishing", "crashed") and not timed_out):
        if timed_out:
            payload = {"status": "timeout", "error": {"message": f"no training step finished within {timeout:g} s"}}
        else:
            message = memory_note or f"the script's process {_how_it_ended(returncode)}"
            payload = {**(payload or {}), "status": "crashed",
                       "error": {"message": f"{message} after {steps_done} step{'s' if steps_done != 1 else ''}"}}
    elif payload.get("status") == "raised" and memory_note:
        error = payload.get("error") or {}
        kind = error.get("type")
        payload["error"] = {**error, "message": f"{kind}: {memory_note}" if kind else memory_note}
    elif timed_out and payload.get("status") != "stopped":
        payload["status"] = "timeout"
        payload["error"] = {"message": f"the script ran past the {timeout:g} s timeout "
                                       f"({steps_done} step{'s' if steps_done != 1 else ''} finished) and was killed"}
    notes = list(payload.get("notes") or [])
    if killed_after_stop:
        notes.append(f"the script kept running after the probe stopped it (it caught the stop): killed "
                     f"{STOP_GRACE_S:g} s later")
    if stray:
        notes.append(f"stopped {stray} process{'es' if stray != 1 else ''} the script left running outside its "
                     "process group (setsid daemons)")
    payload["notes"] = notes
    payload.setdefault("script", str(path.resolve()))
    return ProbeResult.from_payload(payload, display_script=str(script), settings=settings, steps=steps,
                                    elapsed=elapsed, output_tail=tail)
