"""Grace periods (seed 003 and upstream BeforeDelete / kubelet rules)."""

import pytest

from kubectl_safety.analysis.explanations.common import TimelineStep
from kubectl_safety.analysis.termination import api_grace_period, timeline
from kubectl_safety.model.pods import Pod
from tests.builders import container, make_pod

CASES = [
    ("default 30 s", {}, None, 30),
    ("spec value", dict(terminationGracePeriodSeconds=60), None, 60),
    ("request overrides spec", dict(terminationGracePeriodSeconds=60), 5, 5),
    ("negative request becomes 1", {}, -5, 1),
    ("unscheduled pod deleted at once", dict(node=None), None, 0),
    ("finished pod deleted at once", dict(phase="Succeeded"), None, 0),
    ("terminating pod: can only shorten", dict(meta={"deletionTimestamp": "2026-11-22T09:00:10Z", "deletionGracePeriodSeconds": 10}), 30, 10),
    ("terminating pod: shorter request wins", dict(meta={"deletionTimestamp": "2026-11-22T09:00:10Z", "deletionGracePeriodSeconds": 10}), 3, 3),
]


@pytest.mark.parametrize("kwargs,requested,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_api_grace_period(kwargs, requested, expected):
    assert api_grace_period(Pod(make_pod("p", **kwargs)), requested)["seconds"] == expected


def test_probe_level_grace_period_applies_to_probe_failures():
    c = container("app", livenessProbe={"httpGet": {"path": "/"}, "terminationGracePeriodSeconds": 10},
                  startupProbe={"exec": {"command": ["true"]}})
    t = timeline(Pod(make_pod("p", containers=[c], terminationGracePeriodSeconds=60)))
    probes = {p.probe: p.grace_period_seconds for p in t.probe_failure}
    assert probes == {"livenessProbe": 10, "startupProbe": 60}


def test_pre_stop_that_uses_up_the_grace_period_keeps_two_seconds_for_sigterm():
    c = container("app", lifecycle={"preStop": {"exec": {"command": ["sleep", "60"]}}})
    t = timeline(Pod(make_pod("p", containers=[c], terminationGracePeriodSeconds=1)))
    assert t.steps[-1].at == 3 and t.pre_stop[0].hook == "exec"


LAST_KILL = [
    ("preStop overrunning the grace period: SIGKILL at grace + 2 s",
     {"exec": {"command": ["sleep", "30"]}}, 30, [30, 32]),
    ("preStop sleep within the grace period: SIGKILL at the grace period", {"sleep": {"seconds": 3}}, 8, [8]),
    ("preStop sleep ending 1 s before the grace period: 2 s for SIGTERM", {"sleep": {"seconds": 7}}, 8, [8, 9]),
    ("preStop sleep longer than the grace period: cut at the grace period", {"sleep": {"seconds": 10}}, 4, [4, 6]),
    ("no preStop: SIGKILL at the grace period", None, 5, [5]),
]


@pytest.mark.parametrize("hook,grace,kills", [c[1:] for c in LAST_KILL], ids=[c[0] for c in LAST_KILL])
def test_sigkill_times_follow_the_kubelet_kill_container(hook, grace, kills):
    c = container("app", lifecycle={"preStop": hook}) if hook else container("app")
    t = timeline(Pod(make_pod("p", containers=[c], terminationGracePeriodSeconds=grace)))
    assert [s.at for s in t.steps if "SIGKILL" in s.event] == kills


def test_sidecars_can_be_killed_two_seconds_after_the_grace_period():
    sidecar = container("mesh", restartPolicy="Always")
    t = timeline(Pod(make_pod("p", containers=[container("app")], initContainers=[sidecar],
                              terminationGracePeriodSeconds=4)))
    assert [s.at for s in t.steps if "SIGKILL" in s.event] == [4, 6]


def test_hard_eviction_kills_after_the_kubelet_minimum_of_two_seconds():
    t = timeline(Pod(make_pod("p", terminationGracePeriodSeconds=30)))
    assert "SIGKILL 2 s after SIGTERM" in t.kubelet_hard_eviction.note


def test_force_delete_on_a_running_node_still_stops_the_containers_after_two_seconds():
    t = timeline(Pod(make_pod("p", terminationGracePeriodSeconds=30)), requested=0)
    assert [s.at for s in t.steps] == [0, 2] and "SIGKILL by t+2s" in t.steps[1].event


def test_soft_eviction_is_capped_by_kubelet_setting():
    t = timeline(Pod(make_pod("p", terminationGracePeriodSeconds=120)), eviction_max_pod_grace=30)
    assert t.kubelet_soft_eviction.grace_period_seconds == 30
    assert t.kubelet_hard_eviction.grace_period_seconds == 1


TERMINATING = {"deletionTimestamp": "2099-01-01T00:00:30Z", "deletionGracePeriodSeconds": 30}
KEEPS = [
    ("already terminating pod keeps its deletion grace over a shorter spec",
     dict(terminationGracePeriodSeconds=5, meta=TERMINATING), None, 30),
    ("already terminating pod that finished keeps its deletion grace", dict(phase="Succeeded", meta=TERMINATING), None, 30),
    ("already terminating pod without deletion grace is deleted at once",
     dict(meta={"deletionTimestamp": "2099-01-01T00:00:00Z"}), None, 0),
    ("already terminating pod: a shorter request whose deadline passed becomes 1 s",
     dict(meta={"deletionTimestamp": "2020-01-01T00:00:30Z", "deletionGracePeriodSeconds": 30}), 10, 1),
]


@pytest.mark.parametrize("kwargs,requested,expected", [c[1:] for c in KEEPS], ids=[c[0] for c in KEEPS])
def test_already_terminating_pod_keeps_its_deletion_grace(kwargs, requested, expected):
    from datetime import datetime, timezone
    now = datetime(2026, 11, 22, 9, 0, tzinfo=timezone.utc)
    assert api_grace_period(Pod(make_pod("p", **kwargs)), requested, now=now)["seconds"] == expected


def test_sidecars_stop_after_main_containers_and_their_pre_stop_hooks_run():
    hook = {"preStop": {"sleep": {"seconds": 3}}}
    sidecars = [container("log", restartPolicy="Always", lifecycle=hook), container("mesh", restartPolicy="Always")]
    t = timeline(Pod(make_pod("p", containers=[container("app")], initContainers=sidecars)))
    assert [(p.container, p.sidecar) for p in t.pre_stop] == [("log", True)]
    events = [s.event for s in t.steps]
    assert any("sidecars (mesh, log) get SIGTERM only after every main container has exited" in e for e in events)


def test_kubelet_minimum_grace_of_two_seconds_without_pre_stop():
    t = timeline(Pod(make_pod("p", terminationGracePeriodSeconds=1)))
    assert t.steps[-1] == TimelineStep(2, "SIGKILL to anything still running")


SIGTERM = [
    ("preStop exec using up the grace period: SIGTERM as the grace period ends",
     [("app", {"exec": {"command": ["sleep", "10"]}})], 4, [(4, "app when its preStop hook ends, at the latest here")]),
    ("preStop sleep within the grace period: SIGTERM as it ends", [("app", {"sleep": {"seconds": 3}})], 8,
     [(3, "app when its preStop hook ends")]),
    ("preStop sleep longer than the grace period: SIGTERM as the grace period ends",
     [("app", {"sleep": {"seconds": 10}})], 4, [(4, "app as the grace period ends")]),
    ("a container without a hook beside one with: SIGTERM at once", [("app", {"sleep": {"seconds": 3}}), ("log", None)],
     8, [(0, "log (no preStop hook)"), (3, "app when its preStop hook ends")]),
    ("no preStop: SIGTERM at once", [("app", None)], 30, [(0, "the main containers")]),
]


@pytest.mark.parametrize("hooks,grace,terms", [c[1:] for c in SIGTERM], ids=[c[0] for c in SIGTERM])
def test_sigterm_comes_when_the_pre_stop_hook_ends_or_the_grace_period_does(hooks, grace, terms):
    cs = [container(name, lifecycle={"preStop": hook}) if hook else container(name) for name, hook in hooks]
    t = timeline(Pod(make_pod("p", containers=cs, terminationGracePeriodSeconds=grace)))
    rows = [(s.at, s.event[len("SIGTERM to "):]) for s in t.steps if s.event.startswith("SIGTERM to ")]
    assert [(at, event[:len(want)]) for (at, event), (_, want) in zip(rows, terms)] == terms and len(rows) == len(terms)
    assert [s.at for s in t.steps] == sorted(s.at for s in t.steps)  # in the order they happen
