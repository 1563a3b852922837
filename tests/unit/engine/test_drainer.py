"""The engine's drainer against an in-memory API: each planned pod evicted once, never a churn,
budgets retried when they allow, priority order, and watches instead of polling."""

import os
import threading
import time

from kubectl_safety.engine.drainer import Drainer
from tests.ci import unavailable
from tests.unit.fake_api import FakeApi, entry, pod


def plan_for(pods, **actions):
    """(the nodes, the plan's pod actions) of a drain of ``pods``."""
    return (sorted({p["spec"]["nodeName"] for p in pods}),
            [entry(p, *actions.get(p["metadata"]["name"], ("evict",))) for p in pods])


def drain(api, plan, **kwargs):
    events = []
    result = Drainer(api, on_event=events.append).drain(*plan, deadline=time.monotonic() + 10, **kwargs)
    return result, events


def test_every_planned_pod_is_evicted_once_and_waited_for_by_watch():
    pods = [pod(f"p{i}", "n1") for i in range(3)]
    api = FakeApi(pods)
    result, events = drain(api, plan_for(pods))
    assert result.status == "drained" and sorted(result.evicted) == ["ns/p0", "ns/p1", "ns/p2"]
    assert len(api.evictions()) == 3
    assert [m for m, _ in api.requests].count("LIST") == 1  # the node's pods: one LIST, then the watch
    assert [e["pod"] for e in events if e["event"] == "evicted"] == ["ns/p0", "ns/p1", "ns/p2"]


def test_a_replacement_that_returns_to_the_drained_node_is_reported_not_chased():
    pods = [pod(f"s{i}", "n1", owner="sticky") for i in range(3)]

    def replace(api, p):  # the ReplicaSet's replacement tolerates the cordon: back on the same node
        api.delete("pods", p)
        api.put("pods", pod(p["metadata"]["name"] + "-new", "n1", owner="sticky"))

    api = FakeApi(pods, on_evict=replace)
    result, _ = drain(api, plan_for(pods))
    time.sleep(0.2)
    assert result.status == "drained" and len(api.evictions()) == 3  # one per original pod, never more
    assert sorted(a.ref for a in result.appeared) == ["ns/s0-new", "ns/s1-new", "ns/s2-new"]


def test_a_pdb_refusal_is_retried_when_the_budget_allows_again():
    pods = [pod("a", "n1"), pod("b", "n1")]
    budget = {"metadata": {"name": "pdb", "namespace": "ns"}, "spec": {"selector": {"matchLabels": {"app": "a"}}},
              "status": {"disruptionsAllowed": 1}}
    api = FakeApi(pods, pdbs=[budget])

    def recover():  # the first pod's replacement becomes Ready: the budget allows one more
        time.sleep(0.5)
        b = dict(api.store["poddisruptionbudgets"]["ns/pdb"])
        api.put("poddisruptionbudgets", dict(b, status={"disruptionsAllowed": 1}))

    threading.Thread(target=recover, daemon=True).start()
    started = time.monotonic()
    result, events = drain(api, plan_for(pods, b=("wait", "ns/pdb"), a=("evict", "ns/pdb")))
    assert result.status == "drained" and sorted(result.evicted) == ["ns/a", "ns/b"]
    assert time.monotonic() - started < 5  # woken by the budget's change, not a 20 s retry timer
    assert 3 <= len(api.evictions()) <= 5 and any(e["event"] == "retrying" for e in events)  # retried on changes


def test_priority_order_evicts_lower_priority_pods_first():
    pods = [pod("high", "n1", priority=1000), pod("low", "n1", priority=-5), pod("mid", "n1", priority=0)]
    api = FakeApi(pods)
    result, _ = drain(api, plan_for(pods), order="priority")
    assert result.status == "drained"
    assert [p.split("/")[6] for p in api.evictions()] == ["low", "mid", "high"]


def test_a_pod_gone_before_its_eviction_is_gone_meanwhile_and_not_evicted():
    pods = [pod("a", "n1"), pod("b", "n1")]
    api = FakeApi(pods)
    plan = plan_for(pods)
    api.delete("pods", pods[1])
    result, _ = drain(api, plan)
    assert result.evicted == ["ns/a"] and result.gone == ["ns/b"] and len(api.evictions()) == 1


def test_interrupt_stops_before_any_eviction():
    pods = [pod("a", "n1")]
    api = FakeApi(pods)
    d = Drainer(api)
    d.interrupted.set()
    result = d.drain(*plan_for(pods))
    assert result.status == "interrupted" and api.evictions() == [] and result.left[0].name == "a"


def test_wait_completed_waits_for_a_job_pod_to_complete_and_never_evicts_it():
    from dataclasses import replace

    from kubectl_safety.analysis.plans.common import Reason, Severity
    from kubectl_safety.analysis.plans.drain import WaitFor

    job = pod("job-x", "n1", owner="job")
    api = FakeApi([job])
    nodes, entries = plan_for([job], **{"job-x": ("wait",)})
    entries = [replace(entries[0], reasons=(Reason("WAIT_COMPLETED", Severity.INFO, "waits"),),
                       waits_for=WaitFor.COMPLETION)]

    def complete():
        time.sleep(0.3)
        api.put("pods", dict(job, status={"phase": "Succeeded"}), kind="MODIFIED")

    threading.Thread(target=complete, daemon=True).start()
    result, events = drain(api, (nodes, entries))
    assert result.status == "drained" and result.gone == ["ns/job-x"] and result.evicted == []
    assert api.evictions() == [] and "completed" in [e["event"] for e in events]


def test_a_pod_deleted_while_its_eviction_is_answered_ends_the_wait_without_a_deadline():
    """The deletion's watch event arrives before the eviction's answer (kwok, a fast kubelet): the
    drain must not wait for a further change that never comes."""
    pods = [pod("fast", "n1")]

    def delete_then_answer(api, p):
        FakeApi.remove(api, p)
        time.sleep(0.5)  # the watch delivers the DELETE while the eviction is still being answered

    api = FakeApi(pods, on_evict=delete_then_answer)
    done = {}
    worker = threading.Thread(target=lambda: done.setdefault("result", Drainer(api).drain(*plan_for(pods))),
                              daemon=True)
    worker.start()
    worker.join(5)
    api.closed = True
    assert not worker.is_alive(), "the drain still waits for a pod that is gone"
    assert done["result"].status == "drained" and done["result"].evicted == ["ns/fast"]


def test_a_watch_thread_leaves_ctrl_c_to_the_main_thread():
    """A Ctrl-C at a confirmation prompt must interrupt the main thread's read: a watch thread that
    could take SIGINT would swallow it there (the prompt kept waiting)."""
    status = f"/proc/self/task/{{}}/status"
    if not os.path.exists(status.format(threading.get_native_id())):
        unavailable("no /proc: the signal mask cannot be read here")
    api = FakeApi([pod("p", "n1")])
    from kubectl_safety.engine.watch import WatchGroup

    with WatchGroup(api) as group:
        watch = group.watch("pods", field_selector="spec.nodeName=n1")
        time.sleep(0.3)  # the thread has started and set its mask
        with open(status.format(watch._thread.native_id)) as f:
            blocked = int(next(line for line in f if line.startswith("SigBlk:")).split()[1], 16)
    assert blocked & (1 << (2 - 1)) and blocked & (1 << (15 - 1)), hex(blocked)  # SIGINT, SIGTERM
    api.closed = True
