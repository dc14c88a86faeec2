"""The daemon's loop: `python -m tapelint.daemon_server SOCKET [IDLE_SECONDS]`, which `tapelint daemon start`
launches in the background (see tapelint.daemon for what it is and how a check reaches it). It sits
above the command layer: each fork runs `tapelint.launch.main`, what the console script runs.
"""

from __future__ import annotations

import array
import os
import socket
import sys
import time

from tapelint import daemon
from tapelint.daemon import IDLE_TIMEOUT, MAX_MESSAGE, Reader, code_stamp, pack, send


# ------------------------------------------------------------------------------------------

def _preload() -> None:
    """Import what a check imports, and warm the engine (engine.warm_up), once, before any fork."""
    import libcst  # noqa: F401

    import tapelint.cache  # noqa: F401
    import tapelint.commands  # noqa: F401
    import tapelint.launch  # noqa: F401
    import tapelint.reporters.terminal  # noqa: F401
    import tapelint.runner  # noqa: F401
    from tapelint.engine import warm_up

    warm_up()


def _peer_is_me(conn: socket.socket) -> bool:
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True  # the private directory is the check
    import struct

    try:
        _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    except OSError:
        return False
    return uid == os.getuid()


def _reap(running: set[int]) -> None:
    """Collect the forks that ended; `running` keeps the checks that have not."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            running.clear()
            return
        if pid == 0:
            return
        running.discard(pid)


# A spare warms up on a program about this many times the engine's sample (about 500 lines): enough that
# the parser's and the analyses' memory is in place for a file of several hundred lines.
SPARE_WARM_UP_COPIES = 20


class _Spare:
    """A fork made ahead of the next check. A fresh fork pays for its first touches of memory: pages it
    shares with the daemon are copied as reference counts change, and the parser's heap grows from
    nothing. That was a fifth of a 300-line check. A spare pays it before any check comes, by linting a
    sample program (in no check's way: it is made only while no check runs), then waits for the daemon to
    hand it a check. It runs that one check and exits, like any fork: nothing it read is kept for the
    next (the sample's lint leaves what the daemon's own warm-up leaves). A spare that is not ready yet
    is passed over: that check gets a fork of its own, as without spares."""

    def __init__(self, pid: int, channel: socket.socket) -> None:
        self.pid = pid
        self.channel = channel
        self.warm = False
        self.gone = False  # it exited before it was handed a check (its warm-up failed)

    @classmethod
    def start(cls, listener: socket.socket) -> "_Spare | None":
        try:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:  # out of processes or memory for now: checks get forks of their own
            ours.close()
            theirs.close()
            return None
        if pid == 0:
            ours.close()
            _wait_as_spare(theirs, listener)  # never returns
        theirs.close()
        return cls(pid, ours)

    def ready(self) -> bool:
        if not self.warm and not self.gone:
            try:
                said = self.channel.recv(1, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return False  # still warming up
            except OSError:
                said = b""
            self.warm, self.gone = said == b"R", said != b"R"
        return self.warm

    def take(self, conn: socket.socket, request: list[bytes], fds: list[int]) -> bool:
        """Hand a check over: the client's connection and descriptors, and its request."""
        if not self.ready():
            return False
        message = pack(request)
        try:
            sent = self.channel.sendmsg([message], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                                     array.array("i", [conn.fileno(), *fds]))])
            if sent < len(message):
                self.channel.sendall(message[sent:])
        except OSError:
            self.warm, self.gone = False, True
            return False  # it died: the check gets a fork of its own
        self.close()
        return True

    def close(self) -> None:
        self.channel.close()  # a spare still waiting reads the end of its channel and exits


