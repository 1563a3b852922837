"""``kubectl safety check`` on the command line: exit codes, output, flags, several contexts."""

import json

import pytest

from tests.builders import make_node, make_pdb, make_pod, make_workload
from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli

OFFLINE = ["--snapshot", DEMO, "--as-of", DEMO_NOW]


def dump(tmp_path, *objects):
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}))
    return ["--snapshot", str(path), "--as-of", DEMO_NOW]


def healthy():
    """Two nodes, a 2-replica Deployment with a PDB allowing one disruption, one pod per node."""
    rs = make_workload("ReplicaSet", "web-1", replicas=2, labels={"app": "web"},
                       owner=("Deployment", "web"))
    return [make_node("n1", zone="a"), make_node("n2", zone="b"),
            make_workload("Deployment", "web", replicas=2, labels={"app": "web"}), rs,
            make_pod("web-1-x", node="n1", cpu="100m", labels={"app": "web"}, owner=("ReplicaSet", "web-1")),
            make_pod("web-1-y", node="n2", cpu="100m", labels={"app": "web"}, owner=("ReplicaSet", "web-1")),
            make_pdb("web", selector={"app": "web"}, max_unavailable=1, allowed=1, healthy=2, desired=1, expected=2)]


def test_demo_is_not_ready_and_says_what_blocks_first():
    code, out, err = run_cli(["check"] + OFFLINE)
    assert code == 3, err
    assert out.index("What blocks a rolling upgrade of all nodes") < out.index("Nodes:") < out.index("Findings:")
    first = out.split("What blocks a rolling upgrade of all nodes:\n")[1].splitlines()[1]
    assert first.startswith("PodDisruptionBudget/shop/db") and "node-a2" in first
    assert "NOT READY" in out


def test_demo_json_is_a_cluster_check():
    code, out, _ = run_cli(["check", "-o", "json", *RUNBOOK] + OFFLINE)
    report = json.loads(out)
    assert code == 3 and report["kind"] == "ClusterCheck"
    assert {n["name"]: n["drainable"] for n in report["nodes"]}["node-a1"] is True
    assert report["assumes"]["ignoreDaemonsets"] and report["assumes"]["deleteEmptydirData"]


RUNBOOK = ["--ignore-daemonsets", "--delete-emptydir-data"]


@pytest.mark.parametrize("flags", [[], RUNBOOK, ["--ignore-daemonsets"]], ids=["defaults", "runbook", "daemonsets"])
def test_check_and_rollout_agree_on_a_node_given_the_same_drain_flags(flags):
    """check planned with drain's defaults only when told otherwise: node-c2 (an emptyDir pod) is
    drainable in check exactly when its rollout batch is safe, and check says what it assumed."""
    checked = json.loads(run_cli(["check", "-o", "json", *flags] + OFFLINE)[1])
    rolled = json.loads(run_cli(["rollout", "node-c2", "--dry-run", "-o", "json", *flags] + OFFLINE)[1])
    c2 = {n["name"]: n for n in checked["nodes"]}["node-c2"]
    assert c2["drainable"] is rolled["batches"][0]["safe"]
    assumed = checked["assumes"]
    assert (assumed["ignoreDaemonsets"], assumed["deleteEmptydirData"]) == (
        "--ignore-daemonsets" in flags, "--delete-emptydir-data" in flags)
    text = run_cli(["check", *flags] + OFFLINE)[1]
    assert text.splitlines()[1] == " ".join(["Each node planned as: kubectl safety drain NODE --dry-run", *flags])


@pytest.mark.parametrize("flags, code", [
    ([], 0),                                  # every node drainable, no finding
    (["--ignore-daemonsets"], 0),             # no DaemonSet pods here: the flag changes nothing
    (["--fail-on", "warning"], 0),
    (["--timeout", "1s"], 3),                 # each drain takes longer than 1s: DRAIN_TIMEOUT
])
def test_a_healthy_cluster_passes_the_gate(tmp_path, flags, code):
    got, out, err = run_cli(["check"] + flags + dump(tmp_path, *healthy()))
    assert got == code, out + err


def test_fail_on_warning_fails_on_a_warning_only(tmp_path):
    objects = healthy() + [make_pdb("orphan", selector={"app": "nothing"}, min_available=1)]
    assert run_cli(["check"] + dump(tmp_path, *objects))[0] == 0
    code, out, _ = run_cli(["check", "--fail-on", "warning"] + dump(tmp_path, *objects))
    assert code == 3 and "PDB_SELECTS_NOTHING" in out


def test_drain_flags_change_the_verdict():
    runbook = json.loads(run_cli(["check", "-o", "json", "-l", "topology.kubernetes.io/zone=eu-west-1a", *RUNBOOK]
                                 + OFFLINE)[1])
    strict = json.loads(run_cli(["check", "-o", "json", "-l", "topology.kubernetes.io/zone=eu-west-1a"] + OFFLINE)[1])
    assert {n["name"]: n["drainable"] for n in runbook["nodes"]}["node-a1"] is True
    a1 = {n["name"]: n for n in strict["nodes"]}["node-a1"]
    assert a1["drainable"] is False and "POD_NOT_EVICTABLE" in {r["code"] for r in a1["risks"]}


