"""The rollout engine's pure decisions: when a node is back, whose Lease is live, the exit codes."""

import json
import os
import socket
from types import SimpleNamespace
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


@pytest.mark.parametrize("holder, renewed_ago, live", [
    ("someone@elsewhere pid 1", 1, True),
    ("someone@elsewhere pid 1", 600, False),  # expired
    (None, 1, False),  # released
    (ME, 1, False),  # our own
    (f"kubectl-safety@{socket.gethostname()} pid 999999999", 1, False),  # a dead process on this host
    ("absent", None, False),
], ids=["held", "expired", "released", "ours", "dead-local-holder", "absent"])
def test_lease_is_live(holder, renewed_ago, live):
    obj = None if renewed_ago is None else lease(holder, renewed_ago)  # stamped when the test runs
    assert is_live(obj, ME) is live


@pytest.mark.parametrize("status, batches, resumed, code, blocked_left", [
    ("done", [], False, 0, False),
    ("done", [{"status": "done"}], False, 3, True),  # --skip-blocked left blocked nodes: not safe
    ("interrupted", [{"status": "done"}], False, 130, True),
    ("interrupted", [{"status": "done"}], False, 130, False),
    ("blocked", [], False, 3, False),  # nothing done: exit 3 as a refused plan
    ("blocked", [{"status": "done"}], False, 4, False),
    ("blocked", [], True, 4, False),  # a resumed rollout had done something before
    ("gate-failed", [{"status": "gate-failed"}], False, 4, False),
    ("failed", [], False, 4, False),
    ("timeout", [], False, 4, False),
    ("error", [], False, 1, False),
])
def test_exit_codes(status, batches, resumed, code, blocked_left):
    from kubectl_safety.cli.views.rollout import rollout_code as exit_code
    from kubectl_safety.engine.drain_report import RequestCounts
    from kubectl_safety.engine.rollout_report import BatchProgress, RolloutReport, RolloutStatus

    report = RolloutReport("r", "ns/r", "me", RolloutStatus(status), None, resumed, 0.0,
                           tuple(BatchProgress(i + 1, (), RolloutStatus(b["status"])) for i, b in enumerate(batches)),
                           (), RequestCounts(0, 0, 0))
    assert exit_code(report, blocked_left=blocked_left) == code


# -- the whole run on an in-memory API ---------------------------------------------------------
from kubectl_safety.cli.published import published  # noqa: E402
from kubectl_safety.engine.rollout import ANNOTATION_STATE, ANNOTATION_SURGES, Rollout, RolloutSpec  # noqa: E402
from kubectl_safety.errors import RefusedError  # noqa: E402
from tests.unit.fake_api import FakeApi, entry, node as fake_node, pod  # noqa: E402


class Done:
    returncode, stdout = 0, b"ok"


def to_spare(api, p):
    """The ReplicaSet's replacement starts, Ready, on the spare node."""
    api.delete("pods", p)
    api.put("pods", pod(p["metadata"]["name"] + "-r", "spare", owner="rs-a"))


def cluster():
    api = FakeApi([pod("a", "n1", owner="rs-a"), pod("b", "n2", owner="rs-a")],
                  nodes=[fake_node("n1"), fake_node("n2"), fake_node("spare")], on_evict=to_spare)
    return api


def rollout(api, maintained, stop_on=None, **spec):
    def replan(nodes, group):
        pods = [p for p in api.store["pods"].values() if p["spec"]["nodeName"] in nodes]
        return SimpleNamespace(node_names=list(nodes), pods=tuple(entry(p) for p in pods), safe=True, surges=())

    states = {n["metadata"]["name"]: n["metadata"]["annotations"].get(ANNOTATION_STATE)
              for n in api.store["nodes"].values() if n["metadata"]["annotations"].get(ANNOTATION_STATE)}
    r = None

    def run(command, env, **kwargs):
        maintained.append(env["NODE"])
        if env["NODE"] == stop_on:
            r.interrupted.set()  # Ctrl-C during this node's maintenance
        return Done()

    spec = {"gate_timeout": 5, **spec}
    r = Rollout(api, RolloutSpec(name="ro", nodes=["n1", "n2"], batches=[["n1"], ["n2"]], exec_command="x",
                                 lease_namespace="ns", ready_timeout=5, states=states, **spec),
                planner=SimpleNamespace(batch_plan=lambda batch, group, seen: replan(batch, group)), run=run)
    return r


def test_a_rollout_maintains_each_node_once_and_cleans_up():
    api, maintained = cluster(), []
    report = published(rollout(api, maintained).run())
    assert report["status"] == "done" and maintained == ["n1", "n2"]
    assert [b["gate"]["passed"] for b in report["batches"]] == [True, True]
    assert not api.store["leases"]  # deleted at the end
    for name in ("n1", "n2"):
        n = api.store["nodes"][f"/{name}"]
        assert not n["spec"].get("unschedulable") and not n["metadata"].get("annotations")
    assert len(api.evictions()) == 2


def test_an_interrupted_rollout_resumes_where_it_stopped():
    api, maintained = cluster(), []
    report = published(rollout(api, maintained, stop_on="n2").run())
    assert report["status"] == "interrupted"
    assert api.store["leases"]["ns/ro"]["spec"]["holderIdentity"] is None  # released, kept
    assert api.store["nodes"]["/n1"]["metadata"]["annotations"][ANNOTATION_STATE] == "done"
    assert api.store["nodes"]["/n2"]["spec"]["unschedulable"] is True  # still cordoned
    report = published(rollout(api, maintained).run())
    assert report["status"] == "done" and report["resumed"]
    assert maintained == ["n1", "n2", "n2"]  # n1 is not maintained again; n2's maintenance was cut short


