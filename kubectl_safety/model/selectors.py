"""Label selectors, node selector terms, taints and tolerations, with upstream semantics."""

import re

from kubectl_safety.errors import InputError, NotFoundError, UsageError

_KEY = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                  r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")


def match_labels(raw):
    """A raw LabelSelector's ``matchLabels`` as written ({} when absent; None when ``raw`` is no selector)."""
    return (raw.get("matchLabels") or {}) if isinstance(raw, dict) else None


class LabelSelector:
    """A ``metav1.LabelSelector``: matchLabels AND matchExpressions.

    ``LabelSelector.parse(None)`` is None: callers decide what a missing selector means
    (policy/v1 PDBs: nothing; the scheduler's PDB check: nothing). An empty selector
    (``{}``) matches everything; ``is_empty`` lets the scheduler's rule treat it as nothing.
    """

    __slots__ = ("requirements",)

    def __init__(self, requirements):
        self.requirements = tuple(requirements)  # (key, operator, frozenset(values))

    @classmethod
    def parse(cls, raw):
        if raw is None:
            return None
        labels, exprs = (match_labels(raw), raw.get("matchExpressions") or []) if isinstance(raw, dict) else (None, None)
        if not isinstance(labels, dict) or not isinstance(exprs, list) or not all(isinstance(e, dict) for e in exprs):
            raise InputError(f"invalid label selector {raw!r}"[:200])
        reqs = [(k, "In", frozenset([str(v)])) for k, v in labels.items()]
        for expr in exprs:
            op = expr.get("operator")
            if not isinstance(expr.get("values") or [], list):
                raise InputError(f"invalid label selector: values of {expr.get('key')!r} must be a list")
            values = frozenset(str(v) for v in expr.get("values") or [])
            if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
                raise InputError(f"invalid label selector operator {op!r}")
            if op in ("In", "NotIn") and not values:
                raise InputError(f"label selector operator {op} on {expr.get('key')!r} needs values")
            reqs.append((expr.get("key"), op, values))
        return cls(reqs)

    @classmethod
    def from_string(cls, text: str):
        """Parse kubectl's ``-l`` syntax: ``a=b,c!=d,e in (x,y),f notin (z),g,!h``.

        A malformed selector is a UsageError: selectors come from command-line flags.
        """
        try:
            return cls._from_string(text)
        except InputError as e:
            raise UsageError(str(e)) from None

    @classmethod
    def _from_string(cls, text: str):
        reqs = []
        for part in _split_selector(text):
            m = re.match(r"^(\S+)\s+(in|notin)\s+\(([^)]*)\)$", part)
            if m:
                key, op, values = m.group(1), m.group(2), [v.strip() for v in m.group(3).split(",")]
                reqs.append((_check_key(key, text), "In" if op == "in" else "NotIn",
                             frozenset(_check_value(v, text) for v in values if v)))
                continue
            m = re.match(r"^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$", part)
            if m:
                key, op, value = m.groups()
                reqs.append((_check_key(key, text), "NotIn" if op == "!=" else "In",
                             frozenset([_check_value(value, text)])))
                continue
            if part.startswith("!"):
                reqs.append((_check_key(part[1:].strip(), text), "DoesNotExist", frozenset()))
                continue
            reqs.append((_check_key(part, text), "Exists", frozenset()))
        return cls(reqs)

    @property
    def is_empty(self) -> bool:
        return not self.requirements

    def matches(self, labels) -> bool:
        labels = labels or {}
        for key, op, values in self.requirements:
            present = key in labels
            if op == "In" and not (present and labels[key] in values):
                return False
            if op == "NotIn" and present and labels[key] in values:
                return False
            if op == "Exists" and not present:
                return False
            if op == "DoesNotExist" and present:
                return False
        return True

    def __str__(self):
        parts = []
        for key, op, values in self.requirements:
            if op == "In" and len(values) == 1:
                parts.append(f"{key}={next(iter(values))}")
            elif op in ("In", "NotIn"):
                parts.append(f"{key} {op.lower()} ({','.join(sorted(values))})")
            else:
                parts.append(key if op == "Exists" else f"!{key}")
        return ",".join(parts)


