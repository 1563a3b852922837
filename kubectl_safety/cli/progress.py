"""Progress on stderr as kubectl writes it (``pod/NAME evicted``, ``node/NAME cordoned``), and a live status line.

On a terminal, status lines (retries, waiting with a countdown) rewrite one line in place, cut to
the terminal's width with the countdown kept; any permanent line, and the report (``render.emit``
calls ``end_live_line``), first ends it. Without a terminal a status line is printed only when its
text (without the countdown) changes.
"""

import sys
import threading
import time

from kubectl_safety.cluster import threads

_STATE = {"live": False, "owner": None, "ticker": None}
_LOCK = threading.RLock()  # the live line is drawn by the command and by the countdown's ticker
TICK_SECONDS = 1.0


def object_line(kind: str, name: str, verb: str) -> str:
    """``pod/web-1 evicted``, ``node/n1 cordoned``, ``node/n1 drained``."""
    return f"{kind}/{name} {verb}"


def countdown(seconds) -> str:
    """``, 4m10s left`` (humanized like every duration we print), or '' without a deadline."""
    if seconds is None:
        return ""
    from kubectl_safety.model.duration import human_duration

    return f", {human_duration(max(0, seconds))} left"


def end_live_line(stream=None) -> bool:
    """End a rewritten status line so the next output starts on its own line (True: there was one)."""
    with _LOCK:
        if not _STATE["live"]:
            return False
        _STATE["live"], _STATE["owner"] = False, None
        stream = stream or sys.stderr
        stream.write("\n")
        stream.flush()
        return True


class Progress:
    """Writes permanent lines and live status lines to ``stream`` (default: stderr at the time of writing)."""

    def __init__(self, stream=None):
        self._stream = stream
        self.last_status = None
        self._live = None  # on a terminal: the live line's text and its deadline (time.monotonic())

    @property
    def stream(self):
        return self._stream or sys.stderr

    @property
    def tty(self) -> bool:
        return hasattr(self.stream, "isatty") and self.stream.isatty()

    def line(self, text: str):
        with _LOCK:
            end_live_line(self.stream)
            self.stream.write(text + "\n")
            self.stream.flush()

    def status(self, text: str, seconds_left=None):
        """A live line: rewritten on a terminal, where the countdown moves each second; else printed
        when ``text`` changes."""
        if self.tty:
            with _LOCK:
                self._live = text, None if seconds_left is None else time.monotonic() + seconds_left
                self._draw(text, seconds_left)
                _STATE["live"], _STATE["owner"] = True, self
            if seconds_left is not None:
                _tick()
        elif text != self.last_status:
            self.line(text + countdown(seconds_left))
        self.last_status = text

    def _draw(self, text, seconds_left):
        left = countdown(seconds_left)
        self.stream.write("\r\033[K" + text[:max(0, _width() - len(left))] + left)
        self.stream.flush()

    def redraw(self):
        """The live line again, its countdown as of now (the ticker calls this each second)."""
        with _LOCK:
            if _STATE["owner"] is self and self._live and self._live[1] is not None:
                text, deadline = self._live
                self._draw(text, deadline - time.monotonic())


def _tick():
    """One daemon thread redraws the live line each second while it shows a countdown."""
    with _LOCK:
        if _STATE["ticker"] is not None and _STATE["ticker"].is_alive():
            return

        def run():
            while True:
                time.sleep(TICK_SECONDS)
                with _LOCK:
                    owner = _STATE["owner"]
                    if owner is None:
                        _STATE["ticker"] = None
                        return
                try:
                    owner.redraw()
                except (OSError, ValueError):  # the terminal went away
                    return

        _STATE["ticker"] = threads.start(run, "countdown")


def _width() -> int:
    """Characters a live line may hold: one line of the terminal (a wrapped line is not redrawn)."""
    import shutil

    return max(20, min(200, shutil.get_terminal_size((200, 24)).columns - 1))


SHARED = Progress()  # for event callbacks that are plain functions (one command per process)
