"""A warm process for short `tapelint FILE` runs: `tapelint daemon start|stop|status`.

A plain check of one changed file (what pre-commit runs on a commit) spends most of its time starting:
importing libcst's node classes and the rules costs several times the lint itself. The daemon is a
process that has imported all of that once and waits on a Unix socket. A `tapelint` command line that
the console script runs itself (a plain check: `tapelint [check] [flags] FILE...`) first looks for a
daemon; when one is running, the command runs in a fresh fork of it:

- the client sends its command line, working directory, environment and umask, and hands over its
  standard input, output and error (SCM_RIGHTS), so the fork prints straight to the user's terminal or
  pipe, reads `-` from the user's stdin, and sees a terminal where there is one (colour, progress);
- the fork runs exactly what the console script would have run (`tapelint.launch.main`), and sends
  back the exit status;
- each command gets its own fork: nothing one run reads (configuration, the cache, the project's modules)
  is kept for the next, so a run through the daemon gives what a run without it gives;
- Ctrl-C in the client is passed on to the fork's process group.

The fork is usually made ahead of time: while no check runs, the daemon keeps one spare fork that has
warmed up on a sample program (see `tapelint.daemon_server._Spare`), and hands it the next check. Before
it makes that fork, it parses the files the last checks named (`tapelint.incremental.parse_ahead`), so a
check of a file edited since reparses only the statements the edit changed.

When no daemon runs, when its socket is stale, when tapelint's own code changed since it started (it
then exits), or with `TAPELINT_NO_DAEMON` set, the command runs in the client's own process as usual;
with `--daemon auto` (or `TAPELINT_DAEMON=auto`) such a command also starts a daemon in the background for
the next one; `--daemon off` never uses one.
The socket lives in a directory only the user can enter (`$XDG_RUNTIME_DIR/tapelint`, else
`<tmp>/tapelint-<uid>`), one per Python environment and tapelint installation; the daemon also checks
that the peer is the same user where the system says (SO_PEERCRED). It exits after an hour without a
command (`--idle-timeout`). POSIX only: elsewhere every command runs in its own process.

This module is the client, and `start`/`stop`/`status`; its top level imports only light modules of the
standard library, since the client runs before anything heavy is loaded. The daemon's own loop is
`tapelint.daemon_server`, which sits above the command layer it runs.
"""

from __future__ import annotations

import _socket
import binascii
import os
import stat
import sys

IDLE_TIMEOUT = 3600.0  # seconds without a command, then the daemon exits
MAX_MESSAGE = 1 << 20
PROTOCOL = 2  # in the socket's name: a client never talks to a daemon that speaks another protocol
# Strings, not pathlib: the client side runs on every start, and importing pathlib costs 10 ms of it.
_PACKAGE = os.path.dirname(os.path.realpath(__file__))
_RULES = os.path.join(os.path.dirname(_PACKAGE), "rules")


_IN_FORK = False  # set in a fork of the daemon: its command must run there, not in the daemon again


class DaemonError(Exception):
    """Why the daemon cannot be started, reached or stopped (one line)."""


def supported() -> bool:
    return os.name == "posix" and hasattr(_socket, "AF_UNIX") and hasattr(_socket, "SCM_RIGHTS") \
        and hasattr(_socket.socket, "sendmsg")


def socket_dir() -> str:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        return os.path.join(runtime, "tapelint")
    temporary = os.environ.get("TMPDIR")  # what tempfile would pick first, without importing it
    return os.path.join(temporary if temporary and os.path.isabs(temporary) else "/tmp", f"tapelint-{os.getuid()}")


def socket_path() -> str:
    """One daemon per environment (sys.prefix: a virtualenv) and installation of tapelint."""
    who = f"{sys.prefix}\0{_PACKAGE}".encode()
    name = f"{binascii.crc32(who):08x}{binascii.crc32(who[::-1]):08x}-{PROTOCOL}.sock"
    return os.path.join(socket_dir(), name)


def _private(folder: str) -> bool:
    """The folder is a real directory of this user that nobody else can enter or write."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def code_stamp() -> str:
    """What the daemon's imported code is: tapelint's version, the interpreter, and the size and time of
    every module of tapelint and its rules. A daemon whose stamp differs from the client's is stale."""
    from tapelint import __version__

    parts = [__version__, sys.version, sys.prefix]
    folders = [_RULES, _PACKAGE]
    while folders:
        folder = folders.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(".py"):
                try:
                    info = entry.stat()
                except OSError:
                    continue
                parts.append(f"{entry.path}:{info.st_size}:{info.st_mtime_ns}")
            elif entry.is_dir(follow_symlinks=False) and not entry.name.startswith(("_", ".")):
                folders.append(entry.path)
    return "\n".join(parts)


