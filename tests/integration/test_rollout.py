"""`rollout` on the real control plane: a pool of 6 kwok nodes in 3 zones maintained batch by batch
with an --exec "reboot", interrupted with Ctrl-C and resumed, a second rollout refused meanwhile, a
sampler proving no budget is ever broken; a failing health gate; and the drain that never churns.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time

from cluster_helpers import (ReadyRecorder, create, deployment, get_json, pdb, place_on, pod, pool_nodes,
                             wait_pdb_settled, wait_pods_running, wait_until)

from tests.unit.cli_helpers import run_cli

UA = "kubectl-safety/"
ZONES = ("z-a", "z-b", "z-c")
REBOOT = """#!/bin/sh
# A reboot as kwok can play it: the node stops being managed and goes NotReady, then comes back.
set -e
echo "$NODE" >> "$EXEC_LOG"
kubectl annotate node "$NODE" kwok.x-k8s.io/node- >/dev/null
kubectl patch node "$NODE" --subresource=status --type=strategic \
  -p '{"status":{"conditions":[{"type":"Ready","status":"False","reason":"Rebooting","message":"rebooting"}]}}' >/dev/null
sleep 1
kubectl annotate node "$NODE" kwok.x-k8s.io/node=fake >/dev/null
"""


def spread(labels):
    return [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": labels}}]


def workloads(namespace):
    """web (6, spread over zones, PDB minAvailable 5), api (3, PDB maxUnavailable 1), StatefulSet db
    (3, PDB maxUnavailable 1), all on the test's nodes (label tier=<namespace>)."""
    sel = {"tier": namespace}
    web = deployment("web", 6, node_selector=sel, requests={"cpu": "100m"})
    web["spec"]["template"]["spec"]["topologySpreadConstraints"] = spread({"app": "web"})
    api = deployment("api", 3, node_selector=sel, requests={"cpu": "100m"})
    db = deployment("db", 3, node_selector=sel, requests={"cpu": "100m"})
    db["kind"], db["spec"]["serviceName"] = "StatefulSet", "db"
    db["spec"]["podManagementPolicy"] = "Parallel"
    return [web, api, db, pdb("web", {"app": "web"}, min_available=5), pdb("api", {"app": "api"}, max_unavailable=1),
            pdb("db", {"app": "db"}, max_unavailable=1)]


MINIMUM = {"web": 5, "api": 2, "db": 2}


class Run:
    """``kubectl-safety rollout ARGS -o json`` in the background, stderr lines collected as they come."""

    def __init__(self, cluster, env, *args):
        cmd = ["kubectl-safety", "rollout", *args, "--kubeconfig", str(cluster.kubeconfig), "-o", "json"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.lines, self.out = [], []
        self.readers = [threading.Thread(target=lambda: self.lines.extend(self.proc.stderr), daemon=True),
                        threading.Thread(target=lambda: self.out.append(self.proc.stdout.read()), daemon=True)]
        for r in self.readers:
            r.start()

    def saw(self, text) -> bool:
        return any(text in line for line in list(self.lines))

    def finish(self, timeout=180):
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"rollout still ran after {timeout}s: {''.join(self.lines)[-3000:]}") from None
        for r in self.readers:
            r.join(10)
        out = "".join(self.out)
        return code, (json.loads(out) if out.strip() else None), "".join(self.lines)


def environment(cluster, tmp_path):
    script = tmp_path / "reboot.sh"
    script.write_text(REBOOT)
    script.chmod(0o755)
    env = dict(os.environ, KUBECONFIG=str(cluster.kubeconfig), EXEC_LOG=str(tmp_path / "exec.log"),
               PATH=f"{cluster.bin_dir}{os.pathsep}{os.environ['PATH']}")
    return env, str(script)


def make_pool(make_node, namespace, per_zone, role, **labels):
    names = []
    for zone in ZONES:
        for i in range(per_zone):
            name = f"{role}-{namespace[-6:]}-{zone[-1]}{i}"
            make_node(name, zone=zone, cpu="2", labels={"tier": namespace, "role": f"{role}-{namespace[-6:]}",
                                                          **labels})
            names.append(name)
    return names


