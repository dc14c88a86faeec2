"""Trigger words: what a file's text must contain for a rule to have anything to say about it.

A rule runs on a file only when one of its `triggers` occurs in the file's text (engine.lint_source asks
`Rule.applies_to` before anything is parsed). A trigger is a necessary condition, never a guess: every
finding the rule can report needs that text. Most triggers are plain substrings; where a substring is
too common (library code says `input_shape` everywhere, but only the attribute `x.input_shape` can be
reported), a pattern spells the token as Python allows it to be written, gaps included:
`x . input_shape`, `x.\\` + newline + `input_shape`, or a comment between the tokens inside brackets.

Two word lists decide for a whole file: `mentions_tensorflow` (no rule can concern a file without one of
`TF_WORDS`, which is then not even parsed) and `trains` (only code that trains is analysed with what it
imports from its own project).
"""

from __future__ import annotations

import re

Trigger = str | re.Pattern[str]

# What Python allows between two tokens inside brackets: spaces, newlines, line continuations, comments.
# Each alternative starts with its own character and a comment runs to its line's end, so a text matches
# in one way only (no backtracking blow-up on lines of `#####`).
_GAP_ITEM = r"\s|\\|#[^\n]*(?:\n|\Z)"
GAP = r"(?:" + _GAP_ITEM + r")*"


# A pattern made here -> the word it spells out: a text without that word cannot match, and `in` answers
# that several times faster than a search that starts with a lookbehind or a gap.
_WORDS: dict[re.Pattern[str], str] = {}


def _spelling(pattern: str, word: str) -> re.Pattern[str]:
    compiled = re.compile(pattern)
    _WORDS[compiled] = word
    return compiled


def attribute(name: str) -> re.Pattern[str]:
    """`<something>.name`: the attribute access, not the word in a parameter list or a string."""
    return _spelling(r"\." + GAP + re.escape(name) + r"(?![A-Za-z0-9_])", name)


def call_with_string_first(name: str) -> re.Pattern[str]:
    """`name("...", ...)`: a call whose first argument is a string literal (any prefix, any quotes,
    parenthesised or not)."""
    return _spelling(r"(?<![A-Za-z0-9_])" + re.escape(name) + GAP + r"\((?:" + _GAP_ITEM + r"|\()*[rRbBuUfF]{0,2}['\"]",
                     name)


# Words without which no rule can concern a file: a file that names none of them is not even parsed
# (unless it was named on the command line).
TF_WORDS = ("tensorflow", "keras", "tf_keras")
# Words of code that trains: only such a file is analysed with what it imports from its own project
# (tapelint.project; library modules that merely import each other are linted alone, at no extra cost).
TRAINING_WORDS = ("GradientTape", "apply_gradients", "train_step", ".fit(")


def mentions_tensorflow(source: str) -> bool:
    return any(word in source for word in TF_WORDS)


def trains(source: str) -> bool:
    return any(word in source for word in TRAINING_WORDS)


def occurs(trigger: Trigger, text: str) -> bool:
    if isinstance(trigger, str):
        return trigger in text
    word = _WORDS.get(trigger)
    if word is not None and word not in text:
        return False
    return trigger.search(text) is not None