def _wait_as_spare(channel: socket.socket, listener: socket.socket) -> None:
    """In a spare: warm up, say so, wait for a check, run it (`_run_forked`); never return."""
    try:
        listener.close()
        _close_daemon_copies()
        from tapelint.engine import warm_up

        warm_up(copies=SPARE_WARM_UP_COPIES)
        channel.sendall(b"R")
        data, fds, _, _ = socket.recv_fds(channel, MAX_MESSAGE, 4)
        if len(fds) != 4:
            os._exit(0)  # the daemon ended (or handed over nothing usable)
        request = Reader(channel, data).read()
        channel.close()
        conn = socket.socket(fileno=fds[0])
    except BaseException:  # noqa: BLE001 - a spare must never fall back into the daemon's loop
        os._exit(0)
    if not _well_formed(request) or request[0] != b"run":  # type: ignore[index]
        os._exit(0)  # cannot happen: the daemon hands over run requests only
    _run_forked(conn, request, fds[1:], None)  # type: ignore[arg-type]


def _run_forked(conn: socket.socket, request: list[bytes], fds: list[int], listener: socket.socket | None) -> None:
    """In the fork: become the client's command (a run request, daemon.run_request), run it, send the exit
    status, and never return."""
    os.setpgid(0, 0)  # before the pid goes out: the client's Ctrl-C reaches this group
    try:
        send(conn, b"pid", os.getpid())
    except OSError:
        os._exit(0)  # the client gave up waiting and runs the command itself: do not run it twice
    code = 2
    try:
        if listener is not None:  # a spare closed both when it was made
            listener.close()
            _close_daemon_copies()  # a long check must not hold the lock after the daemon is gone
        import signal

        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        _, _, cwd, umask, *rest = request
        streams, (count, *rest) = rest[:6], rest[6:]
        argv, environment = [os.fsdecode(part) for part in rest[:int(count)]], rest[int(count):]
        os.chdir(cwd)
        os.environ.clear()
        for entry in environment:
            key, _, value = entry.partition(b"=")
            os.environb[key] = value
        os.umask(int(umask))
        _reopen_streams([os.fsdecode(part) or None for part in streams])
        sys.argv = ["tapelint", *argv]
        daemon._IN_FORK = True  # the command must run here, not be sent to the daemon again
        from tapelint.launch import main

        try:
            main(argv)  # it answers Ctrl-C during the check itself: one line, exit 130
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except KeyboardInterrupt:  # Ctrl-C before or around the check
        code = 130
        try:
            from tapelint.errors import say_interrupted

            say_interrupted()
        except Exception:  # noqa: BLE001 - nowhere left to say it
            pass
    except BaseException as error:  # noqa: BLE001 - a fork must not fall back into the daemon's loop
        code = 2
        try:
            print(f"tapelint: error: the daemon could not run the check ({type(error).__name__}: {error}); "
                  f"run it again with TAPELINT_NO_DAEMON=1", file=sys.stderr)
        except Exception:  # noqa: BLE001 - nowhere left to say it
            pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - the reader may be gone
                pass
        try:
            send(conn, b"exit", code)
        except OSError:
            pass
        os._exit(0)


def _reopen_streams(streams: list[str | None]) -> None:
    """Text streams over the client's descriptors, with the client's encodings and error handlers (the
    request's six fields: encoding and errors of stdin, stdout and stderr; empty: the default)."""
    import io

    defaults = [("utf-8", "strict"), ("utf-8", "strict"), ("utf-8", "backslashreplace")]
    made = []
    for fd, mode in ((0, "rb"), (1, "wb"), (2, "wb")):
        encoding, errors = defaults[fd]
        if 2 * fd + 1 < len(streams):
            encoding = streams[2 * fd] or encoding
            errors = streams[2 * fd + 1] or errors
        raw = open(fd, mode, buffering=0 if fd == 2 else -1, closefd=False)  # noqa: SIM115
        interactive = os.isatty(fd)
        made.append(io.TextIOWrapper(raw, encoding=encoding, errors=errors,
                                     line_buffering=interactive or fd == 2, write_through=fd == 2))
    sys.stdin, sys.stdout, sys.stderr = made


