"""The events ``why`` reads, through the snapshot's typed ``Event`` and its indexes."""

OUR_CONTROLLER = "safety.kubectl.io"


def about(snap, kind, namespace, name, uid=None) -> list:
    """The events regarding one object, oldest first; with ``uid``: of that incarnation (or naming none:
    the taint manager's and the kubelet's references carry no UID)."""
    events = snap.events_about(kind, namespace, name)
    return [e for e in events if not uid or not e.regarding.uid or e.regarding.uid == uid]


def host(e) -> str:
    """The node a kubelet's event comes from (its source.host, core/v1's reportingInstance)."""
    return e.reporting_instance if e.reporting_controller == "kubelet" else ""
