"""The probe's child process: installs the instrumentation, runs the user's script as `__main__`, stops
it after the probed steps, and writes the evidence as JSON for the parent (`runner.py`).

Usage (by the runner only): python -m tapelint.probe.child REPORT_PATH OPTIONS_JSON
"""

from __future__ import annotations

import json
import os
import runpy
import signal
import sys
import threading
import time
from typing import Any, Callable, NoReturn

# How often the watchdog looks whether the probe (our parent) is still there.
WATCHDOG_S = 0.5
# How long a parent-death signal waits for the parent to be seen gone before it is taken for an ordinary SIGTERM.
PARENT_EXIT_S = 2.0
# The real one: the script's `os._exit` is hooked while it runs (see `_hook_os_exit`).
_exit = os._exit


def _write(path: str, payload: dict[str, Any]) -> None:
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(payload, handle, default=str)
    os.replace(temporary, path)


def _configure_devices(tf: Any, device: str) -> tuple[list[str], str | None]:
    """Memory growth on every GPU (never grab the whole card); honour --device. Returns the GPUs and an error."""
    if device == "cpu":
        try:
            tf.config.set_visible_devices([], "GPU")
        except (RuntimeError, ValueError):
            pass
    gpus = tf.config.list_physical_devices("GPU") if device != "cpu" else []
    names = []
    for gpu in gpus:
        try:
            tf.config.experimental.set_memory_growth(gpu, True)
        except (RuntimeError, ValueError):
            pass
        try:
            details = tf.config.experimental.get_device_details(gpu)
            names.append(f"{gpu.name.replace('/physical_device:', '')} ({details.get('device_name', 'GPU')})")
        except Exception:  # noqa: BLE001
            names.append(gpu.name.replace("/physical_device:", ""))
    if device == "gpu" and not gpus:
        return names, "--device gpu was given, but TensorFlow sees no GPU on this machine"
    return names, None


def _function_name_of(function: Any) -> str:
    from tapelint.probe.instrument import _function_name

    return _function_name(function)


def _function_notes(functions: dict[str, str]) -> list[str]:
    """How the script's tf.functions ran under the probe, one note per way."""
    ways: dict[str, list[str]] = {}
    for name, way in functions.items():
        ways.setdefault(way, []).append(f"`{name}`")
    notes = []
    for way, names in ways.items():
        listed = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        if way == "graph":
            notes.append(f"tf.function {listed} ran as a graph, as without the probe (measured in the graph)")
        else:
            notes.append(f"tf.function {listed} ran eagerly under the probe: {way.split(' ', 1)[1].strip('()')}")
    return notes


_gone_lock = threading.Lock()


def _parent_gone(folder: str) -> None:
    """tapelint died (kill -9, the OOM killer) without stopping us: stop everything the script started, even
    what left our process group, remove the probe's temporary folder, and leave."""
    from tapelint.probe import processes

    if not _gone_lock.acquire(blocking=False):
        return
    me = os.getpid()
    try:
        try:
            processes.stop_all(lambda table: processes.children_of(me, table))
        finally:  # whatever went wrong above, our own process group goes
            if os.path.basename(folder).startswith(processes.FOLDER_PREFIX):
                import shutil

                shutil.rmtree(folder, ignore_errors=True)
            os.killpg(os.getpgrp(), signal.SIGKILL)
    finally:
        _exit(1)