_lock_fd: list[int] = []  # the daemon's lock on its socket's name; a fork closes its copy
# What else only the daemon may hold: its selector, and the connections of other clients whose requests are
# still arriving (a fork that kept one would keep that client from seeing the daemon drop it).
_daemon_fds: set[int] = set()


def _close_daemon_copies() -> None:
    """In a fork: close its copies of the lock and of `_daemon_fds`."""
    for fd in [*_lock_fd, *_daemon_fds]:
        try:
            os.close(fd)
        except OSError:
            pass


def _take_lock(path: str, wait: float = 3.0) -> bool:
    """One daemon per socket: a second one started at the same moment (two pre-commit processes, or a
    `start` while the old daemon is still exiting) waits a little, then gives way."""
    import fcntl
    import time

    fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return False
            time.sleep(0.05)
            continue
        _lock_fd.append(fd)
        return True


# A client has this long to send its whole request once connected; meanwhile the daemon serves the others.
REQUEST_SECONDS = 10.0
# At most this many connections wait for their requests at once; beyond it, the one waiting longest goes.
MAX_INCOMING = 64


class _Incoming:
    """A connection whose request is still arriving. The daemon reads it as it comes (non-blocking), so a
    client that connects and sends nothing, or sends slowly, holds up no other client's check."""

    def __init__(self, conn: socket.socket, now: float) -> None:
        self.conn = conn
        self.deadline = now + REQUEST_SECONDS
        self.data = b""
        self.fds: list[int] = []
        self.request: list[bytes] | None = None
        conn.setblocking(False)
        _daemon_fds.add(conn.fileno())

    def receive(self) -> bool | None:
        """Read what has come: True once the whole request is here, False when it never will be (the
        client closed, or sent garbage or too many descriptors), None to wait for more."""
        try:
            data, fds, _, _ = socket.recv_fds(self.conn, MAX_MESSAGE, 3)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            return False
        self.fds += fds
        _daemon_fds.update(fds)
        if not data or len(self.fds) > 3:
            return False
        self.data += data
        head, newline, rest = self.data.partition(b"\n")
        if not newline:
            return None if len(self.data) <= 20 else False
        if not head.isdigit() or int(head) > MAX_MESSAGE:
            return False
        if len(rest) < int(head):
            return None
        self.request = rest[:int(head)].split(b"\0")
        return True

    def release(self) -> tuple[socket.socket, list[bytes] | None, list[int]]:
        """Stop tracking it: the connection (blocking again, with the time limit a fork's first message had
        before), the request, and the descriptors that came with it, for the caller to close."""
        _daemon_fds.discard(self.conn.fileno())
        _daemon_fds.difference_update(self.fds)
        try:
            self.conn.settimeout(REQUEST_SECONDS)
        except OSError:
            pass
        return self.conn, self.request, self.fds

    def drop(self) -> None:
        conn, _, fds = self.release()
        for fd in fds:
            os.close(fd)
        conn.close()


