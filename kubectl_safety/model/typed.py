"""The typed model: exactly the fields kubectl-safety reads, per kind, and nothing else.

``KEPT`` is built from ``model/schema.py``'s shape checks (every checked field is kept) plus the
fields read but not checked. A subtree marked ``WHOLE`` is kept as it came; every other field
(``managedFields``, container ``env``, ``volumeMounts``, images, ...) is skipped while decoding.

Two decoders give the same trimmed objects (API-shaped dicts, wrapped by the kinds' classes, ``model/kinds.py``):
- ``decode_json`` (a dump) and ``decode_page`` (a live LIST page): types generated from ``KEPT``
  (a Struct per kind, tagged by ``kind``, whose fields are TypedDicts), decoded straight from
  bytes: skipped fields are never built and nested objects come out as the dicts the model reads;
- ``prune``: the pure-Python path, for YAML, for when msgspec is not installed (the krew archive
  vendors only pure-Python packages) and for an item msgspec rejects, so the shape checks name
  the field exactly as they always have.
"""

from kubectl_safety.model import schema
from kubectl_safety.model.kinds import TABLE
from kubectl_safety.model.schema import CONTAINER, META, SCHEMAS, WORKLOAD

WHOLE = "kept whole"
_META = {**META, "name": WHOLE, "generateName": WHOLE, "resourceVersion": WHOLE}
_POD = SCHEMAS["Pod"]
# Pod: the one kind worth typing deeply (150,000 of them in a large cluster); everything the
# scheduler's filters, eviction, priority, QoS, termination and storage analyses read.
# Volume sources some analysis reads (force_delete: inline network disks, CSI drivers, claims;
# drain and rebalance: local storage), beside the checked fields of model/schema.py. Every
# other source (the service-account token's projected volume, configMap, secret, ...) is
# skipped: a fifth of a pod's memory, read by nothing.
_VOLUME = {**_POD["spec"]["volumes"][0], **{source: WHOLE for source in ("csi", "fc", "iscsi", "nfs")}}
_POD_SPEC = {**_POD["spec"], "containers": [CONTAINER], "initContainers": [CONTAINER], "volumes": [_VOLUME],
             "schedulerName": WHOLE, "schedulingGates": WHOLE}
# Container statuses: what an in-place resize charges (``analysis/resources.py``) and how the
# containers last ended (``why pod``: an OOM kill, its restarts).
_CONTAINER_STATUS = {field: WHOLE for field in ("name", "resources", "allocatedResources", "state", "lastState",
                                                "restartCount")}
_POD_STATUS = {**_POD["status"], "containerStatuses": [_CONTAINER_STATUS], "initContainerStatuses": [_CONTAINER_STATUS],
               "reason": WHOLE, "message": WHOLE}  # a kubelet eviction's reason and message (``why pod``)
