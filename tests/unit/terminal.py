"""Run ``kubectl-safety`` as a user does on a real terminal: a pseudo-terminal as its controlling
terminal and its stdin, stdout and stderr (or stdout/stderr in pipes), read as the screen gets it.

``Screen`` drives one process: ``expect`` what it shows, ``send`` keys (``CTRL_C`` goes through the
terminal's line discipline, which signals the process group as a real Ctrl-C does), ``finish``.
"""

import os
import pty
import re
import selectors
import signal
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CTRL_C = b"\x03"
SGR = re.compile(r"\x1b\[[0-9;]*m")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what a screen acts on (tab and line feed aside)
ESCAPED = re.compile(r"\\x1b|\\x08|\\x9b|\\u001b")  # a control shown as text: an escape sequence of ours, broken


def environment(**overrides):
    """The caller's environment without colour, debugging or encoding settings, then ``overrides``
    (None: unset)."""
    unset = ("NO_COLOR", "KUBECTL_SAFETY_DEBUG", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONCOERCECLOCALE")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update({"TERM": "xterm-256color", "COLUMNS": "200", "LINES": "50", "PYTHONPATH": str(REPO)})
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


class Screen:
    """``kubectl-safety ARGS`` on a pseudo-terminal; ``pipes`` names the streams that are pipes instead
    (``"stdout"``, ``"stderr"``), read into ``piped``."""

    def __init__(self, args, env=None, pipes=(), cwd=REPO):
        self.output = b""  # what the terminal received
        self.piped = {name: b"" for name in pipes}
        ends = {name: os.pipe() for name in pipes}
        argv = [sys.executable, "-m", "kubectl_safety", *args]
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the pty is its controlling terminal and stdin/stdout/stderr
            try:
                # as a shell starts a command on a terminal: a suite started in the background (`cmd &`)
                # ignores SIGINT, which exec would pass on, and Ctrl-C would then do nothing
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_SETMASK, set())
                os.chdir(cwd)
                for name, (read_end, write_end) in ends.items():
                    os.dup2(write_end, 1 if name == "stdout" else 2)
                    os.close(read_end)
                    os.close(write_end)
                os.execve(argv[0], argv, env or environment())
            finally:
                os._exit(127)
        self.readers = {self.fd: None}
        for name, (read_end, write_end) in ends.items():
            os.close(write_end)
            self.readers[read_end] = name
        self.code = None

    def _pump(self, timeout) -> bool:
        if not self.readers:
            return False
        with selectors.DefaultSelector() as sel:  # not select(): the suite may hold descriptors above 1024
            for fd in self.readers:
                sel.register(fd, selectors.EVENT_READ)
            ready = [key.fd for key, _ in sel.select(timeout)]
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the terminal's other side is closed
                data = b""
            name = self.readers[fd]
            if name is None:
                self.output += data
            else:
                self.piped[name] += data
            if not data:
                del self.readers[fd]
                os.close(fd)
        return True

    def expect(self, pattern: bytes, timeout=60.0) -> re.Match:
        """Wait until the terminal shows ``pattern`` (a regular expression over the raw bytes)."""
        end = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.output)
            if found:
                return found
            left = end - time.monotonic()
            if left <= 0 or not self._pump(left):
                raise AssertionError(f"{pattern!r} not shown within {timeout}s; the screen: {self.output!r}")

    def send(self, keys: bytes):
        os.write(self.fd, keys)

    def finish(self, timeout=60.0) -> int:
        """Read to the end; the exit code (killed on timeout: then an AssertionError)."""
        end = time.monotonic() + timeout
        while self.readers:
            if time.monotonic() > end:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                raise AssertionError(f"still running after {timeout}s; the screen: {self.output!r}")
            self._pump(max(0.0, end - time.monotonic()))
        _, status = os.waitpid(self.pid, 0)
        self.code = os.waitstatus_to_exitcode(status)
        return self.code

    @property
    def text(self) -> str:
        """The screen as text: the terminal's CRLF line ends made LF."""
        return self.output.decode("utf-8", "replace").replace("\r\n", "\n")

    def pipe_text(self, name) -> str:
        return self.piped[name].decode("utf-8", "replace")


def run(args, env=None, pipes=(), timeout=60.0) -> Screen:
    """A finished ``Screen`` of a command that needs no keys."""
    screen = Screen(args, env, pipes)
    screen.finish(timeout)
    return screen


def visible(text: str) -> str:
    """``text`` as a terminal shows it: SGR sequences are not characters."""
    return SGR.sub("", text)


def misaligned_rows(text: str) -> list:
    """Rows with colour in ``text`` whose cells do not start where the columns of their table's
    header start (measured on the visible text), as ``(header, row)`` pairs."""
    problems, header = [], None
    for line in text.split("\n"):
        shown = visible(line)
        if _columns(shown):
            header = shown
        elif not shown.strip():
            header = None
        elif header and SGR.search(line):
            starts = _columns(header)
            if any(shown[s - 1:s] != " " or not shown[s:s + 1].strip() and shown[s:_next(starts, s)].strip()
                   for s in starts[1:] if s < len(shown)):
                problems.append((header, shown))
    return problems


def _columns(line) -> list:
    """Where the columns of a kubectl-style table header start ([] when ``line`` is not one):
    upper-case cells (single spaces inside) two or more spaces apart."""
    cells = list(re.finditer(r"\S+(?: \S+)*", line))
    if len(cells) < 2 or not all(re.fullmatch(r"[A-Z][A-Z0-9_%/().-]*(?: [A-Z0-9_%/().-]+)*", c.group())
                                 for c in cells):
        return []
    return [c.start() for c in cells]


def _next(starts, s):
    later = [x for x in starts if x > s]
    return later[0] if later else None
