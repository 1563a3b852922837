"""Engine settings read from the objects where the engines keep them (source "object", naming the object):
Karpenter's NodePool (through the node's NodeClaim or label), Cluster API's Machine, MachineDeployment and
MachineDrainRules, the system-upgrade-controller's Plan; in text and JSON, from a dump."""

import json

import pytest

from kubectl_safety.analysis import profiles
from kubectl_safety.analysis.profiles.base import Order
from kubectl_safety.analysis.profiles.outcome import Outcome, simulate
from kubectl_safety.errors import UsageError
from tests.builders import NOW, make_node, make_pdb, make_pod, snapshot
from tests.unit.cli_helpers import run_cli

KARPENTER = "karpenter.sh/v1"
CAPI = "cluster.x-k8s.io/v1beta2"


def node_pool(name, budgets=None, tgp=None):
    spec = {"template": {"spec": {"terminationGracePeriod": tgp} if tgp else {}}}
    if budgets is not None:
        spec["disruption"] = {"budgets": budgets}
    return {"apiVersion": KARPENTER, "kind": "NodePool", "metadata": {"name": name}, "spec": spec}


def node_claim(name, pool, node):
    return {"apiVersion": KARPENTER, "kind": "NodeClaim",
            "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": pool}}, "status": {"nodeName": node}}


def machine(name, node, spec=None, deployment="md", annotations=None):
    meta = {"name": name, "namespace": "capi", "labels": {"cluster.x-k8s.io/deployment-name": deployment},
            "annotations": annotations or {}}
    return {"apiVersion": CAPI, "kind": "Machine", "metadata": meta, "spec": spec or {},
            "status": {"nodeRef": {"name": node}}}


def machine_deployment(spec):
    return {"apiVersion": CAPI, "kind": "MachineDeployment", "metadata": {"name": "md", "namespace": "capi"},
            "spec": spec}


def drain_rule(name, behavior, selector):
    return {"apiVersion": CAPI, "kind": "MachineDrainRule", "metadata": {"name": name, "namespace": "capi"},
            "spec": {"drain": {"behavior": behavior}, "machines": [], "pods": [{"selector": selector}]}}


def plan(name, node_selector, concurrency=2, drain=None):
    return {"apiVersion": "upgrade.cattle.io/v1", "kind": "Plan",
            "metadata": {"name": name, "namespace": "system-upgrade", "uid": f"uid-{name}"},
            "spec": {"nodeSelector": node_selector, "concurrency": concurrency, "drain": drain or {}},
            "status": {"latestHash": "abc123"}}


NODES = [make_node("n1", labels={"pool": "a"}), make_node("n2", labels={"pool": "a", "karpenter.sh/nodepool": "general"}),
         make_node("n3", labels={"pool": "b"})]
GENERAL = node_pool("general", [{"nodes": "3"}, {"nodes": "1", "reasons": ["Drifted"], "schedule": "0 9 * * *",
                                                    "duration": "8h"}, {"nodes": "0", "reasons": ["Underutilized"]}],
                    tgp="30m")