_FEW = {"metadata": _META, "spec": WHOLE, "status": WHOLE}  # kinds with few objects: all but metadata
# Kinds whose Structs hold every shape check (constraints included): an object msgspec decoded
# into one needs no second check. The others keep whole subtrees, which ``check_shape`` walks.
CHECKED_BY_TYPE = frozenset(("Pod",))
KEPT = {
    "Pod": {"metadata": _META, "spec": _POD_SPEC, "status": _POD_STATUS},
    # Node: who last set spec.unschedulable is in managedFields (``why node``)
    "Node": {**_FEW, "metadata": {**_META, "managedFields": WHOLE}}, "PodDisruptionBudget": _FEW, "PersistentVolumeClaim": _FEW, "PersistentVolume": _FEW,
    "PriorityClass": {"metadata": _META, "value": WHOLE, "globalDefault": WHOLE, "preemptionPolicy": WHOLE,
                      "description": WHOLE},
    "StorageClass": {"metadata": _META, "provisioner": WHOLE, "volumeBindingMode": WHOLE,
                     "allowedTopologies": WHOLE, "parameters": WHOLE, "reclaimPolicy": WHOLE,
                     "allowVolumeExpansion": WHOLE, "mountOptions": WHOLE},
    "Namespace": {"metadata": _META},
    "LimitRange": {"metadata": _META, "spec": WHOLE}, "ResourceQuota": _FEW, "HorizontalPodAutoscaler": _FEW,
    "RuntimeClass": {"metadata": _META, "handler": WHOLE, "overhead": WHOLE, "scheduling": WHOLE},
    "CSINode": {"metadata": _META, "spec": WHOLE}, "VolumeAttachment": {"metadata": _META, "spec": WHOLE},
    "DeviceClass": {"metadata": _META, "spec": WHOLE}, "ResourceClaimTemplate": {"metadata": _META, "spec": WHOLE},
    "ResourceClaim": _FEW, "ResourceSlice": {"metadata": _META, "spec": WHOLE},
    "Lease": {"metadata": _META, "spec": {"renewTime": WHOLE}},
    # ``kubectl safety snapshot``'s record of what it read (``cluster/snapshot_file.py``)
    "Snapshot": {"metadata": _META, "context": WHOLE, "serverVersion": WHOLE, "read": WHOLE, "unread": WHOLE},
}
# A kind of the table with no entry above: its checked fields if it has a shape, else all but metadata.
KEPT.update({k.kind: {**SCHEMAS[k.kind], "metadata": _META} if k.kind in SCHEMAS else _FEW
             for k in TABLE if k.kind not in KEPT})
_OTHER = {"metadata": _META}  # kinds no analysis reads: enough to name them (duplicates, namespaces)
# Kinds often found in a dump beside ours: decoded in the same pass, metadata only.
KEPT.update({kind: _OTHER for kind in ("Service", "Endpoints", "EndpointSlice", "ConfigMap", "Secret",
                                         "ServiceAccount", "Ingress", "ControllerRevision",
                                         "NetworkPolicy", "Role", "RoleBinding")})
assert set(WORKLOAD) <= set(KEPT["Deployment"])


def _is_object_list(sub) -> bool:
    return isinstance(sub, list) and isinstance(sub[0], dict)


def prune(obj, tree=None):
    """``obj`` (an API object as decoded) with only the fields of ``tree`` (its kind's, by default).

    A value of the wrong type is kept as it is, so that the shape checks name it; a null field is
    dropped (the Structs omit it too).
    """
    if tree is None:
        if not isinstance(obj, dict):
            return obj
        kind = obj.get("kind")
        tree = KEPT.get(kind, _OTHER) if isinstance(kind, str) else _OTHER
        out = {k: obj[k] for k in ("kind", "apiVersion") if obj.get(k) is not None}
    else:
        out = {}
    for key, sub in tree.items():
        value = obj.get(key)
        if value is None:  # null is absent, as in the Structs
            continue
        if isinstance(sub, dict):
            out[key] = prune(value, sub) if isinstance(value, dict) else value
        elif _is_object_list(sub) and isinstance(value, list):
            out[key] = [prune(v, sub[0]) if isinstance(v, dict) else v for v in value]
        else:  # WHOLE, or a leaf of the shape checks
            out[key] = value
    return out


_DECODERS = {}


