"""The metadata every API object has (``ApiObject``) and the API's timestamps."""

from datetime import datetime, timezone

from kubectl_safety.errors import InputError
from kubectl_safety.model.cached import cached


def parse_time(value):
    """RFC 3339 text (or a YAML-loaded datetime) -> aware UTC datetime; None stays None."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"invalid timestamp {value!r}") from None


class ApiObject:
    """Common metadata accessors (cached: a snapshot's objects are never changed in place)."""

    kind = ""

    def __init__(self, raw: dict):
        self.raw = raw

    @cached
    def meta(self) -> dict:
        return self.raw.get("metadata") or {}

    @cached
    def spec(self) -> dict:
        return self.raw.get("spec") or {}

    @cached
    def status(self) -> dict:
        return self.raw.get("status") or {}

    @cached
    def name(self) -> str:
        return self.meta.get("name", "")

    @cached
    def namespace(self) -> str:
        return self.meta.get("namespace") or ""

    @cached
    def uid(self) -> str:
        return self.meta.get("uid") or ""

    @cached
    def labels(self) -> dict:
        return self.meta.get("labels") or {}

    @cached
    def annotations(self) -> dict:
        return self.meta.get("annotations") or {}

    @property
    def owner_references(self) -> list:
        return self.meta.get("ownerReferences") or []

    @cached
    def controller_ref(self):
        for ref in self.owner_references:
            if ref.get("controller"):
                return ref
        return None

    @cached
    def creation_timestamp(self):
        return parse_time(self.meta.get("creationTimestamp"))

    @cached
    def deletion_timestamp(self):
        return parse_time(self.meta.get("deletionTimestamp"))

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def __repr__(self):
        return f"<{type(self).__name__} {self.ref}>"
