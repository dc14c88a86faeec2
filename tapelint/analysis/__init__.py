"""Shared understanding of TensorFlow/Keras code, computed once per file and queried by the rules."""