def _guard_parent(parent: int | None, folder: str) -> Callable[[], None]:
    """Die with the probe. Until the script runs, the kernel kills us outright when it goes (PR_SET_PDEATHSIG with
    SIGKILL, Linux): importing TensorFlow holds the interpreter for seconds in native code, where no handler can
    run, and there is nothing of the script's to stop yet. The function returned arms the clean-up, just before
    the script runs: then the parent's death sends SIGTERM, whose handler stops whatever the script started. A
    thread that watches our parent pid is the second line (other systems, a script that replaces our handler). We
    are a subreaper too, so that a setsid daemon of the script stays in our tree."""
    from tapelint.probe import processes

    if parent is None:
        return lambda: None
    processes.become_subreaper()
    processes.die_with_parent(signal.SIGKILL)

    def gone() -> bool:
        return os.getppid() != parent or processes.exited(parent)

    handling: list[bool] = []
    me = os.getpid()

    def on_signal(signum: int, frame: Any) -> None:  # noqa: ARG001
        # The kernel signals when the thread that started us exits: under kill -9 of a multi-threaded tapelint
        # that can come before the rest of it is gone (we then still have its pid as parent), so wait a moment;
        # and again when the thread we were handed to exits: that second signal finds this one running.
        if os.getpid() != me:  # a process the script forked inherited this handler: SIGTERM as without the probe
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        if handling:
            return
        handling.append(True)
        deadline = time.monotonic() + PARENT_EXIT_S
        while time.monotonic() < deadline:
            if gone():
                _parent_gone(folder)
            time.sleep(0.02)
        # Someone else's SIGTERM: what it does without the probe.
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    def watch() -> None:
        since = None
        while True:
            if gone():
                _parent_gone(folder)  # returns at once while the signal handler runs the clean-up
                since = since or time.monotonic()
                if time.monotonic() - since > 4 * PARENT_EXIT_S:  # a clean-up that hangs: leave all the same
                    try:
                        os.killpg(os.getpgrp(), signal.SIGKILL)
                    finally:
                        _exit(1)
            time.sleep(WATCHDOG_S)

    if gone():  # it died before we could ask to be told
        _exit(1)
    size = threading.stack_size()
    try:
        threading.stack_size(256 * 1024)  # under --memory-limit every megabyte of the child's counts
        threading.Thread(target=watch, name="tapelint-probe-watchdog", daemon=True).start()
    finally:
        threading.stack_size(size)

    def arm() -> None:
        signal.signal(signal.SIGTERM, on_signal)
        if processes.die_with_parent(signal.SIGTERM) and gone():
            _parent_gone(folder)

    return arm


def _hook_os_exit(recorder: Any) -> None:
    """A script that calls `os._exit` skips every `finally`: close the step it ran and write the evidence first,
    so that the report has the steps that did run. Only in this process (a forked child of the script exits
    through it too, and must not write our report)."""
    me = os.getpid()

    def hooked(status: int) -> NoReturn:
        if os.getpid() == me and not recorder.stopped:
            try:
                recorder.finish("os._exit")
                recorder.checkpoint()
            except BaseException:  # noqa: BLE001 - the script's exit must happen whatever the probe's state
                pass
        _exit(status)

    os._exit = hooked