def test_pool_rollout_interrupted_resumed_exclusive_and_no_budget_broken(cluster, namespace, make_node, tmp_path, audit):
    pool = make_pool(make_node, namespace, 2, "ro")
    for name in pool:
        cluster.kubectl("cordon", name)
    spares = make_pool(make_node, namespace, 1, "spare")
    for name in spares:  # the workloads start on the pool; the spares take the first batch's pods
        cluster.kubectl("cordon", name)
    for name in pool:
        cluster.kubectl("uncordon", name)
    create(cluster, namespace, *workloads(namespace))
    wait_pods_running(cluster, namespace, count=12)
    for name in spares:
        cluster.kubectl("uncordon", name)
    env, script = environment(cluster, tmp_path)
    selector = f"role=ro-{namespace[-6:]}"
    args = ["-l", selector, "--exec", script, "--gate-timeout", "60s", "--ready-timeout", "60s",
            "--lease-namespace", namespace]

    code, out, err = run_cli(["rollout", *args, "--dry-run", "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    plan = json.loads(out)
    assert code == 0 and plan["kind"] == "RolloutPlan" and plan["safe"], err
    assert len(plan["batches"]) == 6 and sorted(n for b in plan["batches"] for n in b["nodes"]) == sorted(pool)
    assert [b["zones"] for b in plan["batches"][:3]] == [["z-a"], ["z-b"], ["z-c"]]  # zones take turns

    since = audit.now()
    with ReadyRecorder(cluster, namespace, group=lambda p: p["metadata"].get("labels", {}).get("app")) as budgets:
        first = Run(cluster, env, *args, "--yes")
        wait_until(lambda: first.saw("batch 1/6"), 60, "the first batch to start")
        code, refused, err = run_cli(["rollout", *args, "--yes", "--kubeconfig", str(cluster.kubeconfig)])
        assert code == 3 and "is held by kubectl-safety@" in err, err  # a second rollout is refused, holder named
        wait_until(lambda: first.saw("batch 3/6"), 120, "the third batch to start")
        first.proc.send_signal(signal.SIGINT)
        code, report, err = first.finish()
        assert code == 130 and report["status"] == "interrupted", err
        lease = get_json(cluster, "lease", report["rollout"], "-n", namespace)
        assert not lease["spec"].get("holderIdentity")  # released: the same command resumes
        states = {n: get_json(cluster, f"node/{n}")["metadata"]["annotations"].get("safety.kubectl.io/rollout-state")
                  for n in pool}
        assert sum(1 for s in states.values() if s == "done") >= 2, states

        second = Run(cluster, env, *args, "--yes")
        code, report, err = second.finish(240)
        assert code == 0 and report["status"] == "done" and report["resumed"], err
    lowest = {app: budgets.lowest(app) for app in MINIMUM}
    assert budgets.changes > 50 and all(lowest[app] >= MINIMUM[app] for app in MINIMUM), lowest
    maintained = (tmp_path / "exec.log").read_text().split()
    assert sorted(set(maintained)) == sorted(pool)
    assert len(maintained) <= len(pool) + 1  # only the node interrupted mid-maintenance may run twice
    for name in pool:
        node = get_json(cluster, f"node/{name}")
        assert not node["spec"].get("unschedulable"), name  # every node uncordoned at the end
        assert "safety.kubectl.io/rollout-state" not in node["metadata"].get("annotations", {})
    assert cluster.kubectl("get", "lease", report["rollout"], "-n", namespace, check=False).returncode != 0
    moved = [e for e in audit.mutating_requests(since, user_agent_contains=UA) if e.resource == "pods/eviction"
             and e.code == 201]
    assert len(moved) <= 12 + 12  # each pod at most once per node it was on


def test_failing_health_gate_stops_the_rollout(cluster, namespace, make_node, tmp_path):
    pool = [make_node(f"gate-{namespace[-6:]}-{i}", labels={"os": f"v1-{namespace[-6:]}", "tier": namespace})
            ["metadata"]["name"] for i in range(2)]
    create(cluster, namespace, deployment("app", 1, node_selector={"os": f"v1-{namespace[-6:]}"}))
    wait_pods_running(cluster, namespace, count=1)
    upgrade = tmp_path / "upgrade.sh"  # the new OS image relabels the node: the pod fits nowhere now
    upgrade.write_text(f'#!/bin/sh\n{cluster.bin_dir}/kubectl --kubeconfig {cluster.kubeconfig} '
                       'label node "$NODE" os=v2 --overwrite >/dev/null\n')
    upgrade.chmod(0o755)
    argv = ["rollout", *pool, "--exec", str(upgrade), "--gate-timeout", "5s", "--accept-risk=unplaceable", "--timeout", "120s",
            "--lease-namespace", namespace, "--yes", "--kubeconfig", str(cluster.kubeconfig), "-o", "json"]
    code, out, err = run_cli(argv)
    report = json.loads(out)
    assert code == 4 and report["status"] == "gate-failed", err
    failed = report["batches"][-1]
    assert failed["gate"]["passed"] is False and "Pending" in report["message"]
    lease = get_json(cluster, "lease", report["rollout"], "-n", namespace)
    assert not lease["spec"].get("holderIdentity")  # released; the state stays on the node
    state = get_json(cluster, f"node/{failed['nodes'][0]}")["metadata"]["annotations"]
    assert state["safety.kubectl.io/rollout-state"] == "gating"  # back and uncordoned, not done
    code, out, err = run_cli(argv)  # the re-run gates the pod moved by the first run, and fails again
    again = json.loads(out)
    assert code == 4 and again["status"] == "gate-failed" and again["resumed"], err
    assert "Pending" in again["message"] and again["batches"][-1]["nodes"] == failed["nodes"]
    assert "exec" not in next(n for n in again["nodes"] if n["name"] == failed["nodes"][0])  # not maintained twice


def test_drain_never_churns_a_deployment_that_tolerates_the_cordon(cluster, namespace, make_node, audit):
    node = make_node(f"churn-{namespace[-6:]}")["metadata"]["name"]
    obj = deployment("sticky", 3, node_selector={"kubernetes.io/hostname": node}, tolerations=[{"operator": "Exists"}])
    create(cluster, namespace, obj)
    wait_pods_running(cluster, namespace, count=3)
    since = audit.now()
    code, out, err = run_cli(["drain", node, "--no-capacity", "--yes", "--timeout", "60s",
                              "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    report = json.loads(out)
    assert code == 0 and report["status"] == "drained", err
    time.sleep(3)  # replacements come back to the cordoned node meanwhile: none is chased
    sent = [e for e in audit.mutating_requests(since, user_agent_contains=UA) if e.resource == "pods/eviction"]
    assert len(sent) == 3, [(e.name, e.code) for e in sent]
    assert len(report["evicted"]) == 3  # the replacements on the node are reported (appeared), never evicted


def test_a_drain_waiting_for_a_budget_watches_instead_of_polling(cluster, namespace, make_node, audit):
    from test_drain import stuck_pdb
    from test_faults import Drain

    nodes = pool_nodes(make_node, namespace, 2, "wait")
    unready = stuck_pdb(cluster, namespace, nodes)
    since = audit.now()
    run = Drain(cluster, nodes[0], "--no-capacity", "--timeout", "90s")
    wait_until(lambda: run.saw("waiting:"), 60, "the drain to wait for the PDB")
    time.sleep(15)  # the old loop re-planned (4 LISTs) every 2 s meanwhile
    ready = json.dumps({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    cluster.kubectl("patch", "pod", unready, "-n", namespace, "--subresource=status", "--type=strategic", "-p", ready)
    code, report, err = run.finish()
    assert code == 0 and report["drained"] and len(report["evicted"]) == 2, err
    ours = [e for e in audit.mutating_requests(since, UA)]
    reads = [e for e in audit.entries(since) if UA in e.user_agent and e.verb in ("get", "list")]
    # two node-scoped plans (node, its pods, PDBs, DaemonSets), cordon's GET, the watches' LISTs
    assert len(reads) <= 12, [(e.verb, e.resource) for e in reads]
    assert len([e for e in ours if e.resource == "pods/eviction"]) <= 6  # refusals retried on budget changes only


def test_rollout_skip_blocked_maintains_what_can_be_and_names_the_rest(cluster, namespace, make_node, tmp_path):
    tag = f"sb-{namespace[-6:]}"
    pool = [make_node(f"{tag}-{i}", labels={"role": tag, "tier": namespace})["metadata"]["name"] for i in range(3)]
    create(cluster, namespace, deployment("app", 2, node_selector={"tier": namespace}, requests={"cpu": "100m"}),
           pod("bare", node_name=pool[0]))  # nothing recreates it: its node is blocked without --force
    wait_pods_running(cluster, namespace, count=3)
    env, script = environment(cluster, tmp_path)
    argv = ["rollout", "-l", f"role={tag}", "--no-precordon", "--skip-blocked", "--exec", script,
            "--gate-timeout", "60s", "--ready-timeout", "60s", "--lease-namespace", namespace,
            "--kubeconfig", str(cluster.kubeconfig)]
    code, out, err = run_cli(argv + ["--dry-run", "-o", "json"])
    plan = json.loads(out)
    assert code == 3 and plan["leftNodes"] == [pool[0]] and plan["batches"][-1]["nodes"] == [pool[0]], err
    old = dict(os.environ)
    os.environ.update(env)  # the --exec script's kubectl and log
    try:
        code, out, err = run_cli(argv + ["--yes"])
    finally:
        os.environ.clear()
        os.environ.update(old)
    assert code == 3, err
    assert f"error: 1 node(s) left, blocked (--skip-blocked): {pool[0]}" in err
    assert sorted((tmp_path / "exec.log").read_text().split()) == sorted(pool[1:])  # the others maintained
    assert not get_json(cluster, f"node/{pool[0]}")["spec"].get("unschedulable")  # the blocked node untouched
    assert get_json(cluster, "pod/bare", "-n", namespace)["spec"]["nodeName"] == pool[0]


RACE_RUNS = 20


def test_rollout_replans_after_its_own_uncordon_twenty_runs_in_twenty(cluster, namespace, make_node):
    """A batch that moves nothing, then one whose pods need room on the node just uncordoned: the re-plan
    of the second must see that uncordon (and the pods moved before), so every run finishes."""
    tag = f"race-{namespace[-6:]}"
    pool = [make_node(f"{tag}-{i}", zone=f"zone-{tag}", labels={"role": tag})["metadata"]["name"] for i in range(2)]
    place_on(cluster, namespace, pool[1:], [deployment("app", 2, node_selector={"role": tag}, requests={"cpu": "100m"}),
                                            pdb("app", {"app": "app"}, min_available=1)], 2)
    wait_pods_running(cluster, namespace, count=2)
    wait_pdb_settled(cluster, namespace, "app", disruptions_allowed=1)  # else the dry run reads a PDB not yet counted
    argv = ["rollout", "-l", f"role={tag}", "--exec", "true", "--gate-timeout", "60s", "--ready-timeout", "60s",
            "--timeout", "60s", "--lease-namespace", namespace, "--kubeconfig", str(cluster.kubeconfig), "-o", "json"]
    code, out, err = run_cli(argv + ["--dry-run"])
    plan = json.loads(out)
    assert code == 0 and plan["safe"], (err, plan.get("risks"), [b.get("risks") for b in plan["batches"]])
    assert [b["nodes"] for b in plan["batches"]] == [[pool[1]], [pool[0]]]  # the empty node first
    failures = []
    for run in range(RACE_RUNS):
        code, out, err = run_cli(argv + ["--yes"])
        report = json.loads(out) if out.strip() else {}
        if code != 0:
            failures.append(f"run {run + 1}: exit {code}: {report.get('message') or err[-300:]}")
        moved = [n for n in report.get("nodes", ()) if (n.get("drain") or {}).get("evicted")]
        assert code != 0 or len(moved) == 1, report  # one batch moved the pods, the other none
        wait_pods_running(cluster, namespace, count=2)
    assert not failures, f"{RACE_RUNS - len(failures)}/{RACE_RUNS} runs finished:\n" + "\n".join(failures)


def test_rollout_needed_leaves_out_the_daemonset_pods_that_stay(cluster, namespace, make_node):
    tag = f"need-{namespace[-6:]}"
    pool = [make_node(f"{tag}-{i}", labels={"role": tag})["metadata"]["name"] for i in range(2)]
    agent = deployment("agent", 0, node_selector={"role": tag}, requests={"cpu": "100m"})
    agent["kind"] = "DaemonSet"
    del agent["spec"]["replicas"]
    place_on(cluster, namespace, pool[1:], [agent, deployment("app", 1, node_selector={"role": tag},
                                                              requests={"cpu": "200m"})], 3)
    wait_pods_running(cluster, namespace, count=3)  # the agent on both nodes (it tolerates the cordon), the app
                                                    # on the first
    code, out, err = run_cli(["rollout", "-l", f"role={tag}", "--ignore-daemonsets", "--dry-run",
                              "--lease-namespace", namespace, "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    plan = json.loads(out)
    assert code == 0, err
    needed = {b["nodes"][0]: b["capacity"]["cpuNeeded"] for b in plan["batches"]}
    assert needed == {pool[0]: 200, pool[1]: 0}, needed  # the DaemonSet's 100m stay on each node