@pytest.mark.parametrize("args, message", [
    (["--context", "a", "--context", "b"] + OFFLINE, "--context cannot be used with --snapshot"),
    (["--context", "a", "--all-contexts"], "cannot be used together"),
    (["--accept-risk", "nonsense"] + OFFLINE, "unknown risk"),
    (["-l", "==="] + OFFLINE, "--selector"),
])
def test_usage_errors(args, message):
    code, _, err = run_cli(["check"] + args)
    assert code == 2 and message in err


def test_several_contexts_run_in_parallel_each_in_its_section(tmp_path, monkeypatch):
    config = tmp_path / "kubeconfig"
    clusters = [{"name": c, "cluster": {"server": "https://127.0.0.1:1"}} for c in ("east", "west")]
    config.write_text(json.dumps({"apiVersion": "v1", "kind": "Config", "clusters": clusters,
                                  "users": [{"name": "u", "user": {"token": "t"}}],
                                  "contexts": [{"name": c, "context": {"cluster": c, "user": "u"}}
                                               for c in ("east", "west")]}))
    monkeypatch.setenv("KUBECONFIG", str(config))
    code, out, _ = run_cli(["check", "--all-contexts", "-o", "json", "--request-timeout", "2s"])
    report = json.loads(out)
    assert code == 1 and report["kind"] == "List"
    assert [(i["kind"], i["context"], "error" in i) for i in report["items"]] == [
        ("ClusterCheck", "east", True), ("ClusterCheck", "west", True)]
    code, out, _ = run_cli(["check", "--context", "east", "--context", "west", "--request-timeout", "2s"])
    assert "=== context east ===" in out and "=== context west ===" in out


@pytest.mark.parametrize("surge", [False, True])
def test_check_surge_on_a_live_cluster_reads_the_autoscalers_and_quotas(tmp_path, monkeypatch, surge):
    from kubectl_safety.cli.session import Session
    from tests.builders import snapshot

    read = []

    def fake_snapshot(self, queries=(), command=""):
        read.extend(q.resource for q in queries)
        return snapshot(make_node("n1"))

    config = tmp_path / "kubeconfig"
    config.write_text(json.dumps({"apiVersion": "v1", "kind": "Config", "current-context": "c",
                                  "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                                  "users": [{"name": "u", "user": {"token": "t"}}],
                                  "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    monkeypatch.setenv("KUBECONFIG", str(config))
    monkeypatch.setattr(Session, "snapshot", fake_snapshot)
    run_cli(["check"] + (["--surge"] if surge else []))
    assert "pods" in read
    assert ({"horizontalpodautoscalers", "resourcequotas"} <= set(read)) == surge


@pytest.mark.parametrize("flags, lifted, line", [
    ([], {"node-a1": ["--ignore-daemonsets"], "node-b1": ["--ignore-daemonsets"],
          "node-c2": ["--ignore-daemonsets", "--delete-emptydir-data"]},
     "3 node(s) blocked only by kubectl drain's defaults (DaemonSet-managed pods, emptyDir data): node-a1, "
     "node-b1, node-c2; --ignore-daemonsets --delete-emptydir-data would lift these blockers."),
    (["--ignore-daemonsets"], {"node-c2": ["--delete-emptydir-data"]},
     "1 node(s) blocked only by kubectl drain's defaults (emptyDir data): node-c2; "
     "--delete-emptydir-data would lift these blockers."),
    (["--ignore-daemonsets", "--delete-emptydir-data"], {}, None),
], ids=["drain-defaults", "daemonsets-ignored", "runbook-flags"])
def test_check_says_once_which_nodes_only_drain_defaults_block(flags, lifted, line):
    """node-a2, node-b2, node-c1 (a PDB, an unmanaged pod, no room) and node-d1 (an unmanaged pod) stay out."""
    code, out, _ = run_cli(["check", *flags, *OFFLINE])
    said = [x for x in out.splitlines() if "kubectl drain's defaults" in x]
    assert code == 3 and said == ([line] if line else []), out
    code, out, _ = run_cli(["check", *flags, *OFFLINE, "-o", "json"])
    assert {n["name"]: n["liftedBy"] for n in json.loads(out)["nodes"] if n["liftedBy"]} == lifted


def test_a_node_blocked_by_a_daemonset_pod_and_a_pdb_is_not_said_to_be_lifted_by_the_flag(tmp_path):
    objs = healthy() + [make_workload("DaemonSet", "agent", labels={"app": "agent"}),
                        make_pod("agent-1", node="n1", labels={"app": "agent"}, owner=("DaemonSet", "agent")),
                        make_pdb("never", selector={"app": "web"}, min_available=2, allowed=0, healthy=2, desired=2,
                                 expected=2)]
    code, out, _ = run_cli(["check", *dump(tmp_path, *objs), "-o", "json"])
    nodes = {n["name"]: n for n in json.loads(out)["nodes"]}
    assert code == 3 and not nodes["n1"]["drainable"] and nodes["n1"]["liftedBy"] == []


@pytest.mark.parametrize("pool, nodes", [("blue", ["node-a1", "node-b1", "node-c2"]),
                                         ("green", ["node-a2", "node-b2", "node-c1"])])
def test_the_demo_dump_has_the_pools_the_readme_selects(pool, nodes):
    code, out, _ = run_cli(["check", "-l", f"pool={pool}", *OFFLINE, "-o", "json"])
    assert code in (0, 3) and [n["name"] for n in json.loads(out)["nodes"]] == nodes
