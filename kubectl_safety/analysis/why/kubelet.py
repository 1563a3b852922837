"""The kubelet's eviction messages read back (pkg/kubelet/eviction/helpers.go, v1.36.3 and older).

Current (since #111597): ``The node was low on resource: memory. Threshold quantity: 100Mi, available: 87340Ki.
Container app was using 1Gi, request is 256Mi, has larger consumption of memory. ``; before it:
``... Container app was using 1Gi, which exceeds its request of 256Mi. `` (no threshold segment). Also the
local-storage limits, graceful node shutdown (nodeshutdown_manager.go) and critical-pod preemption
(preemption/preemption.go).
"""

import re
from typing import Optional, Tuple

from kubectl_safety.record import record

LOW = re.compile(r"The node was low on resource: ([\w.-]+)\.")
THRESHOLD = re.compile(r"Threshold quantity: ([^,]+), available: (\S+?)\.(?:\s|$)")
USING_NOW = re.compile(r"(Container|Pod) (\S+) was using (\S+), request is (\S+), "
                       r"has larger consumption of ([\w.-]+)\.")
USING_OLD = re.compile(r"(Container|Pod) (\S+) was using (\S+), which exceeds its request of (\S+?)\.(?:\s|$)")
EMPTY_DIR = re.compile(r'Usage of EmptyDir volume "([^"]*)" exceeds the limit "([^"]*)"\.')
POD_STORAGE = re.compile(r"Pod ephemeral local storage usage exceeds the total limit of containers (\S+?)\.(?:\s|$)")
CONTAINER_STORAGE = re.compile(r'Container (\S+) exceeded its local ephemeral storage limit "([^"]*)"\.')
CONDITION = re.compile(r"The node had condition: (.*?)\.\s*$")
SHUTDOWN = "Pod was terminated in response to imminent node shutdown."
CRITICAL = "Preempted in order to admit critical pod"


@record
class Usage:
    container: str  # "" for the pod-level line
    using: str
    request: str


@record
class KubeletMessage:
    kind: str  # pressure | local-storage | shutdown | critical-pod | admission | other
    resource: Optional[str] = None
    threshold: Optional[str] = None
    available: Optional[str] = None
    usage: Tuple[Usage, ...] = ()
    limit: Optional[str] = None  # a local-storage limit
    format: str = ""  # "current" | "old" for a pressure message with usage lines


def read(message: str) -> KubeletMessage:
    text = message or ""
    if SHUTDOWN in text:
        return KubeletMessage("shutdown")
    if CRITICAL in text or "preempted by Kubelet to accommodate a critical pod" in text:
        return KubeletMessage("critical-pod")
    for pattern, resource in ((EMPTY_DIR, "ephemeral-storage"), (POD_STORAGE, "ephemeral-storage"),
                              (CONTAINER_STORAGE, "ephemeral-storage")):
        m = pattern.search(text)
        if m:
            usage = (Usage(m.group(1), "", ""),) if pattern is CONTAINER_STORAGE else ()
            return KubeletMessage("local-storage", resource, limit=m.groups()[-1], usage=usage)
    low = LOW.search(text)
    if low:
        threshold = THRESHOLD.search(text)
        now = [Usage("" if m.group(1) == "Pod" else m.group(2), m.group(3), m.group(4))
               for m in USING_NOW.finditer(text)]
        old = [Usage("" if m.group(1) == "Pod" else m.group(2), m.group(3), m.group(4))
               for m in USING_OLD.finditer(text)]
        return KubeletMessage("pressure", low.group(1), threshold and threshold.group(1).strip(),
                              threshold and threshold.group(2), tuple(now or old),
                              format="current" if now else "old" if old else "")
    condition = CONDITION.search(text)
    if condition:
        return KubeletMessage("admission", condition.group(1))
    return KubeletMessage("other")


def summary(m: KubeletMessage) -> str:
    """One line: what the kubelet says it reclaimed, and from whom."""
    if m.kind == "shutdown":
        return "graceful node shutdown"
    if m.kind == "critical-pod":
        return "preempted by the kubelet to admit a critical pod (the kubelet does not name it)"
    if m.kind == "local-storage":
        who = f"container {m.usage[0].container}" if m.usage else "the pod"
        return f"{who} over its local ephemeral-storage limit {m.limit}"
    if m.kind == "admission":
        return f"rejected at admission: the node had condition {m.resource}"
    if m.kind == "pressure":
        line = f"node low on {m.resource}"
        if m.threshold:
            line += f" (threshold {m.threshold}, available {m.available})"
        for u in m.usage:
            who = f"container {u.container}" if u.container else "the pod"
            line += f"; {who} used {u.using}, request {u.request}"
        return line
    return "evicted by the kubelet"
