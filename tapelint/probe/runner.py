"""Runs the user's script in a child process under the probe: time limit, optional memory limit, device
choice, no stray processes. Imports no TensorFlow itself."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from tapelint.errors import InputError
from tapelint.probe.report import ProbeResult

OUTPUT_TAIL_LINES = 15


def _memory_limiter(megabytes: int):  # type: ignore[no-untyped-def]
    def limit() -> None:
        import resource

        # RLIMIT_DATA covers the heap and private writable mappings but not address space that CUDA
        # reserves without touching it, so it works on GPU machines where RLIMIT_AS would break CUDA.
        size = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_DATA, (size, size))

    return limit


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _tail(path: Path) -> list[str]:
    try:
        data = path.read_bytes()[-20000:].decode("utf-8", "replace")
    except OSError:
        return []
    lines = [line for line in data.splitlines() if line.strip()]
    return lines[-OUTPUT_TAIL_LINES:]


def run_probe(script: str | os.PathLike, args: Sequence[str] = (), *, steps: int = 1, timeout: float = 300.0,
              device: str = "auto", memory_limit_mb: int | None = None, settings: dict[str, Any] | None = None,
              cwd: str | os.PathLike | None = None) -> ProbeResult:
    """Run `script` with `args` under the probe and return what it found. Raises InputError for problems
    with the request itself (no such script, no TensorFlow, bad option values)."""
    path = Path(script)
    if not path.is_file():
        raise InputError(f"{script}: no such file")
    if steps < 1:
        raise InputError("--steps must be at least 1")
    if timeout <= 0:
        raise InputError("--timeout must be positive")
    if device not in ("auto", "cpu", "gpu"):
        raise InputError(f"--device must be cpu or gpu, not {device!r}")
    if memory_limit_mb is not None and memory_limit_mb <= 0:
        raise InputError("--memory-limit must be a positive number of megabytes")
    if importlib.util.find_spec("tensorflow") is None:
        raise InputError("the probe needs TensorFlow in this environment: pip install 'tapelint[probe]'")

    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["TF_FORCE_GPU_ALLOW_GROWTH"] = "true"
    env["PYTHONUNBUFFERED"] = "1"
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = "-1"
    # The child imports this very tapelint even when it runs from a source tree; appended, so that the
    # script's own modules still come first.
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = (env["PYTHONPATH"] + os.pathsep if env.get("PYTHONPATH") else "") + package_root

    options = {"script": str(path), "args": list(args), "steps": steps, "device": device}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tapelint-probe-") as folder:
        report_path = Path(folder) / "report.json"
        output_path = Path(folder) / "output.log"
        with open(output_path, "wb") as output:
            process = subprocess.Popen(
                [sys.executable, "-m", "tapelint.probe.child", str(report_path), json.dumps(options)],
                stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, env=env,
                cwd=str(cwd) if cwd is not None else None, start_new_session=True,
                preexec_fn=_memory_limiter(memory_limit_mb) if memory_limit_mb else None,
            )
            timed_out = False
            try:
                returncode = process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(process)
                returncode = process.wait()
            except BaseException:
                _kill_group(process)
                process.wait()
                raise
            # Whatever the script started (data loader workers, servers) goes with it.
            _kill_group(process)
        elapsed = time.monotonic() - started
        tail = _tail(output_path)
        payload: dict[str, Any] | None = None
        if report_path.is_file():
            try:
                payload = json.loads(report_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                payload = None

    if payload is None:
        if timed_out:
            payload = {"status": "timeout", "error": {"message": f"no training step finished within {timeout:g} s"}}
        else:
            reason = f"killed by signal {-returncode}" if returncode < 0 else f"exit status {returncode}"
            hint = " (the --memory-limit?)" if memory_limit_mb and returncode != 0 else ""
            payload = {"status": "crashed", "error": {"message": f"the probe's child process died: {reason}{hint}"}}
    elif timed_out:
        if payload.get("status") == "stopped":
            # The probe had its steps; the script swallowed the stop and kept going.
            pass
        else:
            steps_done = (payload.get("evidence") or {}).get("steps_completed", 0)
            payload["status"] = "timeout"
            payload["error"] = {"message": f"the script ran past the {timeout:g} s timeout "
                                           f"({steps_done} step{'s' if steps_done != 1 else ''} finished) and was killed"}
    payload.setdefault("script", str(path.resolve()))
    return ProbeResult.from_payload(payload, display_script=str(script), settings=settings, steps=steps,
                                    elapsed=elapsed, output_tail=tail)
