"""A node's health as seen from the API: Ready, NotReady/Unknown (partitioned?) or gone."""

from kubectl_safety.model.duration import human_duration

STALE_SECONDS = 300  # a Ready node's heartbeat older than this: the snapshot's time is later than the dump


def node_health(node, now, lease=None) -> dict:
    """Ready, NotReady or Unknown with the heartbeat age; ``gone`` when the Node object is missing.

    The heartbeat is the node's ``lease`` renewTime, as the node lifecycle controller reads it (the
    kubelet renews it every 10 s, and updates the Ready condition's lastHeartbeatTime only when the
    status changes or every 5 minutes); without the Lease, the condition's, and the message says which."""
    if node is None:
        return {"state": "Gone", "partitioned": True, "heartbeatAgeSeconds": None,
                "message": "the Node object does not exist (treated as permanently gone)"}
    status = node.ready_status
    beat, source = (lease.renew_time, "node Lease") if lease is not None and lease.renew_time else (
        node.last_heartbeat, "Ready condition")
    age = max(0, int((now - beat).total_seconds())) if (now and beat) else None
    state = {"True": "Ready", "False": "NotReady"}.get(status, "Unknown")
    partitioned = state != "Ready"
    note = source + ("; a stale snapshot? --as-of TIME sets when the dump was taken" if state == "Ready"
                     and stale(age) else "")
    ago = f"{human_duration(age)} ago ({note})"
    msg = state if age is None else f"{state}, last heartbeat {ago}" if state != "Ready" else f"Ready, heartbeat {ago}"
    return {"state": state, "partitioned": partitioned, "heartbeatAgeSeconds": age,
            "unschedulable": node.unschedulable, "message": msg}


def stale(age) -> bool:
    """A Ready node's heartbeat this old means the time the snapshot is read at is not when it was taken."""
    return age is not None and age > STALE_SECONDS