def test_a_second_rollout_is_refused_with_the_holders_name():
    api = cluster()
    other = rollout(api, [])
    other.lease.holder = "kubectl-safety@elsewhere pid 1"
    other.lease.acquire()
    with pytest.raises(RefusedError, match="held by kubectl-safety@elsewhere pid 1"):
        rollout(api, []).run()
    assert len(api.evictions()) == 0


def to_spare_unready(api, p):
    """The replacement starts on the spare node but never becomes Ready (until the test says so)."""
    api.delete("pods", p)
    api.put("pods", pod(p["metadata"]["name"] + "-r", "spare", owner="rs-a", ready=False))


def test_a_run_resumed_after_a_failed_gate_gates_the_pods_moved_earlier():
    api, maintained = cluster(), []
    api.on_evict = to_spare_unready
    report = published(rollout(api, maintained, gate_timeout=0.3).run())
    assert report["status"] == "gate-failed" and "rs-a: 1/2 Ready" in report["message"]
    report = published(rollout(api, maintained, gate_timeout=0.3).run())  # n1 is back: only its gate is left
    assert report["status"] == "gate-failed" and "rs-a: 1/2 Ready" in report["message"]
    assert maintained == ["n1"] and len(api.evictions()) == 1  # neither maintained nor drained again
    api.put("pods", pod("a-r", "spare", owner="rs-a"))  # the replacement is Ready at last
    api.on_evict = to_spare
    report = published(rollout(api, maintained).run())
    assert report["status"] == "done" and maintained == ["n1", "n2"]
    assert not api.store["nodes"]["/n1"]["metadata"].get("annotations")


def test_a_resumed_rollout_reports_the_surges_its_earlier_run_recorded():
    """The earlier run recorded its batch's surges on n2 (and left it draining); the resumed run reports
    them with the node, in text too, and removes the record when the rollout completes."""
    from kubectl_safety.cli.views.rollout import render_report

    api, maintained = cluster(), []
    recorded = ["Deployment default/web 3->4"]
    api.store["nodes"]["/n1"]["metadata"]["annotations"] = {"safety.kubectl.io/rollout": "ro",
                                                           ANNOTATION_STATE: "done"}
    api.store["nodes"]["/n2"]["metadata"]["annotations"] = {"safety.kubectl.io/rollout": "ro",
                                                           ANNOTATION_STATE: "draining",
                                                           ANNOTATION_SURGES: json.dumps(recorded)}
    report = published(rollout(api, maintained, surges={"n2": tuple(recorded)}).run())
    assert report["status"] == "done" and maintained == ["n2"]
    assert [(n["name"], n.get("surges")) for n in report["nodes"]] == [("n1", None), ("n2", recorded)]
    assert "Surged by this rollout (recorded in its state): Deployment default/web 3->4" in render_report(report)
    assert not api.store["nodes"]["/n2"]["metadata"].get("annotations")


def test_the_next_batch_is_planned_on_the_uncordon_of_the_batch_before(monkeypatch):
    from kubectl_safety.cluster.scopes import cluster_scope
    from kubectl_safety.engine import live_view
    from kubectl_safety.engine.live_view import LiveView

    api = cluster()
    for name in ("n1", "n2"):  # cordoned before: the view shows both cordoned, as the rollout's pre-cordon
        api.request("PATCH", f"/api/v1/nodes/{name}", body={"spec": {"unschedulable": True}})
    monkeypatch.setattr(live_view, "SETTLE_SECONDS", 0.3)
    planned = {}
    with LiveView(api, cluster_scope()) as view:
        next(w for w in view.shared if w.resource == "nodes").stop()  # late: what follows does not arrive

        def replan(nodes, group):
            snap = view.snapshot(datetime.now(timezone.utc), (), group, cordoned=nodes, seen=r.seen)
            planned[tuple(nodes)] = {n.name for n in snap.nodes if n.unschedulable}
            pods = [p for p in api.store["pods"].values() if p["spec"]["nodeName"] in nodes]
            return SimpleNamespace(node_names=list(nodes), pods=tuple(entry(p) for p in pods), safe=True, surges=())

        planner = SimpleNamespace(batch_plan=lambda batch, group, seen: replan(batch, group))
        r = Rollout(api, RolloutSpec(name="ro", nodes=["n1", "n2"], batches=[["n1"], ["n2"]], lease_namespace="ns",
                                     ready_timeout=5, gate_timeout=5), planner=planner, run=None)
        assert published(r.run())["status"] == "done"
    assert planned[("n2",)] == {"n2"}  # n1 back in the pool: uncordoned by the first batch


def test_gates_run_before_every_batch_and_a_stop_at_the_first_leaves_the_pool_uncordoned():
    api, maintained, asked, reports = cluster(), [], [], []
    r = rollout(api, maintained)
    r.before_batch = lambda number, nodes: asked.append((number, nodes)) or ("done", None)
    r.after_batch = reports.append
    assert r.run().status.value == "done"
    assert asked == [(1, ["n1"]), (2, ["n2"])]
    assert [(x.status.value, [b.status.value for b in x.batches]) for x in reports] == [
        ("running", ["done"]), ("running", ["done", "done"])]

    api, maintained = cluster(), []
    r = rollout(api, maintained)
    r.before_batch = lambda number, nodes: ("blocked", "1 alert(s) firing: NodeDown")
    report = r.run()
    assert (report.status.value, report.message, maintained) == ("blocked", "1 alert(s) firing: NodeDown", [])
    assert not any(n["spec"].get("unschedulable") for n in api.store["nodes"].values())  # checked before the cordons
