"""Text that did not come from us, made safe for a terminal, and credentials kept out of it.

``printable`` escapes every character a terminal could act on (C0/C1 controls including ESC,
CR and LF, DEL, bidi overrides and other format characters, line separators) as a visible
``\\x1b``/``\\u202e`` sequence, so a name cannot forge a row, recolour the screen or set a title.
``redact`` removes credentials: the secrets registered while loading a kubeconfig (tokens,
passwords, exec plugin output), ``user:password@`` in URLs, sensitive query parameters and
``Authorization`` values. Both are applied where text leaves the process (tables, warnings,
errors, completion candidates); JSON and YAML output stay faithful (their serializers escape).
"""

import re

_SECRETS = set()
_SENSITIVE = "access_token|token|password|passwd|secret|client_secret|id_token|refresh_token|api_key|apikey|sig|signature|key"
_PATTERNS = [
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]*@"), r"\1REDACTED@"),  # URL userinfo
    (re.compile(rf"(?i)([?&;](?:{_SENSITIVE})=)[^&#\s'\"]*"), r"\1REDACTED"),  # query parameters
    (re.compile(r"(?i)\b(bearer|basic)(\s+|%20|\+)[^\s'\",;]+"), r"\1 REDACTED"),  # header values
    (re.compile(r"(?i)(\"?(?:token|password|clientKeyData|client-key-data|access_token)\"?\s*[:=]\s*)"
                r"(\"[^\"]*\"|'[^']*'|[^\s,}]+)"), r"\1REDACTED"),  # exec output, JSON/YAML fields
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)", re.S),
     "REDACTED PRIVATE KEY"),
]


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
    for pattern, replacement in _PATTERNS:
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


def printable(text) -> str:
    """``text`` on one line with every non-printable character shown as an escape (spaces kept)."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == " " else _escape(ch) for ch in text)


def printable_lines(text) -> str:
    """Like ``printable`` but keeps line breaks (text we laid out ourselves from printable pieces)."""
    return "\n".join(printable(line) for line in str(text).split("\n"))


def clean(value):
    """A report with every string made printable (for table/text output; not for JSON/YAML)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {clean(k) if isinstance(k, str) else k: clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(clean(v) for v in value) if isinstance(value, list) else tuple(clean(v) for v in value)
    return value


def for_terminal(message) -> str:
    """An error or warning line: credentials removed, then made printable."""
    return printable(redact(str(message)))


_ASCII_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")  # (JSON and tables of ASCII text pass at C speed)
_KEEP = "\r\x1b[K"  # the one sequence of ours: a progress line redrawn in place on a terminal


class SafeStream:
    """A text stream whose writes reach the terminal without controls (line breaks and tabs kept).

    Installed on stdout and stderr by the CLI as a last line of defence: whatever a command
    prints, no escape sequence, C1 control or bidi override that did not come from us gets out.
    """

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        if isinstance(text, str) and not text.isprintable() and not (text.isascii() and not _ASCII_CONTROL.search(text)):
            text = _KEEP.join("\n".join("\t".join(printable(cell) for cell in line.split("\t"))
                                        for line in part.split("\n")) for part in text.split(_KEEP))
        return self._stream.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)
