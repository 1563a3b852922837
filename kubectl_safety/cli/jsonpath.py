"""kubectl's JSONPath templates (``-o jsonpath=...``), evaluated over a report dict.

Templates as ``kubectl get -o jsonpath`` reads them: literal text with ``{...}`` actions; in an
action ``.a.b``, ``['a.b']``, ``[0]``, ``[-1]``, ``[1:3]``, ``[*]``, ``.*``, ``..name`` (recursive),
``[?(@.x == "y")]`` filters (``== != < <= > >=``, or existence), ``$`` (root), ``@`` (current),
``{range EXPR}...{end}`` and string literals such as ``{"\\n"}``. Printing follows kubectl: strings
raw, other values as compact JSON, several results of one action separated by a space; a missing
key prints nothing (kubectl's default ``--allow-missing-template-keys=true``).
"""

import json
import re


class TemplateError(ValueError):
    """A template that does not parse (the CLI shows it as one line)."""


def render(template: str, data) -> str:
    nodes, rest = _parse(template, 0, False)
    return "".join(_run(nodes, data, data))


def results(template: str, data) -> list:
    """The values every action produces, in order (``-o jsonpath-as-json``)."""
    nodes, _ = _parse(template, 0, False)
    out = []
    _collect(nodes, data, data, out)
    return out


# -- parsing: [("text", s) | ("path", steps, raw) | ("lit", s) | ("range", steps, body)] --------------

def _parse(t, i, in_range):
    nodes = []
    while i < len(t):
        start = t.find("{", i)
        if start < 0:
            nodes.append(("text", t[i:]))
            i = len(t)
            break
        if start > i:
            nodes.append(("text", t[i:start]))
        end = _close(t, start)
        action = t[start + 1:end].strip()
        i = end + 1
        if action == "end":
            if not in_range:
                raise TemplateError("unexpected {end} without {range}")
            return nodes, i
        if action.startswith("range ") or action.startswith("range."):
            body, i = _parse(t, i, True)
            nodes.append(("range", _path(action[5:].strip()), body))
        elif action.startswith('"') or action.startswith("'"):
            nodes.append(("lit", _literal(action)))
        else:
            nodes.append(("path", _path(action), action))
    if in_range:
        raise TemplateError("{range} without {end}")
    return nodes, i


def _close(t, start):
    depth, quote, j = 0, None, start
    while j < len(t):
        c = t[j]
        if quote:
            if c == "\\":
                j += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    raise TemplateError(f"unclosed action in {t!r}")


def _literal(text):
    try:
        return json.loads('"' + text[1:-1].replace('"', '\\"') + '"') if text[0] == "'" else json.loads(text)
    except ValueError:
        raise TemplateError(f"invalid string literal {text}") from None


_NAME = r"(?:[\w\-/]|\\\.)+"  # a field name; ``\.`` is a dot inside it (kubectl's escape)
_STEP = re.compile(rf"""\.\.(?P<deep>{_NAME}|\*)|\.(?P<field>{_NAME}|\*)|\[(?P<bracket>(?:'[^']*'|"[^"]*"|[^\]])*)\]""")


def _path(text):
    """Steps of a path: ("root"|"cur"), ("field", k), ("deep", k), ("all",), ("index", i), ("slice", a, b, s), ("filter", ...)."""
    text = text.strip()
    steps = [("cur",)]
    if text.startswith("$"):
        steps, text = [("root",)], text[1:]
    elif text.startswith("@"):
        text = text[1:]
    pos = 0
    while pos < len(text):
        m = _STEP.match(text, pos)
        if not m:
            raise TemplateError(f"unrecognized identifier in {text!r} at {text[pos:]!r}")
        pos = m.end()
        if m.group("deep") is not None:
            steps.append(("deep", m.group("deep").replace("\\.", ".")))
        elif m.group("field") is not None:
            steps.append(("all",) if m.group("field") == "*" else ("field", m.group("field").replace("\\.", ".")))
        else:
            steps.append(_bracket(m.group("bracket").strip()))
    return steps


