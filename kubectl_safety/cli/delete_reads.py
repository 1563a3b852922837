"""What ``delete pod`` reads: the pods named or selected, their nodes (a 404: the Node is gone) and, for a
force delete, their claims and volumes; offline, from the snapshot; and who the kubeconfig user is."""

from kubectl_safety.cli.render import warn
from kubectl_safety.errors import ClusterError, NotFoundError


class Selection(str):
    """-l, --field-selector and --all together: the label selector (as a string, possibly empty) and the fields."""

    def __new__(cls, labels, fields):
        made = super().__new__(cls, labels or "")
        made.fields = fields
        return made

    def __bool__(self):
        return True  # --all: a selection, even without a selector


def select(candidates, ns, names, selector, ignore_not_found=False):
    """The pods named or selected (``ns`` None: every namespace, with a selector only)."""
    from kubectl_safety.model.selectors import LabelSelector

    if selector:
        sel = LabelSelector.from_string(selector) if str(selector) else None
        fields = getattr(selector, "fields", None)
        if fields:
            from kubectl_safety.model.field_selector import matches, parse

            terms = parse(fields)
        return [p for p in candidates if ns in (None, p.namespace) and (sel is None or sel.matches(p.labels))
                and (not fields or matches(terms, p.raw))]
    by_name = {p.name: p for p in candidates if p.namespace == ns}
    missing = [n for n in names if n not in by_name]
    if missing and not ignore_not_found:
        raise NotFoundError(f'pod "{missing[0]}" not found in namespace "{ns}"')
    return [by_name[n] for n in dict.fromkeys(names) if n in by_name]


def load_offline(s, ns, names, selector, force, ignore_not_found=False):
    snap = s.snapshot((), "delete pod")
    pods = snap.pods if ns is None else snap.pods_in(ns)
    return snap, select(pods, ns, names, selector, ignore_not_found), (), set()


def load_live(s, ns, names, selector, force, ignore_not_found=False):
    """The pods, their nodes (a 404 means the Node is gone), and for a force delete their claims."""
    from kubectl_safety.cluster.scopes import node_lease_queries
    from kubectl_safety.cluster.source import Query, fetch
    from kubectl_safety.model.parse import build_snapshot

    conn = s.connection("delete pod")
    queries = ([Query("pods", ns, label_selector=str(selector) or None,
                      field_selector=getattr(selector, "fields", None))] if selector
               else [Query("pods", ns, name=n) for n in dict.fromkeys(names)])
    objects = []
    for query in queries:
        try:
            objects += list(fetch(conn, [query]))
        except NotFoundError:
            if not ignore_not_found:
                raise
    unreadable = set()
    for node in sorted({(o.get("spec") or {}).get("nodeName") for _, o in objects} - {None, ""}):
        try:
            found = conn.get("nodes", node, optional=True)
        except ClusterError as e:
            if "Forbidden" not in str(e):
                raise
            warn(f"{e} (the state of node {node} is unknown)")
            unreadable.add(node)
            continue
        if found is not None:
            objects.append(("nodes from the API server", found))
            unread = []  # its Lease (its heartbeat) forbidden: the Ready condition's stands in
            objects += list(fetch(conn, node_lease_queries([node]), warnings=unread))
            for line in unread:
                warn(line)
    storage = read_storage(conn, [o for _, o in objects if o.get("kind") == "Pod"]) if force else []
    snap = build_snapshot(objects, taken_at=s.now(), source=f"cluster {conn.host}")
    return snap, select(snap.pods, ns, names, selector, ignore_not_found), storage, unreadable


def read_storage(conn, pods) -> list:
    """The pods' PersistentVolumeClaims and bound PersistentVolumes, as far as we may read them."""
    out = []
    for pod in pods:
        ns = pod["metadata"].get("namespace")
        for v in (pod.get("spec") or {}).get("volumes") or []:
            claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
            pvc = optional_get(conn, "persistentvolumeclaims", claim, ns) if claim else None
            if pvc is None:
                continue
            out.append(pvc)
            volume = (pvc.get("spec") or {}).get("volumeName")
            pv = optional_get(conn, "persistentvolumes", volume) if volume else None
            if pv is not None:
                out.append(pv)
    return out


def optional_get(conn, resource, name, namespace=None):
    """GET or None when missing or forbidden (the assessment then says what it could not read)."""
    try:
        return conn.get(resource, name, namespace, optional=True)
    except ClusterError as e:
        if "Forbidden" in str(e):
            return None
        raise


def kubeconfig_user(conn) -> str:
    """The kubeconfig user of the current context (the Event's 'who'); 'unknown' if unreadable."""
    from kubectl_safety.cluster.kubeconfig import context_user

    try:
        return context_user(conn.kubeconfig, conn.context) or "unknown"
    except Exception:  # no kubeconfig behind the connection, or an unreadable one
        return "unknown"
