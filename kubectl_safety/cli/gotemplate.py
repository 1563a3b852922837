"""The part of Go's text/template that ``kubectl -o go-template`` users write, over a report dict.

Actions: ``{{.a.b}}``, ``{{.}}``, ``{{$}}``, ``{{$var.a}}``, literals, ``{{range .items}}`` (also
``range $i, $e := X``), ``{{if X}}``/``{{else}}``/``{{else if X}}``, ``{{with X}}``, ``{{end}}``,
pipelines (``X | printf "%s"``), ``{{- trimming -}}``, comments, and the functions ``index len printf
print println eq ne lt le gt ge not and or``. Values print as Go's ``%v`` does (``map[k:v]``, ``[a b]``);
a missing key prints ``<no value>``.
"""

import re
import shlex

from kubectl_safety.cli.jsonpath import TemplateError

_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.S)


def render(template: str, data) -> str:
    tokens = _tokens(template)
    tree, i = _block(tokens, 0, ())
    if i != len(tokens):
        raise TemplateError(f"unexpected {{{{{tokens[i][1]}}}}}")
    out = []
    _exec(tree, data, {"$": data}, out)
    return "".join(out)


def _tokens(t):
    out, pos = [], 0
    for m in _ACTION.finditer(t):
        text = t[pos:m.start()]
        if m.group(1):
            text = text.rstrip()
        out.append(("text", text))
        out.append(("action", m.group(2).strip()))
        pos = m.end()
        if m.group(3):
            rest = t[pos:]
            pos += len(rest) - len(rest.lstrip())
    out.append(("text", t[pos:]))
    return [x for x in out if x != ("text", "")]


def _block(tokens, i, stops):
    """Nodes until an action word in ``stops``: ("text", s) | ("out", pipe) | ("if"/"with"/"range", ...)."""
    nodes = []
    while i < len(tokens):
        kind, value = tokens[i]
        word = value.split(None, 1)[0] if kind == "action" and value else ""
        if kind == "action" and word in stops:
            return nodes, i
        i += 1
        if kind == "text":
            nodes.append(("text", value))
        elif value.startswith("/*"):
            continue
        elif word in ("if", "with", "range"):
            node, i = _control(tokens, i, word, value[len(word):].strip())
            nodes.append(node)
        elif word in ("end", "else"):
            raise TemplateError(f"unexpected {{{{{word}}}}}")
        else:
            nodes.append(("out", value))
    if stops:
        raise TemplateError(f"missing {{{{end}}}}")
    return nodes, i


def _control(tokens, i, word, head):
    """An if/with/range node after its head; ``else if`` nests an if that shares our end."""
    body, i = _block(tokens, i, ("else", "end"))
    other = []
    if tokens[i][1].startswith("else"):
        rest = tokens[i][1][4:].strip()
        if rest.startswith("if "):
            node, i = _control(tokens, i + 1, "if", rest[3:].strip())
            return (word, head, body, [node]), i
        other, i = _block(tokens, i + 1, ("end",))
    return (word, head, body, other), i + 1


def _exec(nodes, dot, env, out):
    for node in nodes:
        kind = node[0]
        if kind == "text":
            out.append(node[1])
        elif kind == "out":
            out.append(_show(_pipe(node[1], dot, env)))
        elif kind in ("if", "with"):
            value = _pipe(node[1], dot, env)
            if _truth(value):
                _exec(node[2], value if kind == "with" else dot, env, out)
            else:
                _exec(node[3], dot, env, out)
        else:  # range
            head, key_var, val_var = node[1], None, None
            m = re.match(r"^(\$\w*)\s*(?:,\s*(\$\w*))?\s*:=\s*(.*)$", head)
            if m:
                key_var, val_var, head = (m.group(1), m.group(2), m.group(3)) if m.group(2) else (None, m.group(1), m.group(3))
            value = _pipe(head, dot, env)
            pairs = list(value.items()) if isinstance(value, dict) else list(enumerate(value or []))
            if isinstance(value, dict):
                pairs.sort(key=lambda kv: str(kv[0]))
            if not pairs:
                _exec(node[3], dot, env, out)
            for k, v in pairs:
                scope = dict(env)
                if key_var:
                    scope[key_var] = k
                if val_var:
                    scope[val_var] = v
                _exec(node[2], v, scope, out)


