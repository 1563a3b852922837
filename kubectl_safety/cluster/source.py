"""Where a snapshot comes from: dump files (``--snapshot``) or the live API, through one parser."""


from kubectl_safety.model.parse import build_snapshot, flatten
from kubectl_safety.record import record


@record(slots=False)
class Query:
    """One read: a LIST (optionally by namespace / selectors) or, with ``name``, a GET."""

    resource: str
    namespace: str = None
    name: str = None
    field_selector: str = None
    label_selector: str = None
    optional: bool = False  # tolerate 403 (and 404 on a LIST): the snapshot is then partial (a warning says so)
    add_on: bool = False  # a LIST the cluster does not serve (an add-on not installed) holds none: empty, no warning


def load_snapshot(*, snapshot_paths=(), connection=None, queries=(), now=None, chunk_size=500,
                  warnings=None):
    """A ClusterSnapshot from dump files or, if none are given, from the queries on the live API.

    ``now`` is the time the snapshot counts as taken (for dumps, unless given: the time a
    ``kubectl safety snapshot`` file records, else the newest file's mtime). Optional queries that
    are forbidden or not served add a line to ``warnings`` and their resource to the snapshot's
    ``unread``; so do, for dumps, the kinds they do not hold (``cluster/snapshot_file.held``).
    """
    if snapshot_paths:
        from kubectl_safety.cluster.dump import load_objects
        from kubectl_safety.cluster.snapshot_file import held

        pairs, newest = load_objects(snapshot_paths)
        known = held(pairs, pairs.records)
        return build_snapshot(pairs, taken_at=now or known["taken_at"] or newest,
                              source="snapshot " + ", ".join(snapshot_paths),
                              server_version=known["server_version"], unread=known["unread"])
    from kubectl_safety.cluster.dump import bulk_load
    from kubectl_safety.model.typed import Pairs

    checked, unread = [], {}  # shape-checked by their Struct; kept alive here while their ids mark them
    with bulk_load():  # many acyclic objects: no cyclic GC passes while they arrive
        objects = Pairs(unique(fetch(connection, queries, chunk_size, warnings, checked, unread)))
    objects.checked.update(map(id, checked))
    return build_snapshot(objects, taken_at=now, source=f"cluster {connection.host}",
                          complete_pod_namespaces=complete_pod_namespaces(queries), unread=unread)


def read_everything(connection, queries, taken_at, context, warnings=None, chunk_size=500):
    """``(record, objects)`` of ``kubectl safety snapshot``: the queries run as every live command runs
    them (``fetch``: the same requests, pages and bounds), the objects trimmed to what the commands
    read, and the record of what was read (``cluster/snapshot_file.py``)."""
    from kubectl_safety.cluster.dump import bulk_load
    from kubectl_safety.cluster.snapshot_file import API_VERSION, KIND

    unread = {}
    with bulk_load():
        objects = [obj for _, obj in unique(fetch(connection, queries, chunk_size, warnings, None, unread))]
    record = {"apiVersion": API_VERSION, "kind": KIND,
              "metadata": {"name": context or "snapshot",
                           "creationTimestamp": taken_at.isoformat().replace("+00:00", "Z")},
              "context": context, "serverVersion": connection.server_version(),
              "read": sorted({q.resource for q in queries} - set(unread)), "unread": dict(sorted(unread.items()))}
    return record, objects


def unique(pairs) -> list:
    """``(origin, object)`` pairs, each object once (two reads may return the same one: a node's
    pods by its name and all pods)."""
    objects, seen = [], set()
    for origin, obj in pairs:
        meta = obj.get("metadata") or {}
        key = (obj.get("kind"), meta.get("namespace"), meta.get("name"))
        if key not in seen:
            seen.add(key)
            objects.append((origin, obj))
    return objects


def complete_pod_namespaces(queries):
    """Namespaces whose every pod the queries read (None: all of them), e.g. none for node-scoped reads."""
    lists = [q for q in queries if q.resource == "pods" and not (q.name or q.field_selector or q.label_selector)]
    if any(q.namespace is None for q in lists):
        return None
    return frozenset(q.namespace for q in lists)


def fetch(connection, queries, chunk_size=500, warnings=None, checked=None, unread=None):
    """Run each query once; yield ``(origin, object)`` pairs in the queries' order.

    Node-scoped reads go one after the other on one kept-alive connection (measured: parallel
    ones cost more in TLS handshakes than they save). Whole-cluster reads go two at a time: the
    small LISTs are answered while the pods' pages are (``cluster/background.py``).
    ``checked``: a list to which the objects their Struct shape-checked are added; ``unread``: a
    dict to which the optional resources that could not be read are added, with the reason.
    """
    def read(q):
        return _read(connection, q, chunk_size, checked)

    queries = list(queries)
    if complete_pod_namespaces(queries) is None:  # every pod is read: a LIST of many pages
        from kubectl_safety.cluster.background import in_order

        connection.host  # noqa: B018 - the transport built (credentials read) once, before two threads
        answers = in_order(read, queries)
    else:
        answers = map(read, queries)
    for q, (pairs, warning) in zip(queries, answers):
        if warning and warnings is not None:
            warnings.append(warning)
        if warning and unread is not None:
            unread[q.resource] = warning.reason
        yield from pairs


def _read(connection, q, chunk_size, checked):
    """``(pairs, warning)`` of one query: a warning instead of pairs for an optional forbidden one."""
    from kubectl_safety.errors import SafetyError

    origin = f"{q.resource} from the API server"
    try:
        if q.name:
            obj = connection.get(q.resource, q.name, q.namespace, optional=q.optional)
            if obj is None:
                return [], None
            from kubectl_safety.model.typed import prune

            return [(origin, prune(obj))], None
        listing = connection.list(q.resource, q.namespace, field_selector=q.field_selector,
                                  label_selector=q.label_selector, chunk_size=chunk_size, checked=checked)
    except SafetyError as e:
        warning = unreadable(q, e)
        if warning is None:
            raise
        if q.add_on and warning.reason == "not served":
            return [], None
        return [], warning
    return list(flatten(listing, origin)), None


class Unreadable(str):
    """A warning that an optional resource could not be read; ``reason``: why, in a word or two."""

    reason = ""


def unreadable(q, error):
    """The warning for an optional query the API refused (403) or does not serve (404 on a LIST:
    an API group a distribution leaves out), else None (the error stands)."""
    from kubectl_safety.errors import NotFoundError

    if not q.optional:
        return None
    if "Forbidden" in str(error):
        reason = "forbidden"
    elif isinstance(error, NotFoundError) and not q.name:
        reason = "not served"
    else:
        return None
    warning = Unreadable(f"{error} (continuing without {q.resource}: the analysis is partial)")
    warning.reason = reason
    return warning
