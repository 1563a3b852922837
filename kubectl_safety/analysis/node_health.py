"""A node's health as seen from the API: Ready, NotReady/Unknown (partitioned?) or gone."""


def node_health(node, now) -> dict:
    """Ready, NotReady or Unknown with the heartbeat age; ``gone`` when the Node object is missing."""
    if node is None:
        return {"state": "Gone", "partitioned": True, "heartbeatAgeSeconds": None,
                "message": "the Node object does not exist (treated as permanently gone)"}
    status = node.ready_status
    beat = node.last_heartbeat
    age = max(0, int((now - beat).total_seconds())) if (now and beat) else None
    state = {"True": "Ready", "False": "NotReady"}.get(status, "Unknown")
    partitioned = state != "Ready"
    msg = f"Ready, heartbeat {age}s ago" if state == "Ready" else f"{state}, last heartbeat {age}s ago" if age is not None else state
    return {"state": state, "partitioned": partitioned, "heartbeatAgeSeconds": age,
            "unschedulable": node.unschedulable, "message": msg}
