"""Live benchmarks on the local kwok control plane (issue 8, part 3).

    python benchmarks/live.py                      # 100 then 1,000 nodes, 5 runs each
    python benchmarks/live.py --nodes 100,1000 --pods-per-node 11 --runs 5

Starts its own cluster (``controlplane/cluster.py``, name ``bench``), fills it with kwok nodes
and workloads, then measures, as whole processes, side by side in interleaved rounds:

- ``kubectl-safety drain NODE --dry-run --no-capacity`` (PDB-aware, node-scoped reads) against
  ``kubectl drain NODE --dry-run=client`` (budget 1.5x);
- ``kubectl-safety drain NODE --dry-run`` (PDB- and capacity-aware: reads every pod) against
  ``kubectl get pods -A -o json`` (budget 1.2x);
- the API requests each command made, from the API server's audit log, at every size: the
  number of reads (first pages) must not grow with the cluster; pages of 500 objects are
  reported apart;
- ``kubectl-safety snapshot -o FILE`` against ``kubectl get KINDS -A -o json > FILE`` of the same
  kinds (``--only snapshot`` measures only these): time, requests and the file's size.

kubectl-safety runs from a virtualenv with a regular (non-editable) install of this checkout,
as users install it (``--exe`` names another executable); kubectl is the one built for the
control plane. Results are added to ``benchmarks/results/latest.json`` (key ``live``) and printed.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from run import RESULTS, machine, measure, print_table, summarize  # noqa: E402

from controlplane.cluster import KWOK_NODE_ANNOTATION, Cluster  # noqa: E402

BUDGETS = {"live-pdb": 1.5, "live-capacity": 1.2, "live-snapshot": None}
ZONES = ("zone-a", "zone-b", "zone-c", "zone-d")
NAMESPACES = 10
REPLICAS = 50  # per Deployment


# -- filling the cluster ------------------------------------------------------------------------
def node(i: int) -> dict:
    name = f"node-{i:05d}"
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok",
              "topology.kubernetes.io/zone": ZONES[i % len(ZONES)],
              "node.kubernetes.io/instance-type": ("m5.4xlarge", "c5.4xlarge")[i % 2]}
    resources = {"cpu": "16", "memory": "64Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels, "annotations": {KWOK_NODE_ANNOTATION: "fake"}},
            "spec": {}, "status": {"capacity": resources, "allocatable": resources}}


def container(name: str, image: str, cpu: str, memory: str, port: int) -> dict:
    """A container as workloads have them: env, ports, probes, requests and limits, mounts."""
    probe = {"httpGet": {"path": "/healthz", "port": port}, "periodSeconds": 10, "timeoutSeconds": 2}
    return {"name": name, "image": image,
            "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {"name": "GOMAXPROCS", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}],
            "ports": [{"name": "http", "containerPort": port}],
            "livenessProbe": probe, "readinessProbe": {**probe, "initialDelaySeconds": 5},
            "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": "1", "memory": memory}},
            "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}, {"name": "cache", "mountPath": "/cache"}]}


def pod_template(app: str, spread: bool, priority: str) -> dict:
    spec = {"containers": [container("app", f"registry.local/{app}:1.4.2", "100m", "128Mi", 8080),
                           container("envoy", "registry.local/envoy:1.31", "50m", "64Mi", 9901)],
            "volumes": [{"name": "config", "configMap": {"name": "app-config", "optional": True}},
                        {"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}}],
            "terminationGracePeriodSeconds": 30, "priorityClassName": priority,
            "tolerations": [{"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}]}
    if spread:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "ScheduleAnyway",
                                              "labelSelector": {"matchLabels": {"app": app}}}]
    return {"metadata": {"labels": {"app": app, "tier": "web"}}, "spec": spec}


def workloads(pods: int) -> list:
    """Namespaces, PriorityClasses, Deployments of REPLICAS pods (PDBs on 70%), one DaemonSet."""
    objs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"team-{n}"}} for n in range(NAMESPACES)]
    objs += [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
             for name, value in (("bench-high", 100000), ("bench-low", 1000))]
    for d in range(max(1, pods // REPLICAS)):
        ns, app = f"team-{d % NAMESPACES}", f"svc-{d:03d}"
        objs.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": app, "namespace": ns},
                     "spec": {"replicas": REPLICAS, "selector": {"matchLabels": {"app": app}},
                              "template": pod_template(app, d % 5 < 2, ("bench-high", "bench-low")[d % 2])}})
        if d % 10 < 7:
            budget = {"maxUnavailable": 1} if d % 2 else {"minAvailable": "80%"}
            objs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": app, "namespace": ns},
                         "spec": {**budget, "selector": {"matchLabels": {"app": app}}}})
    ds = pod_template("node-agent", False, "bench-high")
    ds["spec"]["containers"] = ds["spec"]["containers"][:1]
    objs.append({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "node-agent", "namespace": "team-0"},
                 "spec": {"selector": {"matchLabels": {"app": "node-agent"}}, "template": ds}})
    return objs


def apply(cluster: Cluster, objects: list, batch: int = 500) -> None:
    for i in range(0, len(objects), batch):
        text = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects[i:i + batch]})
        cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", input=text, timeout=600)


def running_pods(cluster: Cluster) -> int:
    out = cluster.kubectl("get", "pods", "-A", "--field-selector=status.phase=Running", "-o", "name",
                          "--chunk-size=2000", timeout=300).stdout
    return len(out.split())


def fill(cluster: Cluster, nodes: int, pods: int, timeout: float = 1800) -> float:
    """Grow the cluster to ``nodes`` kwok nodes and about ``pods`` workload pods (+1 per node), all Running."""
    start = time.monotonic()
    apply(cluster, [node(i) for i in range(nodes)])
    apply(cluster, workloads(pods))
    want = (pods // REPLICAS) * REPLICAS + nodes
    while (have := running_pods(cluster)) < want:
        if time.monotonic() - start > timeout:
            raise SystemExit(f"only {have} of {want} pods Running after {timeout:.0f}s")
        print(f"  {have}/{want} pods running", file=sys.stderr)
        time.sleep(10)
    return time.monotonic() - start


def drain_target(cluster: Cluster) -> str:
    """The node running the most PDB-covered pods (a drain that has to wait for budgets)."""
    out = cluster.kubectl("get", "pods", "-A", "-l", "app!=node-agent", "-o",
                          "jsonpath={range .items[*]}{.spec.nodeName}{\"\\n\"}{end}", "--chunk-size=2000", timeout=300).stdout
    counts = {}
    for name in out.split():
        counts[name] = counts.get(name, 0) + 1
    return max(sorted(counts), key=counts.get)


# -- measuring ------------------------------------------------------------------------------------
def installed_exe() -> list:
    """kubectl-safety installed from this checkout into a private virtualenv (deps kept between runs)."""
    import tempfile

    venv = os.path.join(tempfile.gettempdir(), "kubectl-safety-bench-venv")
    pip = [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    if not os.path.exists(os.path.join(venv, "bin", "python")):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run(pip + [ROOT], check=True)
    subprocess.run(pip + ["--no-deps", "--force-reinstall", ROOT], check=True)
    return [os.path.join(venv, "bin", "kubectl-safety")]


def cases(cluster: Cluster, target: str, exe: list):
    kc = ["--kubeconfig", str(cluster.kubeconfig)]
    kubectl = [str(cluster.bin_dir / "kubectl")] + kc
    flags = ["--ignore-daemonsets", "--delete-emptydir-data"]
    pdb_floor = {"name": "floor: kubectl drain --dry-run=client", "argv": kubectl + ["drain", target, "--dry-run=client"] + flags}
    pdb_case = {"name": "drain --dry-run --no-capacity", "argv": exe + ["drain", target, "--dry-run", "--no-capacity"] + flags + kc}
    python = os.path.join(os.path.dirname(exe[0]), "python")
    imports = {"name": "reference: python -c 'import click, yaml, ssl'", "reference": True,
               "argv": [python if os.path.exists(python) else sys.executable, "-c", "import click, yaml, ssl"]}
    cap_floor = {"name": "floor: kubectl get pods -A -o json", "argv": kubectl + ["get", "pods", "-A", "-o", "json"]}
    cap_case = {"name": "drain --dry-run (capacity-aware)", "argv": exe + ["drain", target, "--dry-run"] + flags + kc}
    return (pdb_floor, [imports, pdb_case]), (cap_floor, [cap_case])


def snapshot_cases(cluster: Cluster, exe: list, workdir: str):
    """``kubectl safety snapshot`` and ``kubectl get`` of the kinds it reads (``cluster/scopes.py``), each to a file."""
    from kubectl_safety.cluster.scopes import snapshot_scope

    kc = ["--kubeconfig", str(cluster.kubeconfig)]
    kinds = ",".join(dict.fromkeys(q.resource for q in snapshot_scope()))
    ours, theirs = os.path.join(workdir, "snapshot.json"), os.path.join(workdir, "kubectl.json")
    floor = {"name": "floor: kubectl get KINDS -A -o json > FILE", "file": theirs,
             "argv": ["sh", "-c", shlex.join([str(cluster.bin_dir / "kubectl")] + kc + ["get", kinds, "-A", "-o", "json"])
                      + " > " + shlex.quote(theirs)]}
    case = {"name": "snapshot -o FILE", "file": ours, "argv": exe + ["snapshot", "-o", ours] + kc}
    return floor, [case]


def timed_group(kind, label, floor, group, runs):
    samples = {c["name"]: [] for c in [floor] + group}
    for case in [floor] + group:  # warm-up: bytecode, kubectl's discovery cache, page cache
        measure(case["argv"])
    for _ in range(runs):
        for case in [floor] + group:
            samples[case["name"]].append(measure(case["argv"]))
    base = summarize(samples[floor["name"]])
    rows = [{"group": label, "kind": kind, "name": floor["name"], **base, "wallRatio": 1.0, "cpuRatio": 1.0,
             "rssRatio": 1.0, "argv": shlex.join(floor["argv"])}]
    for case in group:
        s = summarize(samples[case["name"]])
        row = {"group": label, "kind": kind, "name": case["name"], **s, "wallRatio": s["wall"] / base["wall"],
               "cpuRatio": s["cpu"] / base["cpu"], "rssRatio": s["rss"] / base["rss"], "argv": shlex.join(case["argv"])}
        if not case.get("reference") and BUDGETS[kind] is not None:
            row["withinBudget"] = row["wallRatio"] <= BUDGETS[kind]
        if s["exit"] not in (0, 3):
            row["error"] = samples[case["name"]][-1]["stderr"].splitlines()[-1:] or [f"exit {s['exit']}"]
        rows.append(row)
    return rows


def audit_requests(cluster: Cluster, argv: list, user_agent: str) -> dict:
    """Run ``argv`` once; its requests from the audit log: reads (first pages), pages, by verb/resource."""
    log = cluster.workdir / "clusters" / cluster.name / "logs" / "audit.log"
    offset = log.stat().st_size
    result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if result.returncode not in (0, 3):
        raise SystemExit(f"{shlex.join(argv)} failed: {result.stderr.decode()[-300:]}")
    time.sleep(1.5)  # the audit log is written as requests complete
    requests = []
    with open(log, "rb") as f:
        f.seek(offset)
        for line in f:
            event = json.loads(line)
            if event.get("stage") == "ResponseComplete" and user_agent in event.get("userAgent", ""):
                ref = event.get("objectRef") or {}
                requests.append((event["verb"], ref.get("resource", ""), "continue=" in event.get("requestURI", "")))
    queries = sorted(f"{verb} {resource}" for verb, resource, more in requests if not more)
    return {"requests": len(requests), "reads": len(queries), "pages": sum(1 for r in requests if r[2]), "byResource": queries}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", default="100,1000", help="cluster sizes in nodes, ascending (default 100,1000)")
    parser.add_argument("--pods-per-node", type=int, default=10, help="workload pods per node (default 10; +1 DaemonSet pod)")
    parser.add_argument("--runs", type=int, default=9, help="timed runs of the node-scoped drain (default 9)")
    parser.add_argument("--capacity-runs", type=int, default=3, help="timed runs of the whole-cluster reads (default 3)")
    parser.add_argument("--only", choices=("drain", "snapshot"), help="measure only these (default: both)")
    parser.add_argument("--exe", help="the kubectl-safety executable (default: installed into a private virtualenv)")
    parser.add_argument("--keep", action="store_true", help="leave the cluster running afterwards")
    parser.add_argument("--out", default=RESULTS, help="results file to add the 'live' key to")
    args = parser.parse_args(argv)
    exe = [args.exe] if args.exe else installed_exe()
    cluster = Cluster("bench")
    print(f"cluster up in {cluster.up():.1f}s", file=sys.stderr)
    rows, counts, notes = [], [], []
    started = datetime.now(timezone.utc)
    try:
        for nodes in [int(n) for n in args.nodes.split(",") if n]:
            seconds = fill(cluster, nodes, nodes * args.pods_per_node)
            total = running_pods(cluster)
            target = drain_target(cluster)
            label = f"live {nodes} nodes, {total} pods"
            print(f"{label}: filled in {seconds:.0f}s; drain target {target}", file=sys.stderr)
            audited = []
            if args.only != "snapshot":
                (pdb_floor, pdb_cases), (cap_floor, cap_cases) = cases(cluster, target, exe)
                rows += timed_group("live-pdb", label, pdb_floor, pdb_cases, args.runs)
                rows += timed_group("live-capacity", label, cap_floor, cap_cases, args.capacity_runs)
                audited += [(pdb_floor, "kubectl/"), (pdb_cases[-1], "kubectl-safety/"),
                            (cap_floor, "kubectl/"), (cap_cases[0], "kubectl-safety/")]
            if args.only != "drain":
                snap_floor, snap_cases = snapshot_cases(cluster, exe, str(cluster.workdir))
                group = timed_group("live-snapshot", label, snap_floor, snap_cases, args.capacity_runs)
                for row, case in zip(group, [snap_floor] + snap_cases):
                    row["fileMiB"] = round(os.path.getsize(case["file"]) / 2 ** 20, 1)
                rows += group
                audited += [(snap_floor, "kubectl/"), (snap_cases[0], "kubectl-safety/")]
            for case, agent in audited:
                counts.append({"nodes": nodes, "pods": total, "name": case["name"],
                               **audit_requests(cluster, case["argv"], agent)})
    finally:
        if not args.keep:
            cluster.down()
    by_name = {}
    for c in counts:
        by_name.setdefault(c["name"], set()).add(c["reads"])
    constant = {name: len(v) == 1 for name, v in by_name.items()}
    notes += [f"{name}: reads grew with the cluster" for name, ok in constant.items() if not ok]
    print_table(rows, notes)
    print("\nAPI requests per command (reads: GETs and first pages of LISTs; pages: further pages of 500):")
    for c in counts:
        print(f"  {c['nodes']:>5} nodes {c['pods']:>6} pods  {c['name']:<40} reads {c['reads']:>3}  pages {c['pages']:>3}  "
              f"{', '.join(c['byResource'])}")
    result = {}
    if os.path.exists(args.out):
        with open(args.out) as f:
            result = json.load(f)
    result["live"] = {"startedAt": started.isoformat(), "machine": machine(), "budgets": BUDGETS, "results": rows,
                      "requests": counts, "readsConstant": constant, "notes": notes}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(f"wrote {os.path.relpath(args.out, ROOT)} (key 'live')")


if __name__ == "__main__":
    main()