# --- messages ---------------------------------------------------------------------------------------------
# A message is a list of byte strings, sent as b"<length>\n" and the strings joined by NUL: POSIX paths,
# arguments and environment entries never hold a NUL, so nothing needs escaping. (Not JSON: json and
# socket cost 20-30 ms of imports, which the client would pay on every check. The client uses the C
# module under `socket`, `_socket`, for the same reason.)

def pack(fields: list[bytes]) -> bytes:
    if any(b"\0" in field for field in fields):
        raise ValueError("a daemon message cannot hold a NUL byte")
    body = b"\0".join(fields)
    return b"%d\n" % len(body) + body


class Reader:
    """Reads whole messages from a stream socket; None when the other end closed or sent garbage."""

    def __init__(self, sock, data: bytes = b"") -> None:  # type: ignore[no-untyped-def]
        self.sock = sock
        self.buffer = data

    def _fill(self) -> bool:
        chunk = self.sock.recv(65536)
        if not chunk:
            return False
        self.buffer += chunk
        return True

    def read(self) -> list[bytes] | None:
        while b"\n" not in self.buffer:
            if len(self.buffer) > 20 or not self._fill():
                return None
        head, _, rest = self.buffer.partition(b"\n")
        if not head.isdigit() or int(head) > MAX_MESSAGE:
            return None
        size = int(head)
        self.buffer = rest
        while len(self.buffer) < size:
            if not self._fill():
                return None
        body, self.buffer = self.buffer[:size], self.buffer[size:]
        return body.split(b"\0")


def send(sock, *fields: bytes | str | int) -> None:  # type: ignore[no-untyped-def]
    sock.sendall(pack([_bytes(field) for field in fields]))


def _bytes(field: bytes | str | int) -> bytes:
    if isinstance(field, bytes):
        return field
    return os.fsencode(field) if isinstance(field, str) else b"%d" % field


def _connect(path: str, timeout: float | None = 10.0):  # type: ignore[no-untyped-def]
    if not _private(os.path.dirname(path)):
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    return sock


# --- the client ------------------------------------------------------------------------------------------

def run_in_daemon(argv: list[str], mode: str = "use") -> int | None:
    """Run `tapelint *argv` in a running daemon: its exit status, or None when no usable daemon answers
    (the caller then runs the command itself). Nothing has been printed when this returns None.
    `mode` is the check's `--daemon`: use, auto (also start one for the next check) or off."""
    if _IN_FORK or mode == "off" or os.environ.get("TAPELINT_NO_DAEMON") or not supported():
        return None
    auto = mode == "auto" or os.environ.get("TAPELINT_DAEMON") == "auto"
    path = socket_path()
    if not os.path.exists(path):  # the common case without a daemon: one stat
        _start_for_next_time(auto)
        return None
    try:
        cwd = os.getcwdb()
    except OSError:
        return None  # a folder removed under the shell: the command itself says what is wrong
    sock = _connect(path)
    if sock is None:
        _start_for_next_time(auto)
        return None
    reader = Reader(sock)
    try:
        return _run_through(sock, reader, argv, cwd, auto)
    except KeyboardInterrupt:
        # Before the fork's first message was read: closing the socket stops a fork that has not sent
        # it yet (sending fails); one that has is interrupted like any other.
        try:
            sock.setblocking(False)
            started = reader.read()
            if started and started[0] == b"pid":
                os.killpg(int(started[1]), 2)
        except (OSError, ValueError, IndexError):
            pass
        from tapelint.errors import EXIT_INTERRUPTED, say_interrupted

        say_interrupted()
        return EXIT_INTERRUPTED
    finally:
        sock.close()


def run_request(argv: list[str], cwd: bytes) -> list[bytes]:
    """The fields of a run request: what the fork needs to become this command (see daemon_server)."""
    umask = os.umask(0)
    os.umask(umask)
    streams = []
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        streams += [_bytes(getattr(stream, "encoding", None) or ""), _bytes(getattr(stream, "errors", None) or "")]
    return [b"run", _bytes(code_stamp()), cwd, b"%d" % umask, *streams, b"%d" % len(argv),
            *(os.fsencode(part) for part in argv), *(key + b"=" + value for key, value in os.environb.items())]


