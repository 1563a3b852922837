"""The CEL of DRA device selectors, for the expressions drivers and users write: ``device.driver``,
``device.attributes[domain].name`` and ``device.capacity[domain].name`` compared with literals,
``quantity(...)`` / ``semver(...)`` comparisons (``compareTo``, ``isGreaterThan``, ``isLessThan``),
``in``, ``has()``, ``size()``, the string tests ``startsWith`` / ``endsWith`` / ``contains``, and
``!``, ``&&``, ``||`` with CEL's error absorption (``false && error`` is false).

``evaluate(expression, device)`` is True, False, ``ERROR`` (a CEL runtime error, as a lookup of an
attribute the device does not have: upstream's allocator then fails) or raises ``Unsupported``
for anything else (the filter treats the selector as not matching and says so:
docs/deviations.md, "Device selectors").
"""

import re

from kubectl_safety.errors import InputError
from kubectl_safety.model.quantity import parse_quantity

ERROR = object()  # a CEL runtime error (no such key, no such overload)
_TOKEN = re.compile(r'\s*(?:(?P<num>\d+)(?![\w.])|(?P<str>"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')|'
                    r'(?P<op>==|!=|<=|>=|&&|\|\||[<>!.()\[\],])|(?P<id>[A-Za-z_][A-Za-z0-9_]*))')
MAX_LENGTH = 10_000


class Unsupported(Exception):
    """An expression outside the subset this module evaluates."""


class _Domains(dict):
    """``device.attributes`` / ``device.capacity``: an unknown domain is an empty map, not an error."""


class _Quantity:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _Semver:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _semver(text):
    m = re.fullmatch(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?", text)
    if not m:
        return ERROR
    pre = m.group(4)
    # a version without a pre-release sorts after one with it (numeric identifiers before others)
    key = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")) if pre else None
    return _Semver((int(m.group(1)), int(m.group(2)), int(m.group(3)), key is None, key or ()))


def device_view(device, driver) -> dict:
    """The ``device`` variable CEL sees: attributes and capacity by domain (an unqualified name is
    in the driver's domain), values typed as upstream converts them."""
    attributes, capacity = _Domains(), _Domains()
    for name, attr in (device.get("attributes") or {}).items():
        name = str(name)  # (a YAML key may be a number)
        domain, _, ident = name.rpartition("/") if "/" in name else (driver, "", name)
        attr = attr if isinstance(attr, dict) else {}
        if "int" in attr:
            value = attr["int"]
        elif "bool" in attr:
            value = attr["bool"]
        elif "string" in attr:
            value = attr["string"]
        elif "version" in attr:
            value = _semver(str(attr["version"]))
        else:
            value = ERROR
        attributes.setdefault(domain, {})[ident] = value
    for name, cap in (device.get("capacity") or {}).items():
        name = str(name)
        domain, _, ident = name.rpartition("/") if "/" in name else (driver, "", name)
        try:
            value = _Quantity(parse_quantity((cap or {}).get("value", "0") if isinstance(cap, dict) else cap))
        except InputError:
            value = ERROR
        capacity.setdefault(domain, {})[ident] = value
    return {"driver": driver, "attributes": attributes, "capacity": capacity,
            "allowMultipleAllocations": bool(device.get("allowMultipleAllocations"))}


def evaluate(expression, device_vars):
    """True, False or ERROR; raises Unsupported."""
    if not isinstance(expression, str) or len(expression) > MAX_LENGTH:
        raise Unsupported("expression too long")
    parser = _Parser(_tokens(expression))
    tree = parser.expression()
    if parser.peek() is not None:
        raise Unsupported(f"unexpected {parser.peek()[1]!r}")
    result = _eval(tree, device_vars)
    if result is ERROR or isinstance(result, bool):
        return result
    return ERROR  # a selector must be a bool


def _tokens(text):
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise Unsupported(f"cannot read {text[pos:pos + 10]!r}")
        kind = m.lastgroup
        value = m.group(kind)
        if kind == "str":
            if "\\" in value:
                raise Unsupported("escapes in strings")
            value = value[1:-1]
        elif kind == "num":
            value = int(value)
        out.append((kind, value))
        pos = m.end()
    return out


class _Parser:
    """Recursive descent over CEL's precedence: || < && < relations < ! < member access."""

    def __init__(self, tokens):
        self.tokens, self.i, self.depth = tokens, 0, 0

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, value=None):
        token = self.peek()
        if token is None or (value is not None and token[1] != value):
            raise Unsupported(f"expected {value!r}")
        self.i += 1
        return token

    def accept(self, value):
        token = self.peek()
        if token is not None and token[0] in ("op", "id") and token[1] == value:
            self.i += 1
            return True
        return False

    def expression(self):
        self.depth += 1
        if self.depth > 50:
            raise Unsupported("nested too deeply")
        node = self.conjunction()
        while self.accept("||"):
            node = ("or", node, self.conjunction())
        self.depth -= 1
        return node

    def conjunction(self):
        node = self.relation()
        while self.accept("&&"):
            node = ("and", node, self.relation())
        return node

    def relation(self):
        node = self.unary()
        token = self.peek()
        if token is not None and token[1] in ("==", "!=", "<", "<=", ">", ">=", "in") and token[0] != "str":
            self.i += 1
            node = ("cmp", token[1], node, self.unary())
        return node

    def unary(self):
        if self.accept("!"):
            return ("not", self.unary())
        return self.member()

    def member(self):
        node = self.primary()
        while True:
            if self.accept("."):
                name = self.take()[1]
                if self.accept("("):
                    node = ("call", name, node, self.arguments())
                else:
                    node = ("field", node, name)
            elif self.accept("["):
                node = ("index", node, self.expression())
                self.take("]")
            else:
                return node

    def arguments(self):
        args = []
        if not self.accept(")"):
            args.append(self.expression())
            while self.accept(","):
                args.append(self.expression())
            self.take(")")
        return args

    def primary(self):
        kind, value = self.take()
        if kind in ("num", "str"):
            return ("lit", value)
        if kind == "id":
            if value in ("true", "false"):
                return ("lit", value == "true")
            if self.accept("("):
                return ("call", value, None, self.arguments())
            return ("var", value)
        if value == "(":
            node = self.expression()
            self.take(")")
            return node
        if value == "[":
            items = []
            if not self.accept("]"):
                items.append(self.expression())
                while self.accept(","):
                    items.append(self.expression())
                self.take("]")
            return ("list", items)
        raise Unsupported(f"unexpected {value!r}")


