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


def _expand(paths):
    """``(file, whether a directory listing found it)`` for each file in the order given; a directory
    contributes its dump files, sorted by name."""
    out = []
    for path in paths:
        if path == "-":
            out.append((path, False))
        elif os.path.isdir(path):
            found = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(SUFFIXES))
            if not found:
                raise InputError(f"{path}: directory has no .yaml, .yml or .json files")
            out.extend((f, True) for f in found)
        elif os.path.exists(path):
            out.append((path, False))
        else:
            raise InputError(f"{path}: no such file or directory")
    return out


def refuse_manifest(path, pairs):
    """A file a directory listing found must be a dump: an object with neither a status nor the
    creation time the API server sets was written, not read (a manifest), and is refused: it
    would be merged as if it ran."""
    for _, obj in pairs:
        meta = obj.get("metadata") or {}
        if "status" not in obj and not meta.get("creationTimestamp"):
            name = "/".join(str(p) for p in (meta.get("namespace"), meta.get("name")) if p)
            raise InputError(f"{path}: {obj.get('kind')} {name} has no status: a manifest, not a dump "
                             "(a --snapshot directory holds only dumps; move the file out)")


MAX_DUMP = 16 * 1024 ** 3  # a dump of 150,000 pods with managedFields is about 4.6 GB


def read_bytes(path: str, limit: int = MAX_DUMP) -> bytes:
    """A regular file (or stdin) of at most ``limit`` bytes, that is no binary file."""
    from kubectl_safety.cluster.files import read_limited, read_stream

    try:
        data = read_stream(sys.stdin.buffer, limit) if path == "-" else read_limited(path, limit)
    except OSError as e:
        reason = e.strerror or str(e)
        raise InputError(f"{path}: {'' if reason.startswith('not a') else 'cannot read: '}{reason}") from None
    if b"\x00" in data[:8192]:
        raise InputError(f"{path}: not a text file (binary data)")
    return data


def read_text(path: str, limit: int = MAX_DUMP) -> str:
    """A regular file (or stdin) of at most ``limit`` bytes, as UTF-8 text."""
    return as_text(read_bytes(path, limit), path)


def as_text(data, path: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte {e.start})") from None


MAX_C_NESTING = 200
MAX_DEPTH = 100  # no Kubernetes object nests half as deep
MAX_NODES = 20_000_000  # YAML nodes after expanding aliases (an alias bomb expands to billions)
# YAML nodes composed: each costs some 350 bytes while a document is composed and built, so that
# the bound holds well before a small machine's memory does. Large clusters: ``-o json`` dumps,
# decoded slice by slice into the trimmed model.
MAX_YAML_NODES = 2_500_000
_BRACKETS = re.compile(r"[\[\]{}]")
# What could make a block-style document nest deeply, or use anchors: then the bounded loader.
_RISKY = re.compile(r"^[ \t]{150}|(?:[-?][ \t]+){50}|(?:^|[\s\[{,])&[^\s]", re.M)


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
    """JSON (one value) or YAML (one or more documents); raises InputError naming the line.
    Text that starts as JSON does but is not JSON is read as YAML (a flow mapping, ``{kind: List}``),
    unless the file is named ``.json``."""
    stripped = text.lstrip()
    if not stripped:
        raise InputError(f"{path}: empty file")
    if stripped[0] in "{[":
        try:
            value = json.loads(text, parse_constant=_no_constant)
        except json.JSONDecodeError as e:  # YAML in flow style starts so too (but not in a .json file)
            json_error = f"{path}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}"
            if path.lower().endswith(".json"):
                raise InputError(json_error) from None
            try:
                return _yaml_documents(text, path)
            except InputError as yaml_error:
                raise InputError(f"{json_error} (nor YAML:{str(yaml_error)[len(path) + 1:]})") from None
        except RecursionError:
            raise InputError(f"{path}: invalid JSON: nested too deeply") from None
        except ValueError as e:  # NaN/Infinity, integers of thousands of digits
            raise InputError(f"{path}: invalid JSON: {str(e).split(';')[0][:120]}") from None
        return value if isinstance(value, list) else [value]
    return _yaml_documents(text, path)


def _yaml_documents(text: str, path: str) -> list:
    import yaml

    try:
        return [d for d in load_yaml_all(text) if d is not None]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InputError(f"{path}: invalid YAML{where}: {problem}") from None
    except RecursionError:
        raise InputError(f"{path}: invalid YAML: nested too deeply") from None
    except (ValueError, TypeError) as e:
        raise InputError(f"{path}: invalid YAML: {str(e).split(';')[0][:160]}") from None


def _no_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def load_yaml_all(text: str) -> list:
    """YAML documents; libyaml when the text cannot nest deeply nor use anchors, else the bounded loader.

    libyaml composes on the C stack (a deeply nested document crashes the process) and aliases
    expand without limit; the pure-Python loader here bounds depth and the expanded size.
    """
    import yaml

    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None and _node_bound(text) > MAX_YAML_NODES:
        _count_nodes(text, fast)  # libyaml's parser keeps its own stack: events are safe at any depth
    if fast is not None and _nesting(text) <= MAX_C_NESTING and not _RISKY.search(text):
        return list(yaml.load_all(text, Loader=fast))
    return list(yaml.load_all(text, Loader=_bounded_loader()))


