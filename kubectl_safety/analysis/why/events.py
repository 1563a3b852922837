"""Events read the same from core/v1 and events.k8s.io/v1 (the same stored objects, two shapes)."""

from dataclasses import dataclass
from typing import Mapping, Optional

from kubectl_safety.model.objects import parse_time

OUR_CONTROLLER = "safety.kubectl.io"


@dataclass(frozen=True, slots=True)
class Fact:
    """One event, whichever API it was read through."""

    kind: str  # of the object it regards
    namespace: str
    name: str
    uid: str
    reason: str
    message: str
    type: str
    reporter: str  # reportingController, else source.component
    host: str  # source.host (the kubelet's node)
    action: str
    related: Mapping[str, str]
    annotations: Mapping[str, str]
    first: Optional[object]  # datetime of the first occurrence
    last: Optional[object]  # datetime of the last occurrence
    count: int


def fact(raw: dict) -> Fact:
    """``raw``: an Event as the API serves it (core/v1 ``involvedObject``/``message`` or
    events.k8s.io/v1 ``regarding``/``note``)."""
    meta = raw.get("metadata") or {}
    about = raw.get("regarding") or raw.get("involvedObject") or {}
    source = raw.get("deprecatedSource") or raw.get("source") or {}
    series = raw.get("series") or {}
    first = (parse_time(raw.get("eventTime")) or parse_time(raw.get("deprecatedFirstTimestamp"))
             or parse_time(raw.get("firstTimestamp")) or parse_time(meta.get("creationTimestamp")))
    last = (parse_time(series.get("lastObservedTime")) or parse_time(raw.get("deprecatedLastTimestamp"))
            or parse_time(raw.get("lastTimestamp")) or first)
    count = series.get("count") or raw.get("deprecatedCount") or raw.get("count") or 1
    return Fact(kind=str(about.get("kind") or ""), namespace=str(about.get("namespace") or ""),
                name=str(about.get("name") or ""), uid=str(about.get("uid") or ""),
                reason=str(raw.get("reason") or ""), message=str(raw.get("note") or raw.get("message") or ""),
                type=str(raw.get("type") or ""),
                reporter=str(raw.get("reportingController") or raw.get("reportingComponent")
                             or source.get("component") or ""),
                host=str(source.get("host") or ""), action=str(raw.get("action") or ""),
                related=dict(raw.get("related") or {}), annotations=dict(meta.get("annotations") or {}),
                first=first, last=last, count=int(count) if str(count).isdigit() else 1)


def about(facts, kind, namespace, name, uid=None) -> list:
    """The facts regarding one object, oldest first; with ``uid``: of that incarnation (or naming none:
    the taint manager's and the kubelet's references carry no UID)."""
    out = [f for f in facts if f.kind == kind and f.name == name and f.namespace == (namespace or f.namespace)
           and (not uid or not f.uid or f.uid == uid)]
    return sorted(out, key=lambda f: (f.first is None, f.first or 0))
