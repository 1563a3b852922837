"""The termination timeline `explain pod` and `delete` print, against what a real kubelet does.

Each test asks the tool first, then deletes, evicts or force-deletes the pods and compares the
tool's times with the signals the test app logged and the exit times this process saw (pidfds),
all on this machine's monotonic clock, relative to the kubelet's first action on the pod.
"""

from __future__ import annotations

import json
import time

import pytest
from cluster_helpers import RawApi, create, wait_until
from kubelet_helpers import TOLERANCE, ExitWatch, app_container, app_pod, events, first, pod_json, running_pids

from tests.unit.cli_helpers import run_cli


def tool(cluster, *args) -> dict:
    code, out, err = run_cli([*args, "-o", "json", "--kubeconfig", str(cluster.kubeconfig)])
    assert code == 0, err
    return json.loads(out)


def kills(steps: list[dict]) -> list[int]:
    """The times (s) the tool's timeline sends SIGKILL."""
    return [s["at"] for s in steps if "SIGKILL" in s["event"]]


def sigterm_at(steps: list[dict]) -> int:
    """When the tool's timeline sends the container ``app`` SIGTERM."""
    return next(s["at"] for s in steps if s["event"].startswith(("SIGTERM to app ", "SIGTERM to the main containers")))


def kubelet_start(namespace, pod, container="app") -> float:
    """When the kubelet began terminating the container: its preStop hook, else its SIGTERM."""
    evs = events(namespace, pod, container)
    return first(evs, "prestop-start") or first(evs, "signal SIGTERM")


# (pod, container kwargs, grace, the kubelet's behaviour: SIGTERM and exit relative to its first action)
CASES = [
    ("prestop-within-grace", dict(pre_stop_sleep=3), 8, 3, 8),
    ("prestop-overruns-grace", dict(pre_stop_sleep=10), 4, 4, 6),
    ("grace-one-second", dict(), 1, 0, 2),
    ("exits-early", dict(on_term="exit", term_delay=1), 10, 0, 1),
]


def test_delete_timeline_matches_the_kubelet(cluster, real_node, namespace):
    pods = [app_pod(namespace, name, grace=grace, **kwargs) for name, kwargs, grace, _, _ in CASES]
    sidecars = [app_container(namespace, "sidecars", n, on_term="exit", term_delay=1, sidecar=True)
                for n in ("first", "second")]
    pods.append(app_pod(namespace, "sidecars", grace=10, sidecars=sidecars,
                        containers=[app_container(namespace, "sidecars", "app", on_term="exit", term_delay=1)]))
    create(cluster, namespace, *pods)
    procs = [(name, "app") for name, *_ in CASES] + [("sidecars", c) for c in ("app", "first", "second")]
    watch = ExitWatch(running_pids(cluster, namespace, procs))
    said = {p["metadata"]["name"]: tool(cluster, "explain", "pod", p["metadata"]["name"], "-n", namespace)
            for p in pods}

    cluster.kubectl("delete", "pod", "--all", "-n", namespace, "--wait=false")
    exits = watch.wait(timeout=30)

    for name, kwargs, grace, term_at, exit_at in CASES:
        start = kubelet_start(namespace, name)
        term = first(events(namespace, name, "app"), "signal SIGTERM") - start
        stopped = exits[f"{name}.app"] - start
        t = said[name]["termination"]
        print(f"{name}: tool SIGTERM at {sigterm_at(t['steps'])}, SIGKILL at {kills(t['steps'])}; "
              f"kubelet SIGTERM +{term:.2f}s, exit +{stopped:.2f}s")
        assert t["gracePeriodSeconds"] == grace
        assert abs(term - term_at) < TOLERANCE, (name, term)
        if 0 < kwargs.get("pre_stop_sleep", 0) < grace:  # an exec hook's length is not known: SIGTERM by then
            assert term < sigterm_at(t["steps"]) + TOLERANCE, (name, t["steps"])
        else:  # at once, or as the hook uses up the grace period
            assert abs(term - sigterm_at(t["steps"])) < TOLERANCE, (name, t["steps"])
        assert abs(stopped - exit_at) < TOLERANCE, (name, stopped)
        if kwargs.get("on_term") == "exit":  # exits on its own, before any SIGKILL the tool shows
            assert stopped < min(kills(t["steps"])), (name, t["steps"])
        elif kwargs.get("pre_stop_sleep", 0) >= grace:  # the hook used up the grace period
            assert max(kills(t["steps"])) == exit_at, (name, t["steps"])
        else:  # killed at the grace period (or the 2 s minimum), the tool's first SIGKILL
            assert min(kills(t["steps"])) == exit_at, (name, t["steps"])

    # Native sidecars: main first, then the sidecars in reverse order, each after the previous exited.
    order = [("sidecars.app", "app"), ("sidecars.second", "second"), ("sidecars.first", "first")]
    terms = [first(events(namespace, "sidecars", c), "signal SIGTERM") for _, c in order]
    assert terms == sorted(terms), terms
    print("sidecars: SIGTERM after the previous exit: "
          + ", ".join(f"{c} +{term - exits[p]:.2f}s" for (p, _), (_, c), term in zip(order, order[1:], terms[1:])))
    for (previous, _), term in zip(order, terms[1:]):
        assert 0 <= term - exits[previous] < TOLERANCE, (previous, term - exits[previous])
    steps = " ".join(s["event"] for s in said["sidecars"]["termination"]["steps"])
    assert "sidecars (second, first) get SIGTERM only after every main container has exited, in reverse order" in steps


