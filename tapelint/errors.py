"""Errors that end a run with exit code 2 and a one-line message, and how the command line says them."""

import sys

EXIT_ERROR = 2
EXIT_INTERRUPTED = 130  # as shells report SIGINT


class TapelintError(Exception):
    """A problem with the user's input or setup, shown as one line, never as a traceback."""


class ConfigError(TapelintError):
    pass


class InputError(TapelintError):
    pass


def say_error(message: str) -> None:
    """One `tapelint: error:` line; the file names in it may hold control characters (escaped here)."""
    from tapelint.escape import printable

    print(f"tapelint: error: {printable(message)}", file=sys.stderr, flush=True)


def say_internal_error(error: BaseException) -> None:
    """A bug in tapelint: one line that asks for a report, never a traceback at users."""
    detail = f"{type(error).__name__}: {error}".splitlines()[0]
    print(f"tapelint: internal error: {detail} (please report it)", file=sys.stderr, flush=True)


def say_interrupted() -> None:
    print("tapelint: interrupted", file=sys.stderr, flush=True)