def _eval(node, env):
    op = node[0]
    if op == "lit":
        return node[1]
    if op == "var":
        if node[1] != "device":
            raise Unsupported(f"variable {node[1]}")
        return env
    if op == "list":
        items = [_eval(x, env) for x in node[1]]
        return ERROR if any(x is ERROR for x in items) else items
    if op == "and":
        left, right = _truth(_eval(node[1], env)), _truth(_eval(node[2], env))
        if left is False or right is False:
            return False
        return ERROR if ERROR in (left, right) else True
    if op == "or":
        left, right = _truth(_eval(node[1], env)), _truth(_eval(node[2], env))
        if left is True or right is True:
            return True
        return ERROR if ERROR in (left, right) else False
    if op == "not":
        value = _truth(_eval(node[1], env))
        return ERROR if value is ERROR else not value
    if op == "field":
        if node[1][0] == "var" and node[1][1] == "device" and node[2] not in env:
            raise Unsupported(f"device.{node[2]}")
        return _lookup(_eval(node[1], env), node[2])
    if op == "index":
        key = _eval(node[2], env)
        if key is ERROR:
            return ERROR
        return _lookup(_eval(node[1], env), key)
    if op == "cmp":
        return _compare(node[1], _eval(node[2], env), _eval(node[3], env))
    if op == "call":
        return _call(node[1], node[2], node[3], env)
    raise Unsupported(op)


def _truth(value):
    if value is ERROR or isinstance(value, bool):
        return value
    return ERROR


def _lookup(container, key):
    if container is ERROR:
        return ERROR
    if not isinstance(container, dict) or not isinstance(key, str):
        return ERROR
    if key in container:
        return container[key]
    return {} if isinstance(container, _Domains) else ERROR  # else: no such key


def _same_kind(a, b) -> bool:
    simple = (bool, int, str)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool)
    return any(isinstance(a, t) and isinstance(b, t) for t in simple)


def _compare(op, left, right):
    if left is ERROR or right is ERROR:
        return ERROR
    if op == "in":
        if isinstance(right, list):
            return any(_same_kind(left, x) and left == x for x in right)
        if isinstance(right, dict):
            return left in right if isinstance(left, str) else ERROR
        return ERROR
    if op in ("==", "!="):
        if isinstance(left, (_Quantity, _Semver)) or isinstance(right, (_Quantity, _Semver)):
            if type(left) is not type(right):
                return ERROR
            equal = left.value == right.value
        elif isinstance(left, (dict, list)) or isinstance(right, (dict, list)):
            raise Unsupported("comparing maps or lists")
        else:
            equal = _same_kind(left, right) and left == right  # heterogeneous equality: other types differ
        return equal if op == "==" else not equal
    if not _same_kind(left, right) or isinstance(left, bool):
        if isinstance(left, (_Quantity, _Semver)) or isinstance(right, (_Quantity, _Semver)):
            raise Unsupported("ordering quantities or versions with an operator")
        return ERROR  # no such overload
    return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]


def _call(name, target, args, env):
    if name == "has" and target is None and len(args) == 1 and args[0][0] == "field":
        container = _eval(args[0][1], env)
        if container is ERROR or not isinstance(container, dict):
            return ERROR
        return args[0][2] in container
    values = [_eval(a, env) for a in args]
    this = None if target is None else _eval(target, env)
    if this is ERROR or any(v is ERROR for v in values):
        return ERROR
    if target is None and len(values) == 1 and isinstance(values[0], str):
        if name == "quantity":
            try:
                return _Quantity(parse_quantity(values[0]))
            except InputError:
                return ERROR
        if name == "semver":
            return _semver(values[0])
    if target is None and name == "size" and len(values) == 1 and isinstance(values[0], (str, list, dict)):
        return len(values[0])
    if isinstance(this, (_Quantity, _Semver)) and len(values) == 1 and type(values[0]) is type(this):
        a, b = this.value, values[0].value
        if name == "compareTo":
            return (a > b) - (a < b)
        if name == "isGreaterThan":
            return a > b
        if name == "isLessThan":
            return a < b
    if isinstance(this, str) and len(values) == 1 and isinstance(values[0], str):
        if name == "startsWith":
            return this.startswith(values[0])
        if name == "endsWith":
            return this.endswith(values[0])
        if name == "contains":
            return values[0] in this
    if isinstance(this, (str, list, dict)) and name == "size" and not values:
        return len(this)
    raise Unsupported(f"function {name}")