def _node_bound(text: str) -> int:
    """An upper bound on the YAML nodes of ``text``, counted without building any: but the root,
    every node follows a ``-``, ``:`` (key and value), ``?``, ``,``, ``[`` or ``{``."""
    return 1 + text.count("-") + 2 * text.count(":") + 2 * text.count("?") + \
        text.count(",") + text.count("[") + text.count("{")


def _count_nodes(text: str, loader):
    """Parse events only (one at a time: no memory kept) and refuse more than ``MAX_YAML_NODES`` nodes."""
    import yaml

    nodes = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.NodeEvent):
            nodes += 1
            if nodes > MAX_YAML_NODES:
                raise yaml.YAMLError(_too_many_nodes(event.start_mark))


def _too_many_nodes(mark) -> str:
    where = f" (line {mark.line + 1})" if mark else ""
    return f"more than {MAX_YAML_NODES} nodes{where}: for a cluster this large, dump it with -o json"


def safe_yaml(text: str):
    """One YAML document (or None), with the bounds of ``load_yaml_all``."""
    docs = load_yaml_all(text)
    return docs[0] if docs else None


_LOADER = []


def _bounded_loader():
    if _LOADER:
        return _LOADER[0]
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        """SafeLoader with bounds on nesting, on the nodes composed and on the size aliases expand to."""

        depth = nodes = 0

        def compose_node(self, parent, index):
            self.depth += 1
            self.nodes += 1
            try:
                if self.nodes > MAX_YAML_NODES:
                    raise yaml.YAMLError(_too_many_nodes(self.peek_event().start_mark))
                if self.depth > MAX_DEPTH:
                    mark = self.peek_event().start_mark
                    raise yaml.YAMLError(f"nested more than {MAX_DEPTH} levels deep (line {mark.line + 1})")
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

        def compose_document(self):
            node = super().compose_document()
            if _expanded_size(node, {}) > MAX_NODES:
                raise yaml.YAMLError(f"aliases expand to more than {MAX_NODES} nodes")
            return node

    _LOADER.append(BoundedLoader)
    return BoundedLoader


def _expanded_size(node, memo) -> int:
    """Nodes of ``node`` with aliases expanded (memoized per node: linear in the document)."""
    key = id(node)
    if memo.get(key) == -1:
        import yaml

        raise yaml.YAMLError("an alias refers to a node that contains it (a recursive document)")
    if key not in memo:
        memo[key] = -1
        value = node.value
        if isinstance(value, list):
            total = 1
            for item in value:
                for child in (item if isinstance(item, tuple) else (item,)):
                    total += _expanded_size(child, memo)
                    if total > MAX_NODES:
                        break
            memo[key] = total
        else:
            memo[key] = 1
    return memo[key]


def _decode_sliced(path: str):
    """A ``kubectl get -o json`` dump decoded slice by slice as it is read (``model/typed.py``), or None."""
    from kubectl_safety.cluster.files import open_limited
    from kubectl_safety.model.typed import decode_json_slices

    try:
        with open_limited(path, MAX_DUMP) as f:
            return decode_json_slices(f, path, MAX_DUMP)
    except OSError:  # read whole, the error is named there
        return None


def decode_dump(holder: list, path: str) -> list:
    """``(origin, object)`` pairs of one dump file's bytes (``holder``'s one item), each object
    trimmed to the typed model; ``holder`` is emptied as soon as its bytes are decoded.

    A JSON list goes straight from bytes into the typed model (``model/typed.py``); anything else,
    or without msgspec, through the generic path (json/YAML, then ``prune``) whose errors name
    the line or field.
    """
    from kubectl_safety.model.parse import flatten
    from kubectl_safety.model.typed import decode_json, prune

    if holder[0][:64].lstrip()[:1] == b"{":
        pairs = decode_json(holder, path)
        if pairs is not None:
            return pairs
    docs = parse_documents(as_text(holder.pop(), path), path)
    pairs = []
    for i, doc in enumerate(docs):
        origin = path if len(docs) == 1 else f"{path} document {i + 1}"
        pairs.extend((where, prune(obj)) for where, obj in flatten(doc, origin))
        docs[i] = None
    return pairs


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
    """All ``(origin, document)`` pairs of the given dump paths, and the newest file time; the
    ``kubectl safety snapshot`` records among them (``cluster/snapshot_file.py``) apart, in the
    pairs' ``records``."""
    with bulk_load():
        return _load_objects(paths)


def _load_objects(paths):
    from kubectl_safety.cluster.snapshot_file import checked, is_record
    from kubectl_safety.model.typed import Pairs

    pairs, newest = Pairs(), None
    for path, listed in _expand(paths):
        decoded = None if path == "-" else _decode_sliced(path)
        if decoded is None:
            decoded = decode_dump([read_bytes(path)], path)
        if listed:
            refuse_manifest(path, decoded)
        if decoded and is_record(decoded[0][1]):  # a snapshot's record: its first item
            pairs.records.append(checked(decoded.pop(0)[1], path))
        pairs.extend(decoded)
        pairs.checked.update(getattr(decoded, "checked", ()))
        if path != "-":
            mtime = datetime.fromtimestamp(os.path.getmtime(path), tz=timezone.utc)
            newest = mtime if newest is None or mtime > newest else newest
    if not pairs and not pairs.records:
        raise InputError(f"{', '.join(paths)}: no Kubernetes objects found")
    return pairs, newest