MD = machine_deployment({"template": {"spec": {"deletion": {"nodeDrainTimeoutSeconds": 600}}},
                         "rollout": {"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 2}}}})
MACHINE = "Machine capi/m1"
PLAN = "Plan system-upgrade/os"

# (scenario, engine, objects, nodes, {setting: (text, source, origin: None for any)} or the usage error[, given])
ROWS = [
    ("karpenter-nodepool-of-the-nodeclaim", "karpenter", [GENERAL, node_claim("c1", "general", "n1")], ["n1"],
     {"terminationGracePeriod": ("30m", "object", "NodePool general"),
      "nodes": ("1", "object", "NodePool general, budget scheduled 0 9 * * * for 8h, active since 2026-11-22T09:00Z")}),
    ("karpenter-nodepool-of-the-node-label", "karpenter", [GENERAL], ["n2"],
     {"terminationGracePeriod": ("30m", "object", "NodePool general"),
      "nodes": ("1", "object", "NodePool general, budget scheduled 0 9 * * * for 8h, active since 2026-11-22T09:00Z")}),
    ("karpenter-percentage-of-the-nodepools-nodes-is-the-fewest", "karpenter",
     [node_pool("big", [{"nodes": "2"}, {"nodes": "50%"}]), node_claim("c1", "big", "n1"),
      node_claim("c3", "big", "n3")], ["n1"], {"nodes": ("1", "object", "NodePool big, nodes=50% of 2 rounded up")}),
    ("karpenter-budgets-for-other-reasons-only", "karpenter",
     [node_pool("quiet", [{"nodes": "0", "reasons": ["Empty"]}]), node_claim("c1", "quiet", "n1")], ["n1"],
     {"terminationGracePeriod": ("", "object", "NodePool quiet"),
      "nodes": ("1", "object", "NodePool quiet: no budget binds Drifted at 2026-11-22T09:00Z, every node at once")}),
    # nodepool.go Budget.IsActive: the cron schedule's last hit (UTC) within duration before now; inactive: no limit
    ("karpenter-scheduled-budget-outside-its-window-does-not-bind", "karpenter",
     [node_pool("night", [{"nodes": "0", "schedule": "0 22 * * *", "duration": "2h"}, {"nodes": "3"}]),
      node_claim("c1", "night", "n1")], ["n1"], {"nodes": ("3", "object", "NodePool night")}),
    ("karpenter-scheduled-budget-inside-its-window-binds", "karpenter",
     [node_pool("morning", [{"nodes": "0", "schedule": "30 8 * * sun", "duration": "1h"}, {"nodes": "3"}]),
      node_claim("c1", "morning", "n1")], ["n1"],
     {"nodes": ("0", "object", "NodePool morning, budget scheduled 30 8 * * sun for 1h, active since "
                               "2026-11-22T08:30Z")}),
    ("karpenter-schedule-that-does-not-parse-fails-closed", "karpenter",
     [node_pool("bad", [{"nodes": "3", "schedule": "0 25 * * *", "duration": "1h"}]), node_claim("c1", "bad", "n1")],
     ["n1"], {"nodes": ("0", "object", None)}),
    # GetAllowedDisruptionsByReason: only the budgets whose reasons name it (or list none)
    ("karpenter-budget-for-underutilized-binds-that-reason", "karpenter",
     [node_pool("r", [{"nodes": "0", "reasons": ["Underutilized"]}, {"nodes": "2", "reasons": ["Drifted"]}]),
      node_claim("c1", "r", "n1")], ["n1"], {"nodes": ("0", "object", "NodePool r")}, {"reason": "Underutilized"}),
    ("karpenter-budget-for-drift-binds-drift", "karpenter",
     [node_pool("r", [{"nodes": "0", "reasons": ["Underutilized"]}, {"nodes": "2", "reasons": ["Drifted"]}]),
      node_claim("c1", "r", "n1")], ["n1"], {"nodes": ("2", "object", "NodePool r")}),
    # nodeclaim/expiration controller.go Reconcile: an expired NodeClaim is deleted outside the budgets
    ("karpenter-expiry-is-not-budgeted", "karpenter",
     [node_pool("r", [{"nodes": "0"}]), node_claim("c1", "r", "n1")], ["n1"],
     {"nodes": ("10%", "default", ""), "reason": ("Expired", "flag", "")}, {"reason": "Expired"}),
    ("karpenter-node-without-nodepool", "karpenter", [GENERAL], ["n3"],
     {"terminationGracePeriod": ("", "default", ""), "nodes": ("10%", "default", "")}),
    ("capi-machine-and-its-machinedeployment", "capi", [machine("m1", "n1"), MD], ["n1"],
     {"nodeDrainTimeoutSeconds": ("600", "object", "MachineDeployment capi/md"),
      "maxSurge": ("0", "object", "MachineDeployment capi/md"),
      "maxUnavailable": ("2", "object", "MachineDeployment capi/md"),
      "exclude-node-draining": ("false", "object", MACHINE), "machineDrainRules": ("[]", "default", "")}),
    ("capi-the-machines-own-timeout-wins", "capi",
     [machine("m1", "n1", {"deletion": {"nodeDrainTimeoutSeconds": 60}}), MD], ["n1"],
     {"nodeDrainTimeoutSeconds": ("60", "object", MACHINE)}),
    ("capi-v1beta1-node-drain-timeout", "capi", [machine("m1", "n1", {"nodeDrainTimeout": "5m"}, deployment="x")],
     ["n1"], {"nodeDrainTimeoutSeconds": ("300", "object", MACHINE), "maxSurge": ("1", "default", "")}),
    ("capi-exclude-node-draining-annotation", "capi",
     [machine("m1", "n1", annotations={"machine.cluster.x-k8s.io/exclude-node-draining": ""})], ["n1"],
     {"exclude-node-draining": ("true", "object", MACHINE)}),
    ("capi-hooks-on-the-machine", "capi",
     [machine("m1", "n1", annotations={"pre-drain.delete.hook.machine.cluster.x-k8s.io/backup": "owner",
                                       "pre-terminate.delete.hook.machine.cluster.x-k8s.io/snap": ""})], ["n1"],
     {"pre-drain-hooks": ("pre-drain.delete.hook.machine.cluster.x-k8s.io/backup", "object", MACHINE),
      "pre-terminate-hooks": ("pre-terminate.delete.hook.machine.cluster.x-k8s.io/snap", "object", MACHINE)}),
    ("capi-replicas-of-the-machinedeployment", "capi",
     [machine("m1", "n1"), machine_deployment({"replicas": 10, "rollout": {"strategy": {"rollingUpdate": {
         "maxSurge": "25%", "maxUnavailable": "25%"}}}})], ["n1"],
     {"replicas": ("10", "object", "MachineDeployment capi/md"),
      "maxSurge": ("25%", "object", "MachineDeployment capi/md")}),
    ("capi-machinedrainrules-of-the-machines-namespace", "capi",
     [machine("m1", "n1"), drain_rule("b-skip", "Skip", {"matchLabels": {"app": "web"}})], ["n1"],
     {"machineDrainRules": (None, "object", "MachineDrainRules b-skip in capi")}),
    ("capi-node-without-machine", "capi", [machine("m1", "n1")], ["n3"],
     {"exclude-node-draining": ("false", "default", ""), "nodeDrainTimeoutSeconds": ("0", "default", "")}),
    ("suc-plan-selecting-the-node", "suc",
     [plan("os", {"matchLabels": {"pool": "a"}}, drain={"force": True, "timeout": "2m", "deleteLocalData": False,
                                                          "podSelector": {"matchLabels": {"tier": "web"}}})],
     ["n1", "n2"],
     {"concurrency": ("2", "object", PLAN), "drain.force": ("true", "object", PLAN),
      "drain.timeout": ("2m", "object", PLAN), "drain.deleteEmptydirData": ("false", "object", PLAN),
      "drain.podSelector": ("tier=web", "object", PLAN), "metadata.uid": ("uid-os", "object", PLAN),
      "status.latestHash": ("abc123", "object", PLAN), "drain.ignoreDaemonSets": ("true", "default", "")}),
    # not read: concurrency stays the default 0, which selects no node
    ("suc-plan-without-node-selector-selects-no-node", "suc", [plan("os", None)], ["n1"], "selects no node"),
]


def settings_of(engine, objects, nodes, given=None):
    snap = snapshot(*NODES, *objects)
    prof = profiles.load(engine, given or {}, snap, nodes)
    return snap, prof, {s.name: (s.text, s.source.value, s.origin) for s in prof.settings}


@pytest.mark.parametrize("name, engine, objects, nodes, expected, given",
                         [r if len(r) == 6 else (*r, None) for r in ROWS], ids=[r[0] for r in ROWS])
def test_engine_settings_come_from_the_engines_objects(name, engine, objects, nodes, expected, given):
    if isinstance(expected, str):
        with pytest.raises(UsageError, match=expected):
            settings_of(engine, objects, nodes, given)
        return
    _, _, got = settings_of(engine, objects, nodes, given)
    for setting, (text, source, origin) in expected.items():
        assert got[setting][1] == source and origin is None or got[setting][1:] == (source, origin), setting
        assert text is None or got[setting][0] == text, setting


def test_machinedrainrules_from_the_snapshot_decide_the_pods():
    web = make_pod("web-a", labels={"app": "web"})
    snap = snapshot(*NODES, machine("m1", "n1"), drain_rule("b-skip", "Skip", {"matchLabels": {"app": "web"}}), web)
    node = simulate(profiles.load("capi", {}, snap, ["n1"]), snap, ["n1"], NOW).nodes[0]
    assert node.outcome is Outcome.COMPLETES
    assert [(p.name, p.code) for p in node.pods] == [("web-a", "CAPI_DRAIN_SKIP")]


def test_a_plans_uid_and_hash_order_its_nodes():
    snap, prof, _ = settings_of("suc", [plan("os", {"matchLabels": {"pool": "a"}})], ["n1", "n2"])
    assert prof.order is Order.DETERMINISTIC and prof.parallel == 2


def test_a_flag_for_a_setting_the_object_sets_is_refused():
    with pytest.raises(UsageError, match="--engine-setting terminationGracePeriod: NodePool general sets it"):
        settings_of("karpenter", [GENERAL], ["n2"], {"terminationGracePeriod": "1h"})


def test_nodes_whose_objects_differ_are_a_usage_error():
    objects = [machine("m1", "n1", {"deletion": {"nodeDrainTimeoutSeconds": 60}}),
               machine("m2", "n2", {"deletion": {"nodeDrainTimeoutSeconds": 90}})]
    with pytest.raises(UsageError, match="nodeDrainTimeoutSeconds differs between the nodes' objects"):
        settings_of("capi", objects, ["n1", "n2"])


def test_nodes_selected_by_two_plans_are_a_usage_error():
    with pytest.raises(UsageError, match="node n1 is selected by Plans"):
        settings_of("suc", [plan("a", {}), plan("b", {"matchLabels": {"pool": "a"}})], ["n1"])


def test_the_object_is_shown_as_the_source_in_text_and_json(tmp_path):
    dump = tmp_path / "cluster.json"
    pdb = make_pdb("web", selector={"app": "web"}, min_available=0, allowed=1, healthy=1, desired=0, expected=1)
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        *NODES, GENERAL, node_claim("c1", "general", "n1"), make_pod("web-a", labels={"app": "web"}), pdb]}))
    args = ["drain", "n1", "--dry-run", "--engine", "karpenter", "--snapshot", str(dump), "--as-of", "2026-11-22T09:00:00Z"]
    code, out, err = run_cli([*args, "-o", "json"])
    settings = {s["name"]: s for s in json.loads(out)["engine"]["settings"]}
    assert settings["terminationGracePeriod"] == {"name": "terminationGracePeriod", "value": "30m", "source": "object",
                                                  "origin": "NodePool general"}
    code, out, err = run_cli(args)
    line = next(x for x in out.splitlines() if "terminationGracePeriod" in x)
    assert "30m" in line and "object (NodePool general)" in line