def serve(path: str, idle_timeout: float = IDLE_TIMEOUT) -> None:
    """The daemon's loop (runs in the background process that `start` launches)."""
    if not _take_lock(path):
        return  # another daemon serves this socket
    _preload()
    stamp = os.fsencode(code_stamp())
    import gc

    gc.collect()
    gc.freeze()  # the forks never walk, and so never copy, what was imported
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    temporary = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}")
    try:
        os.unlink(temporary)
    except FileNotFoundError:
        pass
    listener.bind(temporary)
    listener.listen(16)
    os.replace(temporary, path)  # another daemon's socket, if two started at once, is replaced whole
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 2)  # `start` read errors until now; it stops reading once the socket answers
    os.close(quiet)
    me = os.stat(path).st_ino
    import signal

    def ended(signum, frame):  # type: ignore[no-untyped-def]
        raise SystemExit(0)  # `kill PID`: through the `finally` below, which removes the socket

    signal.signal(signal.SIGTERM, ended)
    served = warm = 0
    running: set[int] = set()  # forks running a check
    spare: _Spare | None = None
    named: list[str] = []  # the files the checks since the last spare named, to parse ahead
    last = time.monotonic()
    import selectors

    listener.setblocking(False)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    _daemon_fds.add(selector.fileno())
    incoming: dict[socket.socket, _Incoming] = {}  # in the order they connected

    def forget(entry: _Incoming) -> None:
        selector.unregister(entry.conn)
        del incoming[entry.conn]

    try:
        while True:
            _reap(running)
            if spare is not None and not spare.ready() and spare.gone:
                spare.close()  # it died before it was handed a check: make another
                spare = None
            if not running and (spare is None or named):
                _parse_ahead(named)  # before the spare is made: it inherits the parses
                named.clear()
                if spare is not None:
                    spare.close()  # made before these parses (its check went to a fork of its own)
                spare = _Spare.start(listener)
            now = time.monotonic()
            for entry in [entry for entry in incoming.values() if entry.deadline <= now]:
                forget(entry)  # it sent no whole request in time
                entry.drop()
            # While a check runs, look every so often for its end, to make the next spare then.
            waited = now - last
            if waited >= idle_timeout:
                return
            timeout = idle_timeout - waited if spare is not None else min(0.1, idle_timeout - waited)
            if incoming:
                timeout = min(timeout, min(entry.deadline for entry in incoming.values()) - now)
            complete: list[_Incoming] = []
            for key, _ in selector.select(max(timeout, 0.0)):
                if key.fileobj is listener:
                    while True:
                        try:
                            conn, _ = listener.accept()
                        except (BlockingIOError, InterruptedError):
                            break
                        except OSError:  # out of descriptors for now: the client waits in the backlog
                            break
                        last = time.monotonic()
                        if not _still_mine(path, me):
                            conn.close()
                            return  # a newer daemon took the socket over
                        if not _peer_is_me(conn):
                            conn.close()
                            continue
                        if len(incoming) >= MAX_INCOMING:
                            oldest = next(iter(incoming.values()))
                            forget(oldest)
                            oldest.drop()
                        incoming[conn] = _Incoming(conn, last)
                        selector.register(conn, selectors.EVENT_READ)
                    continue
                entry = incoming.get(key.fileobj)  # type: ignore[call-overload]
                if entry is None:
                    continue
                outcome = entry.receive()
                if outcome is None:
                    continue
                forget(entry)
                if outcome:
                    complete.append(entry)
                else:
                    entry.drop()
            for entry in complete:
                conn, request, fds = entry.release()
                with conn:
                    _reap(running)
                    if not _well_formed(request):
                        for fd in fds:
                            os.close(fd)
                        continue
                    op = request[0]  # type: ignore[index]
                    if op == b"run" and len(fds) == 3:
                        if request[1] != stamp:  # type: ignore[index]
                            for fd in fds:
                                os.close(fd)
                            _send_quietly(conn, b"stale")
                            return  # tapelint changed under it: the next `start` loads the new code
                        served += 1
                        named.extend(_named_files(request))  # type: ignore[arg-type]
                        if spare is not None and spare.take(conn, request, fds):  # type: ignore[arg-type]
                            running.add(spare.pid)
                            spare = None
                            warm += 1
                        else:
                            try:
                                pid = os.fork()
                            except OSError:
                                pid = -1  # the client reads no pid, and runs the command itself
                            if pid == 0:
                                if spare is not None:
                                    spare.channel.close()  # the spare must see the daemon's end when it goes
                                _run_forked(conn, request, fds, listener)  # type: ignore[arg-type]
                            if pid > 0:
                                running.add(pid)
                        for fd in fds:
                            os.close(fd)
                        continue
                    for fd in fds:
                        os.close(fd)
                    if op == b"status":
                        ready = spare.pid if spare is not None and spare.ready() else 0
                        from tapelint.incremental import ahead

                        _send_quietly(conn, b"status", os.getpid(), served, stamp, warm, ready, len(ahead))
                    elif op == b"stop":
                        _send_quietly(conn, b"stopping", os.getpid())
                        return
    finally:
        for entry in list(incoming.values()):
            entry.drop()
        selector.close()
        if spare is not None:
            spare.close()
        listener.close()
        if _still_mine(path, me):
            try:
                os.unlink(path)
            except OSError:
                pass