def selector_query(raw) -> str:
    """A LabelSelector object as the API's ``labelSelector`` parameter, its requirements sorted: one
    spelling per selector."""
    selector = LabelSelector.parse(raw or {})
    return str(LabelSelector(sorted(selector.requirements, key=lambda r: (r[0], r[1], sorted(r[2])))))


def matching_nodes(selector, nodes, text=None) -> list:
    """The names of the ``nodes`` a ``-l`` selector matches, sorted; none is an error naming the
    selector (``text``: as the user wrote it) and, where close, the labels the nodes do have."""
    names = sorted(n.name for n in nodes if selector.matches(n.labels))
    if names:
        return names
    close = _close_labels(selector, nodes)
    hint = f" (the nodes have {', '.join(close)})" if close else ""
    raise NotFoundError(f"no node matches the selector {text or selector}{hint}")


def _close_labels(selector, nodes, limit=5) -> list:
    """Labels of ``nodes`` near the selector's: the values of a key it names, else keys spelled alike."""
    from difflib import get_close_matches

    labels = {}
    for node in nodes:
        for key, value in (node.labels or {}).items():
            labels.setdefault(key, set()).add(value)
    out = []
    for key, _, _ in selector.requirements:
        keys = [key] if key in labels else get_close_matches(key, list(labels), n=2, cutoff=0.75)
        out += [f"{k}={v}" if v else k for k in keys for v in sorted(labels[k])]
    return list(dict.fromkeys(out))[:limit]


def _split_selector(text):
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    parts.append(current.strip())
    if depth or any(not p for p in parts):
        raise InputError(f"invalid label selector {text!r}")
    return parts


def _check_key(key, text):
    if not key or not _KEY.match(key) or len(key.split("/")[-1]) > 63:
        raise InputError(f"invalid label selector {text!r}: bad key {key!r}")
    return key


def _check_value(value, text):
    if len(value) > 63 or not _VALUE.match(value):
        raise InputError(f"invalid label selector {text!r}: bad value {value!r}")
    return value


def node_selector_term_matches(term, node) -> bool:
    """One ``nodeSelectorTerm``: all matchExpressions (labels) and matchFields (name) hold."""
    for expr in term.get("matchExpressions") or []:
        if not _node_requirement(expr, node.labels):
            return False
    for expr in term.get("matchFields") or []:
        if expr.get("key") != "metadata.name" or not _node_requirement(expr, {"metadata.name": node.name}):
            return False
    return bool(term.get("matchExpressions") or term.get("matchFields"))


def _node_requirement(expr, labels) -> bool:
    key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        try:
            have, want = int(labels[key]), int(values[0])
        except (KeyError, IndexError, ValueError):
            return False
        return have > want if op == "Gt" else have < want
    return False


def pod_matches_node_selector_and_affinity(pod, node) -> bool:
    """The NodeAffinity filter: ``spec.nodeSelector`` AND required node affinity."""
    labels = node.labels
    for k, v in pod.node_selector.items():
        if labels.get(k) != v:
            return False
    required = pod.required_node_affinity
    if required is None:
        return True
    terms = required.get("nodeSelectorTerms") or []
    return any(node_selector_term_matches(t, node) for t in terms)


def toleration_tolerates(toleration, taint) -> bool:
    """``Toleration.ToleratesTaint``: effect, key and operator (Exists/Equal) all agree."""
    effect = toleration.get("effect")
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key")
    if key and key != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    return op == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated_taint(pod, node, effects=("NoSchedule", "NoExecute")):
    """The first taint of ``node`` with one of ``effects`` that ``pod`` does not tolerate."""
    for taint in node.taints:
        if taint.get("effect") in effects and not any(
                toleration_tolerates(t, taint) for t in pod.tolerations):
            return taint
    return None
