"""API requests and bytes per drained node, from the API server's audit log (issue 19).

    python benchmarks/drain_requests.py                       # 100 then 1,000 kwok nodes
    python benchmarks/drain_requests.py --nodes 100 --pods-per-node 5 --drains 2

Starts its own cluster (name ``bench-drain``), fills it as ``live.py`` does (Deployments of 50
pods, PDBs on 70%, a DaemonSet), then, in this process, really drains nodes:

- ``drain NODE --no-capacity --yes`` (node-scoped plan, the engine's watches);
- ``drain NODE --yes`` (the capacity-aware plan reads the whole cluster once);
- ``rollout NODE NODE --no-capacity --no-precordon --yes`` (per node of the rollout).

For each: the requests the API server logged for our user agent (by verb; a WATCH is one request
however long it lasts) and the response bytes the client read (counted in the transport), split
in two: the command's initial read (everything until its first plan's snapshot: the whole cluster
for a capacity-aware plan, the PDBs and DaemonSets otherwise; once per command) and what follows,
divided by the nodes drained. What follows must not grow with the cluster. Results go to
``benchmarks/results/latest.json`` (key ``drainRequests``) and are printed.
"""

import argparse
import contextlib
import io
import json
import os
import sys
import time
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from live import fill, running_pods  # noqa: E402
from run import RESULTS, machine  # noqa: E402

from controlplane.cluster import Cluster  # noqa: E402

FLAGS = ["--ignore-daemonsets", "--delete-emptydir-data", "--yes", "-o", "json"]


class Bytes:
    """Counts the response bytes the transports read (requests and watch streams)."""

    def __init__(self):
        self.total = 0

    @contextlib.contextmanager
    def counting(self):
        from kubectl_safety.cluster import transport

        request, stream_lines = transport.HttpTransport.request, transport.Stream.lines
        counter = self

        def counted_request(self, *args, **kwargs):
            status, data = request(self, *args, **kwargs)
            counter.total += len(data or b"")
            return status, data

        def counted_lines(self):
            for line in stream_lines(self):
                counter.total += len(line) + 1
                yield line

        transport.HttpTransport.request, transport.Stream.lines = counted_request, counted_lines
        try:
            yield self
        finally:
            transport.HttpTransport.request, transport.Stream.lines = request, stream_lines


def run_cli(argv):
    from kubectl_safety.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


class Start:
    """When the command's initial read ended: its first plan's snapshot (engine/live_view.py)."""

    def __init__(self, counter):
        self.counter = counter
        self.at, self.bytes = None, 0

    @contextlib.contextmanager
    def marking(self):
        from kubectl_safety.engine.live_view import LiveView

        snapshot, start = LiveView.snapshot, self

        def marked(self, *args, **kwargs):
            snap = snapshot(self, *args, **kwargs)
            if start.at is None:
                start.at, start.bytes = datetime.now(timezone.utc), start.counter.total
            return snap

        LiveView.snapshot = marked
        try:
            yield self
        finally:
            LiveView.snapshot = snapshot


def audit(cluster, offset, before=None):
    """Requests by verb for our user agent: all of them, and those received before ``before``."""
    log = cluster.workdir / "clusters" / cluster.name / "logs" / "audit.log"
    by_verb, initial = {}, {}
    with open(log, "rb") as f:
        f.seek(offset)
        for line in f:
            event = json.loads(line)
            if event.get("stage") == "ResponseComplete" and "kubectl-safety/" in event.get("userAgent", ""):
                by_verb[event["verb"]] = by_verb.get(event["verb"], 0) + 1
                received = datetime.fromisoformat(event["requestReceivedTimestamp"].replace("Z", "+00:00"))
                if before is not None and received < before:
                    initial[event["verb"]] = initial.get(event["verb"], 0) + 1
    return by_verb, initial


def audit_offset(cluster):
    return (cluster.workdir / "clusters" / cluster.name / "logs" / "audit.log").stat().st_size


