"""The shell-completion request click reads from the environment, checked before any command runs."""

from __future__ import annotations

import os

COMPLETE_VAR = "_KUBECTL_SAFETY_COMPLETE"
SHELLS = ("bash", "zsh", "fish")
INSTRUCTIONS = tuple(f"{shell}_{what}" for what in ("source", "complete") for shell in SHELLS)


def instruction_error(value=None):
    """What is wrong with ``_KUBECTL_SAFETY_COMPLETE`` (None when unset, empty or one click answers)."""
    value = os.environ.get(COMPLETE_VAR) if value is None else value
    if not value or value in INSTRUCTIONS:
        return None
    return (f"{COMPLETE_VAR}={value} is not a completion instruction: "
            f"use {', '.join(INSTRUCTIONS[:-1])} or {INSTRUCTIONS[-1]}")
