"""Text that did not come from us, made safe for a terminal, and credentials kept out of it.

``printable`` escapes every character a terminal could act on (C0/C1 controls including ESC,
CR and LF, DEL, bidi overrides and other format characters, line separators) as a visible
``\\x1b``/``\\u202e`` sequence, so a name cannot forge a row, recolour the screen or set a title.
``redact`` removes credentials: the secrets registered while loading a kubeconfig (tokens,
passwords, exec plugin output), ``user:password@`` in URLs, sensitive query parameters and
``Authorization`` values. Both are applied where text leaves the process (tables, warnings,
errors, completion candidates); JSON and YAML output stay faithful (their serializers escape).

Values are made printable once, before they are laid out (widths count what is shown). Styles
are spans of private-use marks (``alarm``), never escape sequences: ``printable`` escapes those
marks in values, and ``SafeStream``, the output edge, turns them into SGR on a colour terminal
and drops them everywhere else. The edge also writes only what the stream's encoding can take.
"""

import codecs
import os
import re
from dataclasses import fields, is_dataclass, replace
from enum import Enum
from functools import cache

_SECRETS = set()
_SENSITIVE = "access_token|token|password|passwd|secret|client_secret|id_token|refresh_token|api_key|apikey|sig|signature|key"


@cache
def _patterns() -> tuple:
    """(pattern, replacement) pairs, compiled by the first ``redact`` (a command that warns of nothing needs none)."""
    return (
        (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]*@"), r"\1REDACTED@"),  # URL userinfo
        (re.compile(rf"(?i)([?&;](?:{_SENSITIVE})=)[^&#\s'\"]*"), r"\1REDACTED"),  # query parameters
        (re.compile(r"(?i)\b(bearer|basic)(\s+|%20|\+)[^\s'\",;]+"), r"\1 REDACTED"),  # header values
        (re.compile(r"(?i)(\"?(?:token|password|clientKeyData|client-key-data|access_token)\"?\s*[:=]\s*)"
                    r"(\"[^\"]*\"|'[^']*'|[^\s,}]+)"), r"\1REDACTED"),  # exec output, JSON/YAML fields
        (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)", re.S),
         "REDACTED PRIVATE KEY"),
    )


MIN_SECRET = 6  # shorter strings would redact ordinary words (the patterns still catch them in headers)


def register_secret(value):
    """Never show ``value`` (nor its lines, nor it without surrounding white space)."""
    if not isinstance(value, str):
        return
    for candidate in (value, value.strip(), *value.splitlines()):
        candidate = candidate.strip()
        if len(candidate) >= MIN_SECRET:
            _SECRETS.add(candidate)


def redact(text: str) -> str:
    """``text`` without registered secrets, URL passwords, sensitive query values and auth headers."""
    for secret in sorted(_SECRETS, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, "REDACTED")
    for pattern, replacement in _patterns():
        text = pattern.sub(replacement, text)
    return text


_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    if ch in _SHORT:
        return _SHORT[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text, encoding=None) -> str:
    """``text`` on one line with every non-printable character shown as an escape (spaces kept);
    with ``encoding``, also every character it cannot encode."""
    text = str(text)
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() or ch == " " else _escape(ch) for ch in text)
    return encodable(text, encoding) if encoding else text


def encodable(text: str, encoding) -> str:
    """``text`` with what ``encoding`` cannot encode shown as ``\\xe9``/``\\u00e9`` escapes (as ``printable``)."""
    if text.isascii() or _unicode(encoding):
        return text
    return text.encode(encoding, "backslashreplace").decode(encoding)


def _unicode(encoding) -> bool:
    try:
        return encoding is None or codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        return False


def clean(value, encoding=None):
    """A report with every string made printable (for table/text output; not for JSON/YAML), on a
    stream of ``encoding`` when given; a typed report (frozen dataclasses) stays typed, its enums kept."""
    if isinstance(value, Enum):
        return value  # a closed set of our own words
    if isinstance(value, str):
        return printable(value, encoding)
    if isinstance(value, dict):
        return {clean(k, encoding) if isinstance(k, str) else k: clean(v, encoding) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        cleaned = (clean(v, encoding) for v in value)
        return list(cleaned) if isinstance(value, list) else tuple(cleaned)
    if is_dataclass(value) and not isinstance(value, type):
        return replace(value, **{f.name: clean(getattr(value, f.name), encoding) for f in fields(value) if f.init})
    return value


ALARM, END = "\ue000", "\ue001"  # a span shown in red on a colour terminal (not printable: never in a value)
SGR = {ALARM: "\033[31m", END: "\033[0m"}


def alarm(text: str) -> str:
    """``text`` (already printable) styled as an alarm: red on a colour terminal, plain elsewhere."""
    return f"{ALARM}{text}{END}"


def shown_encoding(stream):
    """The encoding ``stream`` shows text in, through ``SafeStream``; None when it shows any text."""
    if isinstance(stream, SafeStream):
        return stream.shown_encoding
    encoding = getattr(stream, "encoding", None)
    return None if _unicode(encoding) else encoding


def colour_enabled(stream) -> bool:
    """Colour only on a terminal that is not ``TERM=dumb``, never when NO_COLOR is set and not empty
    (https://no-color.org: an empty value does not disable colour)."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def for_terminal(message) -> str:
    """An error or warning line: credentials removed, then made printable."""
    return printable(redact(str(message)))


_ASCII_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")  # (JSON and tables of ASCII text pass at C speed)
_KEEP = "\r\x1b[K"  # a progress line redrawn in place on a terminal (progress.py writes it only there)
_OURS = re.compile(f"({re.escape(_KEEP)}|{ALARM}|{END})")


class SafeStream:
    """The output edge: a text stream whose writes reach the terminal without controls (line
    breaks and tabs kept), styles shown as SGR only on a colour terminal, and characters the
    stream cannot encode escaped.

    Installed on stdout and stderr by the CLI behind every print site: whatever a command
    prints, no escape sequence, C1 control or bidi override that did not come from us gets out.
    """

    def __init__(self, stream):
        self._stream = stream
        self._colour = colour_enabled(stream)
        encoding = getattr(stream, "encoding", None)
        self.shown_encoding = None if _unicode(encoding) else encoding

    @property
    def encoding(self):
        """Any text may be written (click then writes here, not around it to the bytes below)."""
        return "utf-8"

    def write(self, text):
        if isinstance(text, str):
            if not text.isprintable() and not (text.isascii() and not _ASCII_CONTROL.search(text)):
                text = "".join(self._edge(part) for part in _OURS.split(text))
            if self.shown_encoding:
                text = encodable(text, self.shown_encoding)
        return self._stream.write(text)

    def _edge(self, part):
        if part in SGR:
            return SGR[part] if self._colour else ""
        if part == _KEEP:
            return part
        return "\n".join("\t".join(printable(cell) for cell in line.split("\t")) for line in part.split("\n"))

    def __getattr__(self, name):
        return getattr(self._stream, name)
