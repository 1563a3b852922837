"""Every thread the tool starts leaves Ctrl-C and SIGTERM to the main thread (cluster/threads.py)."""

import ast
import os
import pathlib
import threading

from kubectl_safety.cluster import threads
from tests.ci import unavailable

PACKAGE = pathlib.Path(__file__).resolve().parents[3] / "kubectl_safety"
STATUS = "/proc/self/task/{}/status"


def blocked_signals(native_id) -> int:
    with open(STATUS.format(native_id)) as f:
        return int(next(line for line in f if line.startswith("SigBlk:")).split()[1], 16)


def test_a_started_thread_blocks_sigint_and_sigterm():
    if not os.path.exists(STATUS.format(threading.get_native_id())):
        unavailable("no /proc: the signal mask cannot be read here")
    seen, release = {}, threading.Event()

    def body():
        seen["mask"] = blocked_signals(threading.get_native_id())
        release.wait(5)

    thread = threads.start(body, "probe")
    release.set()
    thread.join(5)
    assert thread.daemon and thread.name == "probe"
    assert seen["mask"] & (1 << (2 - 1)) and seen["mask"] & (1 << (15 - 1)), hex(seen["mask"])
    assert not blocked_signals(threading.get_native_id()) & (1 << (2 - 1)), "the main thread must still take SIGINT"


def thread_starts(path: pathlib.Path) -> list:
    """``threading.Thread(...)`` / ``threading.Timer(...)`` calls in one module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("Thread", "Timer"):
            found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    return found


def test_no_thread_is_started_past_the_one_that_blocks_interrupts():
    starts = [s for p in sorted(PACKAGE.rglob("*.py")) if p.name != "threads.py" for s in thread_starts(p)]
    assert starts == [], "start threads with kubectl_safety.cluster.threads.start"
