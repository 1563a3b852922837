"""The health gate after pods moved: every PDB covering them back at its desired healthy count, every
workload whose pods moved with as many Ready pods as before and none Pending.

Watches only what moved (each workload's pods by their labels, each PDB by name), so its cost
depends on what moved, not on the cluster's size.
"""

from kubectl_safety.analysis.plans.common import MOVING
from kubectl_safety.engine.drainer import owner_of, budget_watch
from kubectl_safety.model.selectors import selector_query

PER_POD_LABELS = ("statefulset.kubernetes.io/pod-name", "apps.kubernetes.io/pod-index")
OWNERS = {"ReplicaSet": "replicasets", "StatefulSet": "statefulsets", "ReplicationController": "replicationcontrollers",
          "Job": "jobs"}


def _selector(connection, pod) -> str:
    """The label selector of the pod's controller (one GET), as the API takes it; if the controller
    cannot be read, the pod's own labels but the per-pod ones."""
    meta = pod.get("metadata") or {}
    ref = next((r for r in meta.get("ownerReferences") or [] if r.get("controller")), {})
    resource = OWNERS.get(ref.get("kind"))
    if resource:
        try:
            owner = connection.get(resource, ref["name"], meta.get("namespace"), optional=True)
        except Exception:  # noqa: BLE001 - any failure: fall back to the pod's labels
            owner = None
        selector = ((owner or {}).get("spec") or {}).get("selector")
        if ref.get("kind") == "ReplicationController" and selector:
            selector = {"matchLabels": selector}
        if selector:
            return selector_query(selector)
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in PER_POD_LABELS}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


class HealthGate:
    """Made before pods move (from the plan of what moves): the pods of each workload that moves (by
    its pods' labels) and each PDB that covers them are watched; never a whole namespace.
    ``recorded``: what an earlier run's gate checked (``record()``), checked again with its counts."""

    def __init__(self, group, pods, recorded=None):
        moving = [p for p in pods if p.action in MOVING]
        recorded = recorded or {}
        self.group = group
        refs = {p.pdb for p in moving if p.pdb} | set(recorded.get("pdbs") or [])
        self.pdbs = {ref: budget_watch(group, ref) for ref in sorted(refs)}
        before = {owner: s[2] for owner, s in (recorded.get("owners") or {}).items()}
        self.selectors = {owner: (s[0], s[1]) for owner, s in (recorded.get("owners") or {}).items()}
        uids = self.moved = {p.uid for p in moving}
        for node in sorted({p.node for p in moving}):
            for obj in group.watch("pods", field_selector=f"spec.nodeName={node}").items():
                meta = obj.get("metadata") or {}
                owner = owner_of(obj)
                if meta.get("uid") in uids and owner and "/DaemonSet/" not in owner and owner not in self.selectors:
                    self.selectors[owner] = (meta.get("namespace"), _selector(group.connection, obj))
        self.owners = {}  # owner -> (watch of its pods, Ready pods before the batch)
        for owner, (namespace, selector) in sorted(self.selectors.items()):
            watch = group.watch("pods", namespace, label_selector=selector or None)
            count = before.get(owner)
            if count is None:
                count = sum(1 for o in watch.items() if owner_of(o) == owner and _ready(o))
            self.owners[owner] = (watch, count)

    def record(self) -> dict:
        """What this gate checks, as JSON-able data to give back as ``recorded``."""
        return {"pdbs": sorted(self.pdbs),
                "owners": {owner: [*self.selectors[owner], count] for owner, (_, count) in self.owners.items()}}

    def problems(self) -> list:
        out = []
        for ref, watch in self.pdbs.items():
            obj = watch.get(ref)
            if obj is None:
                continue
            st = obj.get("status") or {}
            if st.get("observedGeneration") != (obj.get("metadata") or {}).get("generation") \
                    or (st.get("currentHealthy") or 0) < (st.get("desiredHealthy") or 0):
                out.append(f"PDB {ref} {st.get('currentHealthy')}/{st.get('desiredHealthy')} healthy")
        for owner, (watch, count) in self.owners.items():
            objs = [o for o in watch.items() if owner_of(o) == owner]
            left = [o["metadata"]["name"] for o in objs if o["metadata"].get("uid") in self.moved]
            if left:  # not gone yet, or this watch has not seen it go: its count is not the present one
                out.append(f"{owner}: {', '.join(left[:3])} not gone yet")
                continue
            ready = sum(1 for o in objs if _ready(o))
            pending = [o["metadata"]["name"] for o in objs if not (o.get("metadata") or {}).get("deletionTimestamp")
                       and (o.get("status") or {}).get("phase") == "Pending"]
            if ready < count or pending:
                out.append(f"{owner}: {ready}/{count} Ready" + (f", Pending: {', '.join(pending[:3])}" if pending else ""))
        return out

    def wait(self, deadline, interrupted=None, clock=None) -> bool:
        """Until healthy (True), or the monotonic deadline or an interrupt (False)."""
        kwargs = {"clock": clock} if clock else {}
        return self.group.wait_for(lambda: not self.problems(), deadline, interrupted, **kwargs)


def _ready(obj) -> bool:
    meta, status = obj.get("metadata") or {}, obj.get("status") or {}
    return not meta.get("deletionTimestamp") and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