def main(argv: list[str]) -> int:
    report_path, options = argv[1], json.loads(argv[2])
    arm_parent_guard = _guard_parent(options.get("parent"), os.path.dirname(os.path.abspath(report_path)))
    script = os.path.abspath(options["script"])
    started = time.monotonic()
    payload: dict[str, Any] = {"status": "starting", "script": script, "error": None, "exit_code": None}

    try:
        import tensorflow as tf
    except (ImportError, MemoryError) as failure:  # MemoryError: a --memory-limit too low for TensorFlow
        payload.update(status="setup-error", error={"message": f"cannot import tensorflow: {type(failure).__name__}: "
                                                               f"{failure}", "type": type(failure).__name__})
        _write(report_path, payload)
        return 0

    from tapelint.probe.instrument import STATE, error_line, install, map_error_frame, traced_rerun
    from tapelint.probe.measure import Recorder, StopProbe, last_user_frame

    gpus, device_error = _configure_devices(tf, options.get("device", "auto"))
    if device_error:
        payload.update(status="setup-error", error={"message": device_error})
        _write(report_path, payload)
        return 0
    # "graph": tf.functions run traced, as without the probe, and hand their values over through host
    # callbacks; "eager": they run eagerly, and the last one is traced once more at the end.
    mode = options.get("functions", "graph")
    if mode == "eager":
        tf.config.run_functions_eagerly(True)

    recorder = Recorder(int(options.get("steps", 1)))
    recorder.gpus = gpus

    def snapshot(status: str) -> dict[str, Any]:
        payload["status"] = status
        payload["evidence"] = recorder.evidence()
        payload["elapsed_s"] = round(time.monotonic() - started, 3)
        return payload

    recorder.checkpoint = lambda: _write(report_path, snapshot("stopped" if recorder.stopped else "running"))
    uninstall = install(recorder, mode)
    synthetic = None
    if options.get("synthetic_data"):  # --synthetic-data: stand-ins for data and weights that are not here
        from tapelint.probe import synthetic as synthetic_sources

        try:
            synthetic = synthetic_sources.install(options["synthetic_data"], tf, script)
        except Exception as failure:  # noqa: BLE001 - a Keras or TensorFlow this module does not know
            payload.update(status="setup-error", error={"message": f"--synthetic-data could not patch this "
                                                                   f"TensorFlow: {type(failure).__name__}: {failure}"})
            _write(report_path, payload)
            return 0
    recorder.checkpoint()  # from here on a timeout is the script's, not TensorFlow's import

    sys.argv = [options["script"], *options.get("args", [])]
    sys.path.insert(0, os.path.dirname(script))
    error: dict[str, Any] | None
    status, error, exit_code = "ended", None, None
    _hook_os_exit(recorder)
    arm_parent_guard()
    try:
        runpy.run_path(script, run_name="__main__")
    except StopProbe:
        status = "stopped"
    except SystemExit as exit_:
        code = exit_.code
        if code is None or code == 0:
            status, exit_code = "ended", 0
        else:
            status, exit_code = "exited", code if isinstance(code, int) else 1
            error = {"message": str(code) if not isinstance(code, int) else "",
                     "frame": last_user_frame(exit_)}
    except KeyboardInterrupt:
        status, error = "raised", {"message": "KeyboardInterrupt"}
    except BaseException as raised:  # noqa: BLE001 - the user's error is reported, never re-raised
        status, error = "raised", {"message": error_line(raised), "type": type(raised).__name__,
                                   "frame": last_user_frame(raised)}
    os._exit = _exit
    if recorder.stopped:
        status, error, exit_code = "stopped", None, None
    try:
        recorder.finish()
    except Exception:  # noqa: BLE001 - a step that cannot be closed is simply left open
        pass
    if error is not None:
        error["frame"] = map_error_frame(error.get("frame"))
    notes = _function_notes(STATE.functions)
    call = STATE.last_eager_call
    callback_errors = list(STATE.callback_errors)
    if status in ("stopped", "ended") and call is not None:
        name = _function_name_of(call[0])
        uninstall()  # the rerun is the script's own step, unmeasured
        # Tracing (and XLA's compiling) takes a while: tell the runner the child is not lingering after a stop.
        _write(report_path, snapshot("finishing"))
        failed = traced_rerun(call)
        if failed is None:
            notes.append(f"ran `{name}` once more as a graph after the probed steps: no graph-only error")
        else:
            caught = failed[1]
            status, exit_code = "raised", None
            error = {"message": f"{error_line(caught)} (when `{name}` runs as a graph, as it does without the probe; "
                                "under the probe it ran eagerly)",
                     "type": type(caught).__name__, "frame": map_error_frame(last_user_frame(caught))}
    if synthetic is not None:
        notes = synthetic.notes() + notes
    elif error is not None and (error.get("type") in ("FileNotFoundError", "NotFoundError", "URLError")
                                or "URL fetch failure" in str(error.get("message"))):  # keras' get_file offline
        notes.append("data or weights the script reads are not here: `tapelint probe --synthetic-data` hands it "
                     "synthetic stand-ins")
    notes += [f"a probe callback failed (the step still ran): {text}" for text in callback_errors]
    payload.update(error=error, exit_code=exit_code, notes=notes)
    _write(report_path, snapshot(status))
    return 0


if __name__ == "__main__":
    code = 1
    try:
        code = main(sys.argv)
    except BaseException as failure:  # noqa: BLE001 - say why in the output tail the parent shows
        print(f"tapelint probe child: {type(failure).__name__}: {failure}".splitlines()[0], file=sys.stderr)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            # Skip interpreter teardown: TensorFlow's and the script's threads can hang it.
            _exit(code)