def test_delete_grace_period_and_eviction_use_the_grace_the_tool_shows(cluster, real_node, namespace):
    create(cluster, namespace, app_pod(namespace, "deleted", grace=30), app_pod(namespace, "evicted", grace=3))
    watch = ExitWatch(running_pids(cluster, namespace, [("deleted", "app"), ("evicted", "app")]))
    planned = tool(cluster, "delete", "pod", "deleted", "-n", namespace, "--grace-period", "4", "--dry-run")
    evicted = tool(cluster, "explain", "pod", "evicted", "-n", namespace)["termination"]

    tool(cluster, "delete", "pod", "deleted", "-n", namespace, "--grace-period", "4", "--no-wait")
    assert RawApi(cluster).evict(namespace, "evicted").status == 201
    exits = watch.wait(timeout=20)

    grace = {"deleted": kills(_only_pod(planned)["timeline"])[-1], "evicted": evicted["eviction"]["gracePeriodSeconds"]}
    assert grace == {"deleted": 4, "evicted": 3}
    for name, seconds in grace.items():
        stopped = exits[f"{name}.app"] - kubelet_start(namespace, name)
        print(f"{name}: tool grace {seconds}s; kubelet exit +{stopped:.2f}s after SIGTERM")
        assert abs(stopped - seconds) < TOLERANCE, (name, stopped)


def test_force_delete_leaves_the_process_running_until_the_kubelet_stops_it(cluster, real_node, namespace):
    create(cluster, namespace, app_pod(namespace, "forced", grace=30), app_pod(namespace, "graceful", grace=5))
    watch = ExitWatch(running_pids(cluster, namespace, [("forced", "app"), ("graceful", "app")]))

    forced = tool(cluster, "delete", "pod", "forced", "-n", namespace, "--force", "--confirm", "--no-wait")
    gone_at = time.monotonic()
    assert pod_json(cluster, namespace, "forced") is None  # the API object is gone at once ...
    assert "forced.app" not in watch.exits  # ... while the process still runs
    graceful = tool(cluster, "delete", "pod", "graceful", "-n", namespace, "--no-wait")
    exits = watch.wait(timeout=20)

    steps = _only_pod(forced)["timeline"]
    assert "processes may still run" in steps[0]["event"] and steps[0]["at"] == 0
    # On a Ready node the kubelet stops it anyway: SIGTERM, then SIGKILL after its 2 s minimum.
    term = first(events(namespace, "forced", "app"), "signal SIGTERM")
    print(f"forced: tool {[(s['at'], s['event'][:40]) for s in steps]}; object gone, process alive; "
          f"SIGTERM +{term - gone_at:.2f}s after the DELETE returned, exit +{exits['forced.app'] - term:.2f}s after it")
    assert term > gone_at - TOLERANCE
    assert abs(exits["forced.app"] - term - kills(steps)[-1]) < TOLERANCE
    # A graceful delete keeps the object until the kubelet has stopped the process at the grace period.
    stopped = exits["graceful.app"] - kubelet_start(namespace, "graceful")
    assert abs(stopped - kills(_only_pod(graceful)["timeline"])[-1]) < TOLERANCE
    wait_until(lambda: pod_json(cluster, namespace, "graceful") is None, timeout=20, what="the graceful pod to go")


def _only_pod(report: dict) -> dict:
    pods = report["pods"] if "pods" in report else report["items"]
    assert len(pods) == 1, report
    return pods[0]