def _pipe(text, dot, env):
    value, first = None, True
    for part in _split_pipe(text):
        words = _words(part)
        if not first:
            words.append(("value", value))
        value, first = _call(words, dot, env), False
    return value


def _split_pipe(text):
    parts, cur, quote = [], "", None
    for c in text:
        if quote:
            quote = None if c == quote else quote
        elif c in "\"'`":
            quote = c
        elif c == "|":
            parts.append(cur)
            cur = ""
            continue
        cur += c
    return parts + [cur]


def _words(part):
    lexer = shlex.shlex(part.replace("(", " ( ").replace(")", " ) "), posix=False)
    lexer.whitespace_split, lexer.commenters = True, ""
    try:
        return [("word", w) for w in lexer]
    except ValueError:
        raise TemplateError(f"unterminated quoted string in {part!r}") from None


def _call(words, dot, env):
    if not words:
        raise TemplateError("empty command")
    head = words[0]
    args = [_arg(w, dot, env) for w in words[1:]]
    if head[0] == "word" and head[1] in FUNCS:
        try:
            return FUNCS[head[1]](*args)
        except (TypeError, KeyError, IndexError):
            raise TemplateError(f"error calling {head[1]} with {len(args)} argument(s)") from None
    if args:
        raise TemplateError(f"{head[1]} is not a function")
    return _arg(head, dot, env)


def _arg(word, dot, env):
    kind, w = word
    if kind == "value":
        return w
    if w[0] in "\"`":
        return w[1:-1].encode().decode("unicode_escape") if w[0] == '"' else w[1:-1]
    if w in ("true", "false"):
        return w == "true"
    if re.fullmatch(r"-?\d+(\.\d+)?", w):
        try:
            return float(w) if "." in w else int(w)
        except ValueError:  # int() of thousands of digits is refused
            raise TemplateError(f"number {w[:20]}...: out of range") from None
    if w == "nil":
        return None
    if w.startswith("$"):
        name, _, rest = w.partition(".")
        if name not in env:
            raise TemplateError(f"undefined variable {name}")
        return _fields(env[name], rest)
    if w.startswith("."):
        return _fields(dot, w[1:])
    if w in FUNCS:
        return FUNCS[w]()
    raise TemplateError(f'function "{w}" not defined')


_MISSING = type("Missing", (), {"__repr__": lambda self: "<no value>"})()


def _fields(value, path):
    for key in filter(None, path.split(".")):
        value = value.get(key, _MISSING) if isinstance(value, dict) else _MISSING
    return value


def _truth(v) -> bool:
    return v is not _MISSING and bool(v)


def _show(v) -> str:
    if v is _MISSING:
        return "<no value>"
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{_show(x)}" for k, x in sorted(v.items())) + "]"
    if isinstance(v, list):
        return "[" + " ".join(_show(x) for x in v) + "]"
    return str(v)


def _printf(fmt, *args):
    go = re.sub(r"%v|%s|%d|%q", lambda m: {"%q": '"%s"'}.get(m.group(), "%s"), fmt)
    return go % tuple(_show(a) for a in args)


def _index(v, *keys):
    for k in keys:
        v = v.get(k, _MISSING) if isinstance(v, dict) else v[k] if isinstance(v, list) and -len(v) <= k < len(v) else _MISSING
    return v


FUNCS = {
    "index": _index, "len": lambda v: len(v), "printf": _printf,
    "print": lambda *a: " ".join(_show(x) for x in a), "println": lambda *a: " ".join(_show(x) for x in a) + "\n",
    "eq": lambda a, *b: any(a == x for x in b), "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b, "not": lambda a: not _truth(a),
    "and": lambda *a: next((x for x in a if not _truth(x)), a[-1]), "or": lambda *a: next((x for x in a if _truth(x)), a[-1]),
}
