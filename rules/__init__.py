"""tapelint's rules, one module per rule (`tlNNN_<name>.py`), installed as `tapelint.rules`."""