def _run_through(sock, reader: Reader, argv: list[str], cwd: bytes, auto: bool) -> int | None:  # type: ignore[no-untyped-def]
    fds = (0, 1, 2)
    try:
        message = pack(run_request(argv, cwd))
    except ValueError:
        return None
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        ancillary = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)  # C ints
        sent = sock.sendmsg([message], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, ancillary)])
        if sent < len(message):
            sock.sendall(message[sent:])
        # The fork's first message is its pid, sent before it does anything. Without it (a stale daemon
        # says so and exits; a hung one times out) the command runs here; a fork that answers later
        # finds the socket closed and stops without running it.
        started = reader.read()
    except OSError:
        return None
    if not started or started[0] != b"pid" or len(started) != 2 or not started[1].isdigit():
        _start_for_next_time(auto)  # a stale daemon exits: a new one loads the new code
        return None
    pid = int(started[1])
    sock.settimeout(None)
    while True:
        try:
            done = reader.read()
            break
        except KeyboardInterrupt:
            # The fork runs in its own process group, out of the terminal's reach: pass Ctrl-C on.
            try:
                os.killpg(pid, 2)
            except OSError:
                pass
        except OSError:
            done = None
            break
    if not done or done[0] != b"exit" or len(done) != 2 or not done[1].lstrip(b"-").isdigit():
        print("tapelint: error: the daemon's run ended without an exit status; "
              "run again with TAPELINT_NO_DAEMON=1", file=sys.stderr)
        return 2
    return int(done[1])


# --- start, stop, status ---------------------------------------------------------------------------------

def _start_for_next_time(auto: bool) -> None:
    """With `--daemon auto` (or TAPELINT_DAEMON=auto), a check that finds no daemon starts one in the
    background and runs itself as usual; the next check runs in it. (Two at once: the second gives way.)"""
    if not auto:
        return
    try:
        _launch(socket_path(), IDLE_TIMEOUT, quiet=True)
    except (OSError, DaemonError):
        pass  # a convenience: never a reason for the check to fail


def _launch(path: str, idle_timeout: float, quiet: bool = False):  # type: ignore[no-untyped-def]
    _prepare_dir()
    import subprocess

    # In the root folder: `-m` puts the working folder first on sys.path, where a folder named `tapelint`
    # (a checkout of tapelint, say) would shadow the installed package; and a daemon should not keep the
    # folder it was started from busy. Each check runs in the client's own folder.
    return subprocess.Popen(
        [sys.executable, "-m", "tapelint.daemon_server", path, str(idle_timeout)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL if quiet else subprocess.PIPE,
        start_new_session=True, close_fds=True, cwd=os.path.abspath(os.sep),
    )


def _ask(op: str) -> list[bytes] | None:
    if not supported():
        return None  # no daemon can run here: none is running
    path = socket_path()
    if not os.path.exists(path):
        return None
    sock = _connect(path)
    if sock is None:
        return None
    try:
        send(sock, op)
        return Reader(sock).read()
    except OSError:
        return None
    finally:
        sock.close()


def status() -> dict | None:
    """The running daemon's {"pid", "served": checks run, "stamp": its code_stamp, "warm": checks run by a
    warmed-up fork, "spare": the pid of the one waiting now, or 0, "parsed": files it holds parses of}, or
    None."""
    answer = _ask("status")
    if not answer or answer[0] != b"status" or len(answer) != 7 \
            or not all(field.isdigit() for field in (answer[1], answer[2], *answer[4:])):
        return None
    return {"pid": int(answer[1]), "served": int(answer[2]), "stamp": os.fsdecode(answer[3]),
            "warm": int(answer[4]), "spare": int(answer[5]), "parsed": int(answer[6])}


def _prepare_dir() -> str:
    folder = socket_dir()
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as error:
        raise DaemonError(f"cannot make the daemon's directory {folder} ({error.strerror or error})") from None
    if not _private(folder):
        raise DaemonError(f"{folder} is not a private directory of this user (mode 700); not starting")
    return folder


def start(idle_timeout: float = IDLE_TIMEOUT) -> tuple[int, bool]:
    """Start the daemon in the background unless one runs: (its pid, whether it was started now)."""
    if not supported():
        raise DaemonError("the daemon needs a POSIX system (Unix sockets that pass file descriptors)")
    running = status()
    if running is not None and running.get("stamp") == code_stamp():
        return int(running["pid"]), False
    if running is not None:
        stop()
    import time

    process = _launch(socket_path(), idle_timeout)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        answer = status()
        if answer is not None and int(answer.get("pid", -1)) == process.pid:
            if process.stderr is not None:
                process.stderr.close()
            return process.pid, True
        if process.poll() == 0:
            # It gave way to a daemon started at the same moment: that one answers soon.
            if answer is not None and answer.get("stamp") == code_stamp():
                return int(answer["pid"]), False
        elif process.poll() is not None:
            reason = (process.stderr.read().decode(errors="replace").strip().splitlines() or ["no reason given"])[-1] \
                if process.stderr is not None else "no reason given"
            raise DaemonError(f"the daemon stopped at start: {reason}")
        time.sleep(0.05)
    process.kill()
    raise DaemonError("the daemon did not answer within 60 s")


def stop() -> int | None:
    """Stop the running daemon: its pid, or None when none was running."""
    answer = _ask("stop")
    if not answer or answer[0] != b"stopping" or len(answer) != 2 or not answer[1].isdigit():
        return None
    pid = int(answer[1])
    import time

    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and os.path.exists(socket_path()):
        time.sleep(0.02)
    return pid