MALFORMED = [
    ("nodepool-fields-not-maps", "karpenter",
     [{**node_pool("general"), "spec": {"disruption": "x", "template": []}}, node_claim("c1", "general", "n1")]),
    ("nodepool-budget-reasons-not-a-list", "karpenter",
     [node_pool("general", [{"nodes": "1", "reasons": 5}, "x"]), node_claim("c1", "general", "n1")]),
    ("nodepool-budgets-not-a-list", "karpenter", [node_pool("general", 7), node_claim("c1", "general", "n1")]),
    ("nodeclaim-status-not-a-map", "karpenter", [GENERAL, {**node_claim("c1", "general", "n1"), "status": "x"}]),
    ("machine-fields-not-maps", "capi", [{**machine("m1", "n1"), "spec": {"deletion": 5}, "status": "x"},
                                         machine("m2", "n1", {"deletion": "x"})]),
    ("machinedeployment-rollout-not-a-map", "capi", [machine("m1", "n1"), machine_deployment({"rollout": [],
                                                                                              "template": "x"})]),
    ("machinedrainrule-drain-not-a-map", "capi", [machine("m1", "n1"), {**drain_rule("r", "Skip", {}),
                                                                         "spec": {"drain": "x"}}]),
    ("plan-drain-not-a-map", "suc", [{**plan("os", {"matchLabels": {"pool": "a"}}), "status": [],
                                      "spec": {"nodeSelector": {}, "concurrency": 1, "drain": "x"}}]),
]


