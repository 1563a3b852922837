"""The one parser: API-shaped camelCase dicts (from a dump file or the live API) -> snapshot."""

from kubectl_safety.errors import InputError
from kubectl_safety.model.kinds import BY_KIND, CLUSTER_SCOPED, FIELDS, WORKLOAD_KINDS
from kubectl_safety.model.schema import check_shape
from kubectl_safety.model.snapshot import ClusterSnapshot


def flatten(document, origin: str):
    """Yield ``(origin, object)`` for a document, expanding ``kind: List`` / ``*List`` items."""
    if document is None:
        return
    if not isinstance(document, dict):
        raise InputError(f"{origin}: expected a Kubernetes object, got {type(document).__name__}")
    kind = document.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in document:
        items = document.get("items") or []
        if not isinstance(items, list):
            raise InputError(f"{origin}: 'items' of a {kind} must be a list")
        item_kind = kind[:-4] if kind != "List" else None
        api_version = document.get("apiVersion")
        for i, item in enumerate(items):
            if isinstance(item, dict) and item_kind:
                # The API server's typed lists (PodList) omit kind/apiVersion on their items.
                item.setdefault("kind", item_kind)
                item.setdefault("apiVersion", api_version)
            yield from flatten(item, f"{origin} item {i}")
        return
    yield origin, document


def check_object(obj: dict, origin: str, typed: bool = False):
    """Reject what no real API object looks like, naming the field.

    ``typed``: msgspec decoded it into a Struct that holds every shape check (``model/typed.py``).
    """
    kind = obj.get("kind")
    if not isinstance(kind, str) or not kind:
        raise InputError(f"{origin}: missing 'kind'")
    if not isinstance(obj.get("apiVersion"), str):
        raise InputError(f"{origin}: {kind} is missing 'apiVersion'")
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise InputError(f"{origin}: {kind} is missing 'metadata.name'")
    try:
        check_shape(obj, kind, kind in WORKLOAD_KINDS, typed)
    except InputError as e:
        raise InputError(f"{origin}: {kind} {meta['name']}: {e}") from None


def build_snapshot(objects, *, taken_at=None, source="", server_version=None,
                   namespaces=None, complete_pod_namespaces=None, unread=None) -> ClusterSnapshot:
    """Build a snapshot from ``(origin, dict)`` pairs; unknown kinds are ignored.

    Duplicate objects (same kind, namespace and name) are an error naming both origins.
    ``objects.checked``, if present: ids of objects whose shape msgspec already checked.
    ``unread``: the resources a live read could not read, and why.
    """
    checked = getattr(objects, "checked", ())
    buckets = {field: [] for field in FIELDS}
    classes = {}  # kind -> its class, looked up once
    seen, seen_uids = {}, {}
    found_namespaces = set(namespaces or ())
    for origin, obj in objects:
        check_object(obj, origin, id(obj) in checked)
        kind, meta = obj["kind"], obj["metadata"]
        namespace = "" if kind in CLUSTER_SCOPED else (meta.get("namespace") or "default")
        key = (kind, namespace, meta["name"])
        if key in seen:
            if kind == "Event" and meta.get("uid") and seen_uids.get(key) == meta["uid"]:
                continue  # one Event read through both its API versions (core/v1, events.k8s.io/v1)
            where = f"{namespace}/{meta['name']}" if namespace else meta["name"]
            raise InputError(f"{origin}: duplicate {kind} {where} (first in {seen[key]})")
        seen[key] = origin
        if kind == "Event":
            seen_uids[key] = meta.get("uid")
        if kind == "Namespace":
            found_namespaces.add(meta["name"])
            continue
        if namespace and not meta.get("namespace"):
            obj = {**obj, "metadata": {**meta, "namespace": namespace}}
        if namespace:
            found_namespaces.add(namespace)
        held = BY_KIND.get(kind)
        if held is not None and held.field:
            parse = classes.get(kind) or classes.setdefault(kind, held.parse)
            buckets[held.field].append(parse(obj))
    return ClusterSnapshot(**buckets, namespaces=found_namespaces, taken_at=taken_at, source=source,
                           server_version=server_version, complete_pod_namespaces=complete_pod_namespaces,
                           unread=unread)
