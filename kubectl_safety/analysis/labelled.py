"""The pods a label selector may match, found through one index of pod labels per snapshot."""

_PLANNING = "labelled"  # this module's entry in ``snapshot.planning``


def labelled(snapshot, namespace, selector) -> list:
    """A superset of the namespace's pods ``selector`` matches, in snapshot order: the smallest bucket
    of one of its single-value ``In`` requirements, else every pod of the namespace ([] for no
    selector). The buckets are built per label key on first use and kept in the snapshot's planning
    state (a selector names few keys; a pod has many labels)."""
    if selector is None:
        return []
    exact = [(k, next(iter(v))) for k, op, v in selector.requirements if op == "In" and len(v) == 1]
    if not exact:
        return snapshot.pods_in(namespace)
    index = snapshot.planning.get(_PLANNING)
    if index is None:
        index = snapshot.planning.setdefault(_PLANNING, {})
    return min((_values(snapshot, index, namespace, k).get(v, []) for k, v in exact), key=len)


def _values(snapshot, index, namespace, key) -> dict:
    """{value: the namespace's pods with that value of label ``key``}."""
    values = index.get((namespace, key))
    if values is None:
        values = {}
        for pod in snapshot.pods_in(namespace):
            value = pod.labels.get(key)
            if value is not None:
                values.setdefault(value, []).append(pod)
        values = index.setdefault((namespace, key), values)
    return values