@pytest.mark.parametrize("name, engine, objects", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_engine_object_is_one_error_line_or_ignored(tmp_path, name, engine, objects):
    dump = tmp_path / "cluster.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [*NODES, *objects]}))
    code, out, err = run_cli(["drain", "n1", "--dry-run", "--engine", engine, "--snapshot", str(dump),
                              "--as-of", "2026-11-22T09:00:00Z"])
    assert "internal error" not in err and "Traceback" not in err
    assert code in (0, 3) or (code in (1, 2) and len(err.strip().splitlines()) == 1), err


def test_karpenter_budget_active_now_holds_the_drain_and_expiry_drains_every_node_at_once():
    pool = node_pool("morning", [{"nodes": "0", "schedule": "30 8 * * sun", "duration": "1h"}])
    objects = [pool, *(node_claim(f"c{i}", "morning", f"n{i}") for i in (1, 2, 3)), make_pod("web", node="n1")]
    snap = snapshot(*NODES, *objects)
    drift = simulate(profiles.load("karpenter", {}, snap, ["n1", "n2"]), snap, ["n1", "n2"], NOW)
    node = drift.nodes[0]
    assert (node.outcome, node.at_seconds, node.setting) == (Outcome.STALLS, 0, "nodes")
    assert node.reason == ("the drain never starts: the disruption budget nodes=0 allows no Drifted disruption "
                           "while it is active")
    assert [(p.name, p.action, p.code) for p in node.pods] == [("web", "wait", "KARPENTER_BUDGET")]
    expiry = simulate(profiles.load("karpenter", {"reason": "Expired"}, snap, ["n1", "n2"]), snap, ["n1", "n2"], NOW)
    assert expiry.verdict is Outcome.COMPLETES and [list(b.nodes) for b in expiry.batches] == [["n1", "n2"]]


def test_karpenter_scheduled_budget_counts_active_when_the_snapshot_has_no_time():
    pool = node_pool("morning", [{"nodes": "0", "schedule": "30 8 * * sun", "duration": "1h"}, {"nodes": "3"}])
    snap = snapshot(*NODES, pool, node_claim("c1", "morning", "n1"), now=None)
    prof = profiles.load("karpenter", {}, snap, ["n1"])
    assert (prof.setting("nodes").text, prof.setting("nodes").origin) == (
        "0", "NodePool morning, budget scheduled 30 8 * * sun for 1h, counted active (the snapshot has no time)")


@pytest.mark.parametrize("taken_at", ["2026-11-22T10:00:00+00:00", "2026-11-22T12:00:00+02:00",
                                      "2026-11-22T05:00:00-05:00"], ids=["utc", "east-of-utc", "west-of-utc"])
def test_karpenter_reads_a_budget_schedule_in_utc_whatever_the_snapshot_time_zone(taken_at):
    """The same instant in any offset: the 09:00 UTC budget (2 h) is active at 10:00 UTC."""
    from datetime import datetime

    pool = node_pool("morning", [{"nodes": "0", "schedule": "0 9 * * *", "duration": "2h"}])
    snap = snapshot(*NODES, pool, node_claim("c1", "morning", "n1"), now=datetime.fromisoformat(taken_at))
    setting = profiles.load("karpenter", {}, snap, ["n1"]).setting("nodes")
    assert (setting.text, setting.origin) == (
        "0", "NodePool morning, budget scheduled 0 9 * * * for 2h, active since 2026-11-22T09:00Z")
