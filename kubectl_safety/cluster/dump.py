"""Read ``kubectl get -o yaml|json`` dump files (or stdin, or directories of them)."""

import gc
import json
import os
import re
import sys
from contextlib import contextmanager
from datetime import datetime, timezone

from kubectl_safety.errors import InputError

SUFFIXES = (".yaml", ".yml", ".json")


def expand_paths(paths):
    """Files in the order given; a directory contributes its dump files, sorted by name."""
    out = []
    for path in paths:
        if path == "-":
            out.append(path)
        elif os.path.isdir(path):
            found = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(SUFFIXES))
            if not found:
                raise InputError(f"{path}: directory has no .yaml, .yml or .json files")
            out.extend(found)
        elif os.path.exists(path):
            out.append(path)
        else:
            raise InputError(f"{path}: no such file or directory")
    return out


def read_text(path: str) -> str:
    try:
        data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None
    if b"\x00" in data[:8192]:
        raise InputError(f"{path}: not a text file (binary data)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte {e.start})") from None


MAX_C_NESTING = 1000
_BRACKETS = re.compile(r"[\[\]{}]")


def _nesting(text: str) -> int:
    """The deepest bracket nesting in ``text`` (an upper bound on YAML flow nesting)."""
    if text.count("[") + text.count("{") <= MAX_C_NESTING:
        return 0
    depth = deepest = 0
    for ch in _BRACKETS.findall(text):
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_documents(text: str, path: str) -> list:
    """JSON (one value) or YAML (one or more documents); raises InputError naming the line."""
    stripped = text.lstrip()
    if not stripped:
        raise InputError(f"{path}: empty file")
    if stripped[0] in "{[":
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
        except RecursionError:
            raise InputError(f"{path}: invalid JSON: nested too deeply") from None
        return value if isinstance(value, list) else [value]
    import yaml

    # libyaml recurses on the C stack: a pathologically nested file would crash the process.
    loader = yaml.SafeLoader if _nesting(text) > MAX_C_NESTING else getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return [d for d in yaml.load_all(text, Loader=loader) if d is not None]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InputError(f"{path}: invalid YAML{where}: {problem}") from None
    except (ValueError, TypeError, RecursionError) as e:
        raise InputError(f"{path}: invalid YAML: {e}") from None


@contextmanager
def bulk_load():
    """Parse without the cyclic garbage collector, then freeze what was parsed.

    Decoded API objects are acyclic and live until the command ends, yet each collection would
    walk all of them: on a 150,000-pod dump the collector alone costs twice the parse. Reference
    counting still frees them; ``gc.freeze`` keeps later collections from scanning them again.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        gc.freeze()
    finally:
        if enabled:
            gc.enable()


def load_objects(paths):
    """All ``(origin, document)`` pairs of the given dump paths, and the newest file time."""
    with bulk_load():
        return _load_objects(paths)


def _load_objects(paths):
    from kubectl_safety.model.parse import flatten

    pairs, newest = [], None
    for path in expand_paths(paths):
        docs = parse_documents(read_text(path), path)
        for i, doc in enumerate(docs):
            origin = path if len(docs) == 1 else f"{path} document {i + 1}"
            pairs.extend(flatten(doc, origin))
        if path != "-":
            mtime = datetime.fromtimestamp(os.path.getmtime(path), tz=timezone.utc)
            newest = mtime if newest is None or mtime > newest else newest
    if not pairs:
        raise InputError(f"{', '.join(paths)}: no Kubernetes objects found")
    return pairs, newest