def targets(cluster, count):
    """The ``count`` nodes running the most workload pods (DaemonSet pods left out)."""
    out = cluster.kubectl("get", "pods", "-A", "-l", "app!=node-agent", "-o",
                          "jsonpath={range .items[*]}{.spec.nodeName}{\"\\n\"}{end}", "--chunk-size=2000",
                          timeout=300).stdout
    counts = {}
    for name in out.split():
        counts[name] = counts.get(name, 0) + 1
    return sorted(counts, key=lambda n: (-counts[n], n))[:count]


def measure(cluster, name, argv, nodes):
    offset = audit_offset(cluster)
    started = time.monotonic()
    with Bytes().counting() as counter, Start(counter).marking() as start:
        code, out, err = run_cli(argv + ["--kubeconfig", str(cluster.kubeconfig)])
    seconds = time.monotonic() - started
    time.sleep(2)  # the audit log is written as requests complete (watch streams when they close)
    verbs, initial = audit(cluster, offset, start.at)
    report = json.loads(out) if out.strip() else {}
    if code != 0:
        print(f"  {name}: exit {code}: {err.strip()[-300:]}", file=sys.stderr)
    evicted = len(report.get("evicted") or []) if report.get("kind") == "DrainReport" else sum(
        len((n.get("drain") or {}).get("evicted") or []) for n in report.get("nodes") or [])
    for node in nodes:
        cluster.kubectl("uncordon", node)
    requests, first = sum(verbs.values()), sum(initial.values())
    return {"name": name, "nodes": len(nodes), "exit": code, "seconds": round(seconds, 1), "evicted": evicted,
            "requests": requests, "byVerb": verbs, "bytes": counter.total,
            "initial": {"requests": first, "byVerb": initial, "bytes": start.bytes},
            "requestsPerNode": round((requests - first) / len(nodes), 1),
            "bytesPerNode": (counter.total - start.bytes) // len(nodes)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", default="100,1000", help="cluster sizes in nodes, ascending")
    parser.add_argument("--pods-per-node", type=int, default=5, help="workload pods per node (+1 DaemonSet pod)")
    parser.add_argument("--keep", action="store_true", help="leave the cluster running afterwards")
    parser.add_argument("--out", default=RESULTS, help="results file to add the 'drainRequests' key to")
    args = parser.parse_args(argv)
    cluster = Cluster("bench-drain")
    print(f"cluster up in {cluster.up():.1f}s", file=sys.stderr)
    rows = []
    try:
        for size in [int(n) for n in args.nodes.split(",") if n]:
            seconds = fill(cluster, size, size * args.pods_per_node)
            total = running_pods(cluster)
            print(f"{size} nodes, {total} pods: filled in {seconds:.0f}s", file=sys.stderr)
            a, b, c, d = targets(cluster, 4)
            for name, cmd, nodes in (
                    ("drain --no-capacity", ["drain", a, "--no-capacity", *FLAGS], [a]),
                    ("drain (capacity-aware)", ["drain", b, *FLAGS], [b]),
                    ("rollout 2 nodes --no-capacity", ["rollout", c, d, "--no-capacity", "--no-precordon",
                                                       "--lease-namespace", "default", *FLAGS], [c, d])):
                row = {"clusterNodes": size, "clusterPods": total, **measure(cluster, name, cmd, nodes)}
                print(f"  {size:>5} nodes  {name:<32} evicted {row['evicted']:>3}  initial read "
                      f"{row['initial']['requests']:>3} requests {row['initial']['bytes']:>10} bytes  then per node "
                      f"{row['requestsPerNode']:>6} requests {row['bytesPerNode']:>10} bytes  {row['byVerb']}",
                      file=sys.stderr)
                rows.append(row)
    finally:
        if not args.keep:
            cluster.down()
    result = {}
    if os.path.exists(args.out):
        with open(args.out) as f:
            result = json.load(f)
    result["drainRequests"] = {"startedAt": datetime.now(timezone.utc).isoformat(), "machine": machine(),
                               "results": rows}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
