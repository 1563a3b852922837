"""The rollout engine's pure decisions: when a node is back, whose Lease is live, the exit codes."""

import os
import socket
from datetime import datetime, timedelta, timezone

import pytest

from kubectl_safety.engine.lease import is_live
from kubectl_safety.engine.rollout import node_back

ME = f"kubectl-safety@{socket.gethostname()} pid {os.getpid()}"


def node(ready="True", boot="b1", kubelet="v1.35.0", labels=None):
    return {"metadata": {"name": "n1", "labels": labels or {}},
            "status": {"conditions": [{"type": "Ready", "status": ready}],
                       "nodeInfo": {"bootID": boot, "kubeletVersion": kubelet}}}


@pytest.mark.parametrize("obj, wait_for, before, back", [
    (node(), None, "", True),
    (node(ready="False"), None, "", False),
    (node(ready="Unknown"), None, "", False),
    (None, None, "", False),
    (node(boot="b2"), "boot-id", "b1", True),
    (node(boot="b1"), "boot-id", "b1", False),  # Ready, but it did not reboot yet
    (node(boot="b2", ready="False"), "boot-id", "b1", False),
    (node(kubelet="v1.36.0"), "kubelet-version", "v1.35.0", True),
    (node(kubelet="v1.35.0"), "kubelet-version", "v1.35.0", False),
    (node(labels={"os": "v2"}), "label=os=v2", "", True),
    (node(labels={"os": "v1"}), "label=os=v2", "", False),
    (node(labels={"upgraded": ""}), "label=upgraded", "", True),
    (node(), "label=upgraded", "", False),
], ids=["ready", "not-ready", "unknown", "no-node", "rebooted", "not-rebooted-yet", "rebooted-not-ready",
        "kubelet-upgraded", "kubelet-same", "label-value", "label-other-value", "label-present", "label-missing"])
def test_node_back(obj, wait_for, before, back):
    assert node_back(obj, wait_for, before) is back


def lease(holder, renewed_ago=1, duration=300):
    stamp = (datetime.now(timezone.utc) - timedelta(seconds=renewed_ago)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return {"spec": {"holderIdentity": holder, "renewTime": stamp, "leaseDurationSeconds": duration}}


@pytest.mark.parametrize("obj, live", [
    (lease("someone@elsewhere pid 1"), True),
    (lease("someone@elsewhere pid 1", renewed_ago=600), False),  # expired
    (lease(None), False),  # released
    (lease(ME), False),  # our own
    (lease(f"kubectl-safety@{socket.gethostname()} pid 999999999"), False),  # a dead process on this host
    (None, False),
], ids=["held", "expired", "released", "ours", "dead-local-holder", "absent"])
def test_lease_is_live(obj, live):
    assert is_live(obj, ME) is live


@pytest.mark.parametrize("status, batches, resumed, code", [
    ("done", [], False, 0),
    ("interrupted", [{"status": "done"}], False, 130),
    ("blocked", [], False, 3),  # nothing done: exit 3 as a refused plan
    ("blocked", [{"status": "done"}], False, 4),
    ("blocked", [], True, 4),  # a resumed rollout had done something before
    ("gate-failed", [{"status": "gate-failed"}], False, 4),
    ("failed", [], False, 4),
    ("timeout", [], False, 4),
    ("error", [], False, 1),
])
def test_exit_codes(status, batches, resumed, code):
    from kubectl_safety.cli.commands.rollout import exit_code

    assert exit_code({"status": status, "batches": batches, "resumed": resumed}) == code