def _decoders():
    """msgspec decoders (``{"": union of all kinds, kind: one kind}``), or {} without msgspec."""
    if _DECODERS or _DECODERS is None:
        return _DECODERS
    try:
        import msgspec
    except ImportError:
        return _DECODERS
    from typing import Annotated, Any, Literal, Optional, TypedDict, Union

    def struct(name, tree, **options):
        """A kind: a Struct (tagged by ``kind``) whose fields are nested TypedDicts, so that decoding
        builds the nested dicts the model reads directly (``_plain`` makes the top one)."""
        fields = [(key, Optional[field_type(f"{name}_{key}", sub)], None) for key, sub in tree.items()]
        return msgspec.defstruct(name, fields, gc=False, **options)  # acyclic

    def field_type(name, sub):
        """Below the top, a null is refused (the item then takes the generic path, where ``prune``
        drops it), but for timestamps: a zero ``metav1.Time`` is written as null (every pod
        condition's ``lastProbeTime``) and every reader of a timestamp takes null as absent."""
        if isinstance(sub, dict):
            return TypedDict(name, {key: field_type(f"{name}_{key}", s) for key, s in sub.items()}, total=False)
        if _is_object_list(sub):
            return list[field_type(name, sub[0])]
        if isinstance(sub, list):  # a null item passes the shape check
            return list[Optional[field_type(name, sub[0])]]
        return Optional[_leaf(sub)] if sub == schema.TIME else _leaf(sub)

    def _leaf(sub):
        """A shape check's leaf as a msgspec type that accepts no more than the check does."""
        if sub == WHOLE:  # any value but null
            return Union[str, int, float, bool, list, dict]
        if isinstance(sub, frozenset):
            return Literal[tuple(sorted(sub))]
        if isinstance(sub, type):
            return sub
        if sub == schema.STR_MAP:
            return dict[str, str]
        if sub == schema.TIME:
            return Annotated[str, msgspec.Meta(pattern="^(?:" + schema._RFC3339.pattern + r")\Z")]
        low, high = {schema.INT: schema.INT64_RANGE, schema.INT32: schema.INT32_RANGE,
                     schema.NNINT: (0, schema.INT32_RANGE[1]), schema.POSINT: (1, schema.INT32_RANGE[1]),
                     schema.INT_OR_STR: (0, schema.INT32_RANGE[1])}[sub]
        number = Annotated[int, msgspec.Meta(ge=low, le=high)]
        if sub == schema.INT_OR_STR:
            return Union[number, Annotated[str, msgspec.Meta(pattern=r"^0*(?:100|[1-9]?[0-9])%\Z")]]
        return number

    kinds = {kind: struct(kind, {"apiVersion": WHOLE, **tree}, tag_field="kind", tag=kind)
             for kind, tree in KEPT.items()}
    built = {"": msgspec.json.Decoder(Union[tuple(kinds.values())])}
    built.update({kind: msgspec.json.Decoder(cls) for kind, cls in kinds.items()})
    envelope = msgspec.defstruct("Envelope", [("kind", Any, None), ("apiVersion", Any, None),
                                              ("items", Optional[list[msgspec.Raw]], None)])
    built["envelope"] = msgspec.json.Decoder(envelope)
    built["items"] = msgspec.json.Decoder(list[Union[tuple(kinds.values())]])
    built["raw_items"] = msgspec.json.Decoder(list[msgspec.Raw])
    typed_list = msgspec.defstruct("TypedList", [("kind", Any, None), ("apiVersion", Any, None),
                                                 ("items", Optional[list[Union[tuple(kinds.values())]]], None)])
    built["list"] = msgspec.json.Decoder(typed_list)
    built["any"] = msgspec.json.Decoder()
    built["pages"] = {kind: msgspec.json.Decoder(msgspec.defstruct(
        f"{kind}Page", [("kind", Any, None), ("apiVersion", Any, None), ("metadata", Any, None),
                        ("items", Optional[list[cls]], None)])) for kind, cls in kinds.items()}
    built["to_builtins"] = _plain
    built["errors"] = (msgspec.ValidationError, msgspec.DecodeError)
    built["validation"] = msgspec.ValidationError
    _DECODERS.update(built)  # whole, at once: a second thread never sees them half built
    return _DECODERS


def _plain(item) -> dict:
    """A decoded kind's Struct as the API-shaped dict (its fields are dicts already), null fields
    left out."""
    out = {"kind": item.__struct_config__.tag}
    for name in item.__struct_fields__:
        value = getattr(item, name)
        if value is not None:
            out[name] = value
    return out


class Pairs(list):
    """``(origin, object)`` pairs; ``checked`` holds the ids of objects whose Struct did every shape check."""

    def __init__(self, *args):
        super().__init__(*args)
        self.checked = set()
        self.records = []  # what ``kubectl safety snapshot`` files say they hold (``cluster/snapshot_file.py``)

    def add(self, origin, obj, typed_kind):
        self.append((origin, obj))
        if typed_kind in CHECKED_BY_TYPE:
            self.checked.add(id(obj))


