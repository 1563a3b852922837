"""Daemon threads that leave SIGINT and SIGTERM to the main thread.

The kernel gives a process-directed signal to any thread not blocking it; taken by a helper thread
blocked in a socket read, a Ctrl-C would not interrupt the main thread's own blocking read (a
confirmation prompt), which then kept waiting. Every thread the tool starts is started here.
"""

import signal
import threading

_INTERRUPTS = {signal.SIGINT, signal.SIGTERM}


def start(target, name: str) -> threading.Thread:
    """Start ``target()`` on a daemon thread named ``name`` that blocks SIGINT and SIGTERM."""

    def run():
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPTS)
        target()

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread
