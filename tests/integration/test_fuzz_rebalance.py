"""Live differential fuzzing of rebalance: our plan's expected nodes against where the scheduler puts
the replacements of the real evictions.

Each seed pins a Deployment (4-7 replicas, random cpu requests) with a zone spread (DoNotSchedule,
maxSkew 1 or 2; maybe a hostname ScheduleAnyway spread) to one or two zones of its own zone key,
maybe under a PDB, then adds one or two zones of nodes of random sizes, some with a PreferNoSchedule
taint (which the Score stage weighs). Our dry run plans the evictions (each with its expected node
and the nodes tied with it); ``rebalance --wait --yes`` runs them. Then:
- as many pods were evicted as planned, and every replacement is bound;
- when no planned move has a tie, the replacements' nodes are the expected nodes (as a multiset);
  otherwise each replacement's node is the expected or a tied node of some planned move;
- the spread's domain counts are the plan's expected ones whenever no tie crosses domains.
CI runs ``KUBECTL_SAFETY_LIVE_FUZZ`` seeds (default 3 here); ``scripts/fuzz-fidelity --live N`` runs more.
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections import Counter

import pytest
from cluster_helpers import create, deployment, get_json, wait_pods_running, wait_until

from tests.integration.test_rebalance import HOSTNAME, setup

SEEDS = int(os.environ.get("KUBECTL_SAFETY_LIVE_FUZZ") or 3)
FIRST_SEED = int(os.environ.get("KUBECTL_SAFETY_LIVE_FUZZ_FIRST") or 0)
SOFT = {"key": "fuzz-spot", "value": "x", "effect": "PreferNoSchedule"}


def scenario(rng: random.Random):
    """(zones first, zones added, {zone: [(cpu, tainted)]}, replicas, cpu request, maxSkew, hostname
    spread too, PDB)."""
    first = ["a"] if rng.random() < 0.6 else ["a", "b"]
    added = ["c"] if rng.random() < 0.5 else ["c", "d"]
    nodes = {z: [(rng.choice(("2", "4", "8")), z in added and rng.random() < 0.3) for _ in range(rng.randint(1, 2))]
             for z in first + added}
    return (first, added, nodes, rng.randint(4, 7), rng.choice(("100m", "250m", "500m")), rng.choice((1, 1, 2)),
            rng.random() < 0.3, rng.random() < 0.5)


def web_pods(t) -> list:
    return [p for p in get_json(t.cluster, "pods", "-n", t.ns, "-l", "app=web")["items"]
            if not p["metadata"].get("deletionTimestamp")]


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + SEEDS))
def test_live_fuzz_rebalance(cluster, namespace, make_node, audit, seed):
    started = time.monotonic()
    first, added, nodes, replicas, cpu, skew, by_host, budget = scenario(random.Random(seed))
    t = setup(cluster, namespace, make_node, audit)
    zone_of = {}
    for zone in first:
        for size, tainted in nodes[zone]:
            zone_of[t.node(zone, cpu=size, taints=[SOFT] if tainted else None)] = zone
    constraints = [t.spread(max_skew=skew)]
    if by_host:
        constraints.append(t.spread(HOSTNAME, whenUnsatisfiable="ScheduleAnyway"))
    d = deployment("web", replicas, node_selector=t.pool, requests={"cpu": cpu})
    d["spec"]["template"]["spec"]["topologySpreadConstraints"] = constraints
    create(cluster, namespace, d)
    wait_pods_running(cluster, namespace, "app=web", count=replicas, timeout=90)
    if budget:
        t.pdb(max_unavailable=1)
    for zone in added:
        for size, tainted in nodes[zone]:
            zone_of[t.node(zone, cpu=size, taints=[SOFT] if tainted else None)] = zone
    desc = f"first {first} added {added} nodes {nodes} replicas {replicas} cpu {cpu} maxSkew {skew} " \
           f"hostname {by_host} pdb {budget}"
    if budget:
        wait_until(lambda: (get_json(cluster, "pdb/web", "-n", namespace).get("status") or {})
                   .get("observedGeneration") is not None or None, 30, "the PDB status")

    code, plan, err = t.rebalance("--dry-run")
    assert plan and plan["kind"] == "RebalancePlan", (desc, err)
    moves = plan["evictions"]
    before = {p["metadata"]["uid"] for p in web_pods(t)}
    if not moves:
        print(f"\nlive rebalance fuzz seed {seed}: {desc}: no eviction planned", file=sys.stderr)
        return
    code, report, err = t.rebalance("--wait", "--yes", "--timeout", "3m")
    assert code in (0, 3), (desc, err)

    def settled():
        pods = web_pods(t)
        return pods if len(pods) == replicas and all(p["spec"].get("nodeName") for p in pods) else None

    after = wait_until(settled, 90, "every replacement bound")
    new = [p for p in after if p["metadata"]["uid"] not in before]
    assert len(new) == len(moves), (desc, moves, [p["spec"]["nodeName"] for p in new])
    theirs = Counter(p["spec"]["nodeName"] for p in new)
    expected = Counter(m["expectedNode"] for m in moves)
    tied = any(m["tiedNodes"] for m in moves)
    if not tied:
        assert theirs == expected, (desc, "scheduler", dict(theirs), "plan", dict(expected))
    else:
        allowed = {n for m in moves for n in [m["expectedNode"], *m["tiedNodes"]]}
        assert set(theirs) <= allowed, (desc, dict(theirs), moves)
    crossing = any(zone_of.get(n) != zone_of.get(m["expectedNode"]) for m in moves for n in m["tiedNodes"])
    if not crossing:
        counts = Counter(zone_of[p["spec"]["nodeName"]] for p in after if p["spec"]["nodeName"] in zone_of)
        want = next(c["domains"] for c in plan["expected"] if c["topologyKey"] == t.key)
        assert {z: counts.get(z, 0) for z in want} == want, (desc, dict(counts), want)
    print(f"\nlive rebalance fuzz seed {seed}: {desc}: {len(moves)} eviction(s), plan {dict(expected)}"
          f"{' (ties)' if tied else ''}, scheduler {dict(theirs)}, {time.monotonic() - started:.0f}s", file=sys.stderr)