def decode_json(holder: list, origin: str):
    """``(origin, trimmed object)`` pairs of a JSON list document (``kind: List`` or ``PodList``, ...),
    decoded from the bytes in ``holder`` (emptied once they are decoded, so that they are freed
    before the objects are built); None when msgspec is missing or the document is anything
    else (then the generic path decodes it and names what is wrong)."""
    decoders = _decoders()
    if not decoders:
        return None
    errors, to_builtins = decoders["errors"], decoders["to_builtins"]
    try:  # one pass when every item names a kind the model knows (``kubectl get -o json``)
        document = decoders["list"].decode(holder[0])
    except decoders["validation"]:
        return _decode_items(holder[0], origin, decoders)
    except errors:  # not JSON msgspec takes: the generic path says why
        return None
    kind, items = document.kind, document.items
    if items is None or kind != "List":
        return _decode_items(holder[0], origin, decoders)
    holder.clear()
    pairs = Pairs()
    for i, item in enumerate(items):
        items[i] = None
        obj = to_builtins(item)
        pairs.add(f"{origin} item {i}", obj, obj["kind"])
    return pairs


def _decode_items(data, origin, decoders):
    """Item by item: a typed list (``PodList``), other kinds, or items the shape checks reject."""
    errors = decoders["errors"]
    try:
        envelope = decoders["envelope"].decode(data)
    except errors:
        return None
    kind, items = envelope.kind, envelope.items
    if items is None or not isinstance(kind, str) or not kind.endswith("List"):
        return None
    item_kind = kind[:-4] if kind != "List" else None
    return _each(items, origin, 0, decoders, Pairs(), item_kind, envelope.apiVersion)


def _each(items, origin, start, decoders, pairs, item_kind=None, api_version=None):
    """Add the raw JSON ``items`` (numbered from ``start``) to ``pairs`` one by one: typed where
    they decode (as ``item_kind`` of a typed list: ``PodList``), else by the generic path, which
    keeps what the shape checks name (another kind, a wrong type, a null where a value belongs).
    None when an item is not even generic msgspec JSON: then the caller's generic path says why."""
    from kubectl_safety.model.parse import flatten

    errors = decoders["errors"]
    decoder = decoders.get(item_kind) if item_kind in KEPT else decoders[""]
    to_builtins, generic = decoders["to_builtins"], decoders["any"].decode
    for i, raw in enumerate(items, start):
        items[i - start] = None
        try:
            obj = to_builtins(decoder.decode(raw))
        except errors:
            try:
                obj = generic(raw)
            except errors:  # what msgspec cannot hold (an integer past 64 bits): json names it
                return None
            if isinstance(obj, dict) and item_kind:
                obj.setdefault("kind", item_kind)
                obj.setdefault("apiVersion", api_version)
            pairs.extend((where, prune(o)) for where, o in flatten(obj, f"{origin} item {i}"))
            continue
        if item_kind and "apiVersion" not in obj:
            obj["apiVersion"] = api_version
        pairs.add(f"{origin} item {i}", obj, obj["kind"])
    return pairs


class TypedPage(dict):
    """A LIST page ``decode_page`` decoded into the typed model: its items are trimmed already and,
    if ``checked`` (a kind in ``CHECKED_BY_TYPE``), shape-checked by their Struct."""

    checked = False


SMALL_PAGE = 256 << 10  # bytes: json and ``prune`` take under ~5 ms; building the decoders ~25 ms