# The checks that pre-commit runs on a commit of a few files are what the daemon parses ahead for: a check
# naming more files than this adds none, and one round of parsing stops after this many seconds.
NAMED_AT_MOST = 4
PARSE_AHEAD_SECONDS = 0.25
PARSE_AHEAD_BYTES = 200_000  # a larger file's parse alone (a second for 9,000 lines) would hold it up


def _named_files(request: list[bytes]) -> list[str]:
    """The real paths of the Python files a run request's plain check names (none for other commands)."""
    from tapelint.incremental import MAX_AHEAD
    from tapelint.launch import quick_check_arguments

    count = int(request[10])
    try:
        arguments = quick_check_arguments([os.fsdecode(part) for part in request[11:11 + count]])
    except Exception:  # noqa: BLE001 - the check itself says what is wrong with its command line
        return []
    if arguments is None:
        return []
    paths = arguments["paths"]
    if len(paths) > NAMED_AT_MOST:  # type: ignore[arg-type]
        return []  # a large batch: its own fork's pool parses it; parsing it here would hold up the next check
    cwd = os.fsdecode(request[2])
    found = []
    for name in paths:  # type: ignore[attr-defined]
        if name != "-" and name.endswith(".py"):
            full = os.path.realpath(os.path.join(cwd, name))
            if os.path.isfile(full):
                found.append(full)
    return found[:MAX_AHEAD]


def _parse_ahead(named: list[str]) -> None:
    """Parse, in the daemon, the files recent checks named (and again those parsed before, which may have
    changed since): the next fork inherits the parses, and its check of such a file reparses only the
    statements changed since (tapelint.incremental.parse_ahead). A check's own parse gives the same
    module either way; this only saves time. Files that cannot be read or parsed are left to the check."""
    from pathlib import Path

    from tapelint import incremental
    from tapelint.files import read_text

    deadline = time.monotonic() + PARSE_AHEAD_SECONDS  # a check that comes meanwhile waits for this
    for path in [*incremental.ahead, *named]:
        if time.monotonic() > deadline:
            break
        try:
            if os.path.getsize(path) > PARSE_AHEAD_BYTES:
                incremental.ahead.pop(path, None)
                continue
            incremental.parse_ahead(path, read_text(Path(path)))  # read as a check reads it
        except Exception:  # noqa: BLE001 - never a reason for the daemon to stop
            incremental.ahead.pop(path, None)


def _still_mine(path: str, inode: int) -> bool:
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


def _send_quietly(conn: socket.socket, *fields: bytes | str | int) -> None:
    try:
        send(conn, *fields)
    except OSError:
        pass


def _well_formed(request: list[bytes] | None) -> bool:
    """A status or stop request, or a run request with all its fields (see daemon.run_request)."""
    if not request:
        return False
    if request[0] != b"run":
        return True
    return len(request) >= 11 and request[3].isdigit() and request[10].isdigit() \
        and len(request) >= 11 + int(request[10]) and all(b"=" in entry for entry in request[11 + int(request[10]):])


def main(argv: list[str]) -> None:
    if not argv:
        print("usage: python -m tapelint.daemon_server SOCKET [IDLE_SECONDS]", file=sys.stderr)
        sys.exit(2)
    serve(argv[0], float(argv[1]) if len(argv) > 1 else IDLE_TIMEOUT)


if __name__ == "__main__":
    main(sys.argv[1:])
