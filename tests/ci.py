"""Under CI a test never skips for want of what the machine should have: it fails instead."""

import os

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(reason: str):
    """Skip on a developer's machine; fail under CI."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: a failure, not a skip)")
    pytest.skip(reason)
