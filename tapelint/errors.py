"""Errors that end a run with exit code 2 and a one-line message."""


class TapelintError(Exception):
    """A problem with the user's input or setup, shown as one line, never as a traceback."""


class ConfigError(TapelintError):
    pass


class InputError(TapelintError):
    pass