def _bracket(b):
    if b == "*":
        return ("all",)
    if b[:1] == "'":  # ['a'] or ['a','b']; as kubectl, a dot in a quoted key still separates fields
        return ("keys", [[("field", part.replace("\\.", ".")) for part in re.split(r"(?<!\\)\.", k.strip()[1:-1])]
                         for k in b.split(",")])
    if b.startswith("?(") and b.endswith(")"):
        m = re.fullmatch(r"\s*(@[^<>=!]*?)\s*(==|!=|<=|>=|<|>)\s*(.+?)\s*", b[2:-1])
        if not m:
            return ("filter", _path(b[2:-1]), None, None)
        right = m.group(3)
        try:
            value = _literal(right) if right[:1] in "'\"" else _path(right) if right[:1] in "@$" else json.loads(right)
        except ValueError:  # not JSON, or a number of thousands of digits
            raise TemplateError(f"invalid filter value {right[:40]}") from None
        return ("filter", _path(m.group(1)), m.group(2), value)
    if ":" in b:
        try:
            parts = [int(p) if p.strip() else None for p in (b.split(":") + [""])[:3]]
        except ValueError:  # not a number, or one of thousands of digits
            raise TemplateError(f"invalid array slice [{b[:40]}]") from None
        return ("slice", *parts)
    try:
        return ("index", int(b))
    except ValueError:
        raise TemplateError(f"invalid array index [{b}]") from None


# -- evaluation ----------------------------------------------------------------------------------

def _eval(steps, root, current) -> list:
    values = []
    for step in steps:
        kind = step[0]
        if kind in ("root", "cur"):
            values = [root if kind == "root" else current]
        elif kind == "field":
            values = [v[step[1]] for v in values if isinstance(v, dict) and step[1] in v]
        elif kind == "keys":
            values = [x for v in values for key in step[1] for x in _eval([("cur",)] + key, root, v)]
        elif kind == "all":
            values = [x for v in values for x in (v.values() if isinstance(v, dict) else v if isinstance(v, list) else [])]
        elif kind == "deep":
            values = [x for v in values for x in _deep(v, step[1])]
        elif kind == "index":
            values = [v[step[1]] for v in values if isinstance(v, list) and -len(v) <= step[1] < len(v)]
        elif kind == "slice":
            values = [x for v in values if isinstance(v, list) for x in v[slice(*step[1:])]]
        elif kind == "filter":
            values = [x for v in values for x in (v if isinstance(v, list) else [v]) if _match(step, root, x)]
    return values


def _deep(v, name):
    if isinstance(v, dict):
        if name == "*" or name in v:
            yield from (v.values() if name == "*" else [v[name]])
        for x in v.values():
            yield from _deep(x, name)
    elif isinstance(v, list):
        for x in v:
            yield from _deep(x, name)


def _match(step, root, item) -> bool:
    _, left, op, right = step
    found = _eval(left, root, item)
    if op is None:
        return bool(found)
    rights = _eval(right, root, item) if isinstance(right, list) else [right]
    if not found or not rights:
        return False
    a, b = found[0], rights[0]
    try:
        return {"==": a == b, "!=": a != b}[op] if op in ("==", "!=") else \
            {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    except TypeError:
        return False


def _text(v) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    return json.dumps(v, separators=(",", ":"), default=str)


def _run(nodes, root, current):
    for node in nodes:
        if node[0] in ("text", "lit"):
            yield node[1]
        elif node[0] == "path":
            yield " ".join(_text(v) for v in _eval(node[1], root, current))
        else:
            for item in _eval(node[1], root, current):
                yield from _run(node[2], root, item)


def _collect(nodes, root, current, out):
    for node in nodes:
        if node[0] == "path":
            out.extend(_eval(node[1], root, current))
        elif node[0] == "range":
            for item in _eval(node[1], root, current):
                _collect(node[2], root, item, out)
