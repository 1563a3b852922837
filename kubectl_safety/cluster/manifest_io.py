"""Read a manifest (``-f FILE`` or ``-f -``), YAML or JSON, and validate it with kubernetes-validate."""

import re

from kubectl_safety.cluster.dump import parse_documents, read_text
from kubectl_safety.errors import InputError, SafetyError, UsageError

DEFAULT_VERSION = "1.34.0"  # offline default when --kubernetes-version is not given
MAX_MANIFEST = 64 * 1024 * 1024


def read_manifest(path: str) -> list:
    """Every object in the file or stdin (``-``), ``List``/``items`` flattened, in order."""
    objects = []
    for doc in parse_documents(read_text(path, MAX_MANIFEST), path):
        if not isinstance(doc, dict):
            raise InputError(f"{path}: expected Kubernetes objects, found {type(doc).__name__}")
        kind = doc.get("kind")
        if not isinstance(kind, str):
            raise InputError(f"{path}: 'kind' must be a string")
        items = doc.get("items") or [] if kind.endswith("List") else [doc]
        if not isinstance(items, list):
            raise InputError(f"{path}: 'items' of a {kind} must be a list")
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise InputError(f"{path} item {i}: expected a Kubernetes object, found {type(item).__name__}")
        objects.extend(items)
    if not objects:
        raise InputError(f"{path}: no Kubernetes objects found")
    return objects


def _check_types(obj, origin):
    """The shape checks of dumps (types, ranges, timestamps with a zone), naming the field."""
    from kubectl_safety.model.kinds import WORKLOAD_KINDS
    from kubectl_safety.model.schema import check_shape

    if not isinstance(obj, dict):
        raise InputError(f"{origin}: expected a Kubernetes object, found {type(obj).__name__}")
    kind = obj.get("kind")
    if not isinstance(kind, str):
        raise InputError(f"{origin}: 'kind' must be a string")
    try:
        check_shape(obj, kind, kind in WORKLOAD_KINDS)
    except InputError as e:
        raise InputError(f"{origin}: {kind}: {e}") from None


def _validator():
    """kubernetes-validate, or a one-line error saying how to get it (the krew archive lacks it)."""
    try:
        import kubernetes_validate.utils as kv
    except ImportError:
        raise SafetyError("validating manifests (preemption -f) needs kubernetes-validate: "
                          "python3 -m pip install kubernetes-validate") from None
    return kv


def supported_version(wanted, given_by_user: bool) -> str:
    """The Kubernetes version to validate against (``1.34.7`` style, no leading v).

    A user-given version kubernetes-validate does not know is a usage error; a server version
    it does not know falls back to the newest it has.
    """
    kv = _validator()
    all_versions, latest_version = kv.all_versions, kv.latest_version
    match = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?", wanted or "")
    if match and match.group(1) != "0":
        version = f"{match.group(1)}.{match.group(2)}.{match.group(3) or 0}"
        minors = {tuple(int(x) for x in v.split(".")[:2]) for v in all_versions()}
        if (int(match.group(1)), int(match.group(2))) in minors:
            return version
    if given_by_user:
        raise UsageError(f"--kubernetes-version {wanted}: kubernetes-validate supports "
                         f"{all_versions()[0]} to {latest_version()}")
    return latest_version() if match and match.group(1) != "0" else DEFAULT_VERSION


def validate(obj: dict, version: str, origin: str):
    """Raise InputError naming the field when ``obj`` does not match the API schema."""
    kv = _validator()
    for field in ("apiVersion", "kind"):
        if not obj.get(field):
            raise InputError(f"{origin}: {field} is missing")
    try:
        kv.validate(obj, version, strict=True)
    except kv.ValidationError as e:
        where = _field_path(e.path) or "(top level)"
        raise InputError(f"{origin}: invalid {obj['kind']} for Kubernetes {e.version}: field {where}: "
                         f"{_short(e.message)}") from None
    except kv.SchemaNotFoundError as e:
        raise InputError(f"{origin}: {e.message}") from None
    _check_types(obj, origin)  # what the schema lets through: timestamps without a zone, ranges


def _field_path(path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _short(message: str) -> str:
    line = message.splitlines()[0] if message else ""
    return line if len(line) <= 200 else line[:197] + "..."
