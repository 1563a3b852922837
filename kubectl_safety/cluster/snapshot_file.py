"""``kubectl safety snapshot``'s file: what every command reads, in a ``kubectl get -o json`` List,
whose first item (a ``Snapshot``, made by ``source.read_everything``) records what the read held:
the kinds read (empty ones too), the kinds forbidden or not served, the server version, the time of
the read and the context."""

import json

from kubectl_safety.model.snapshot import NOT_HELD, VERDICT_RESOURCES

KIND, API_VERSION = "Snapshot", "safety.kubectl.io/v1"
# An annotation ``kubectl apply`` leaves: a copy of the object as applied, env values included.
DROPPED_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)


def write(f, record, objects):
    """The record and objects as ``kubectl get -o json`` prints a List (so the dump loader reads it
    slice by slice), on the binary file ``f``; no applied-configuration copy."""
    f.write(b'{\n    "apiVersion": "v1",\n    "items": [\n')
    encode = _encoder()
    for i, obj in enumerate([record] + objects):
        text = encode(_without_applied(obj))
        f.write((b",\n" if i else b"") + b"\n".join(b"        " + line for line in text.split(b"\n")))
    f.write(b'\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')


def _encoder():
    """Object -> 4-space indented JSON bytes (msgspec when installed: several times faster)."""
    try:
        import msgspec
    except ImportError:
        return lambda obj: json.dumps(obj, indent=4, ensure_ascii=False).encode()
    encode = msgspec.json.Encoder().encode
    return lambda obj: msgspec.json.format(encode(obj), indent=4)


def _without_applied(obj) -> dict:
    annotations = (obj.get("metadata") or {}).get("annotations")
    if not isinstance(annotations, dict) or not any(a in annotations for a in DROPPED_ANNOTATIONS):
        return obj
    kept = {k: v for k, v in annotations.items() if k not in DROPPED_ANNOTATIONS}
    return {**obj, "metadata": {**obj["metadata"], "annotations": kept}}


def is_record(obj) -> bool:
    return obj.get("kind") == KIND and obj.get("apiVersion") == API_VERSION


def checked(record, path) -> dict:
    """A snapshot file's record with its fields of their types, else an InputError naming the file."""
    from kubectl_safety.errors import InputError
    from kubectl_safety.model.meta import parse_time

    read, unread, version = record.get("read"), record.get("unread"), record.get("serverVersion")
    try:
        taken = parse_time((record.get("metadata") or {}).get("creationTimestamp"))
    except InputError:
        taken = None
    if (taken is None or taken.tzinfo is None or not isinstance(read, list) or not all(isinstance(r, str) for r in read)
            or not isinstance(unread, dict) or not all(isinstance(v, str) for v in unread.values())
            or not isinstance(version, (str, type(None)))):
        raise InputError(f"{path}: its {KIND} record must hold read (kinds), unread (kind: why), serverVersion and "
                         "metadata.creationTimestamp (an RFC 3339 time)")
    return {**record, "takenAt": taken}


def held(pairs, records) -> dict:
    """What dump ``pairs`` and the (``checked``) records of the snapshot files among them say was not read:
    ``{"unread": resource -> why, "taken_at": the newest read's time or None, "server_version": ...}``.
    A kind a record read is held (empty or not); a kind verdicts rest on that no record read and
    no dump holds an object of is unknown (``NOT_HELD``)."""
    read = {r for record in records for r in record["read"]}
    unread = {r: why for record in records for r, why in record["unread"].items() if r not in read}
    kinds = {kind for _, obj in pairs if isinstance(kind := obj.get("kind"), str)}
    for resource, kind in VERDICT_RESOURCES.items():
        if kind not in kinds and resource not in read:
            unread.setdefault(resource, NOT_HELD)
    newest = max((r["takenAt"] for r in records), default=None)
    versions = [r["serverVersion"] for r in records if r["serverVersion"]]
    return {"unread": unread, "taken_at": newest, "server_version": versions[-1] if versions else None}
