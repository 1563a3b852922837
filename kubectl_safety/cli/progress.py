"""Progress on stderr as kubectl writes it (``pod/NAME evicted``, ``node/NAME cordoned``), and a live status line.

On a terminal, status lines (retries, waiting with a countdown) rewrite one line in place; any
permanent line, and the report (``render.emit`` calls ``end_live_line``), first ends it. Without a
terminal a status line is printed only when its text (without the countdown) changes.
"""

import sys

_STATE = {"live": False}


def object_line(kind: str, name: str, verb: str) -> str:
    """``pod/web-1 evicted``, ``node/n1 cordoned``, ``node/n1 drained``."""
    return f"{kind}/{name} {verb}"


def countdown(seconds) -> str:
    """``, 4m10s left`` (humanized like every duration we print), or '' without a deadline."""
    if seconds is None:
        return ""
    from kubectl_safety.model.duration import human_duration

    return f", {human_duration(max(0, seconds))} left"


def end_live_line(stream=None):
    """End a rewritten status line so the next output starts on its own line."""
    if _STATE["live"]:
        stream = stream or sys.stderr
        stream.write("\n")
        stream.flush()
        _STATE["live"] = False


class Progress:
    """Writes permanent lines and live status lines to ``stream`` (default: stderr at the time of writing)."""

    def __init__(self, stream=None):
        self._stream = stream
        self.last_status = None

    @property
    def stream(self):
        return self._stream or sys.stderr

    @property
    def tty(self) -> bool:
        return hasattr(self.stream, "isatty") and self.stream.isatty()

    def line(self, text: str):
        end_live_line(self.stream)
        self.stream.write(text + "\n")
        self.stream.flush()

    def status(self, text: str, seconds_left=None):
        """A live line: rewritten on a terminal (the countdown moves), else printed when ``text`` changes."""
        if self.tty:
            self.stream.write("\r\033[K" + (text + countdown(seconds_left))[:200])
            self.stream.flush()
            _STATE["live"] = True
        elif text != self.last_status:
            self.line(text + countdown(seconds_left))
        self.last_status = text


SHARED = Progress()  # for event callbacks that are plain functions (one command per process)