def decode_page(data, kind: str):
    """A live LIST page of ``kind`` decoded straight into the typed model (items as trimmed dicts,
    with ``kind`` set), or None for the generic path (no msgspec, another shape, a wrong type, or
    a small page while the decoders are not built: a node-scoped command reads only small pages,
    and building them would cost it more than it saves)."""
    if not _DECODERS and _DECODERS is not None and len(data) < SMALL_PAGE:
        return None
    decoders = _decoders()
    if not decoders or kind not in decoders["pages"]:
        return None
    try:
        page = decoders["pages"][kind].decode(data)
    except decoders["errors"]:
        return None
    if page.items is None:
        return None
    to_builtins, items = decoders["to_builtins"], page.items
    for i, item in enumerate(items):
        items[i] = to_builtins(item)
    typed_page = TypedPage(kind=page.kind, apiVersion=page.apiVersion, metadata=page.metadata, items=items)
    typed_page.checked = kind in CHECKED_BY_TYPE
    return typed_page


# kubectl's -o json: 4-space indentation, so an item of the top-level "items" array opens and
# closes on lines indented by 8 spaces. JSON strings hold no raw line break: these are structure.
_HEAD = b'{\n    "apiVersion": "v1",\n    "items": [\n        {\n'
_BETWEEN = b"\n        },\n        {\n"
_END = b"\n        }\n    ]"
SLICE = 1 << 20  # measured: 1 MiB slices are as fast as the whole file, 16 MiB slower


def _decode_slice(buffer, end, decoders, origin, index, pairs):
    """The items of ``buffer[:end + 1]`` (a JSON array) as Structs; where the types refuse an
    item, that slice is added to ``pairs`` item by item instead (``_each``) and the result is the
    number of items; None if it is not JSON."""
    errors = decoders["errors"]
    try:
        with memoryview(buffer) as view, view[:end + 1] as whole:
            return decoders["items"].decode(whole)
    except decoders["validation"]:
        pass
    except errors:
        return None
    try:  # from a copy: the Raw items keep the buffer they point into
        raws = decoders["raw_items"].decode(bytes(buffer[:end + 1]))
    except errors:
        return None
    return None if _each(raws, origin, index, decoders, pairs) is None else len(raws)


def decode_json_slices(f, origin: str, limit: int):
    """``(origin, trimmed object)`` pairs of a ``kubectl get -o json`` List read from the binary file
    ``f`` in slices of about ``SLICE`` bytes, each decoded into Structs and turned into dicts before
    the next is read: only the objects stay in memory. None (nothing kept) for anything else, or
    when a slice is not whole JSON: then the caller reads the file whole.
    """
    decoders = _decoders()
    if not decoders:
        return None
    head = f.read(len(_HEAD))
    if head != _HEAD:
        return None
    to_builtins, errors = decoders["to_builtins"], decoders["errors"]
    pairs, buffer, total, index, last = Pairs(), bytearray(b"[        {\n"), len(head), 0, False
    chunk = bytearray(SLICE)  # one reused read buffer: a fresh one per read would be mapped and faulted in each time
    with memoryview(chunk) as read_view:
        while not last:
            n = f.readinto(read_view)
            total += n
            start = len(buffer)
            buffer += read_view[:n]
            if total > limit or buffer.find(b"\x00", start) >= 0:
                return None
            last = not n
            cut = buffer.rfind(_END if last else _BETWEEN)
            if cut < 0:
                if last:
                    return None
                continue
            end = cut + 10  # just past the item's "}": there the "," (or line break) becomes the array's "]"
            buffer[end] = ord("]")
            items = _decode_slice(buffer, end, decoders, origin, index, pairs)
            if items is None:
                return None
            del buffer[:end]  # in place (the front of a bytearray moves): the rest, after a "["
            buffer[0] = ord("[")
            if isinstance(items, int):  # added item by item
                index += items
                continue
            for i, item in enumerate(items):
                items[i] = None
                obj = to_builtins(item)
                pairs.add(f"{origin} item {index}", obj, obj["kind"])
                index += 1
    try:  # what follows the items: the rest of the List, which must be valid and say so
        envelope = decoders["envelope"].decode(_HEAD[:-11] + b"]" + buffer[1 + len("    ]"):])
    except errors:
        return None
    return pairs if envelope.kind == "List" and envelope.items == [] else None
