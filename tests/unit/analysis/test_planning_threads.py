"""Planning keeps no state between snapshots: ``check --context A --context B`` plans each cluster in
its own thread, and each answer is the one a lone check of that snapshot gives."""

import json
import os
import sys
import threading

import pytest

from kubectl_safety.analysis.check import CheckOptions
from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.cluster.source import load_snapshot
from kubectl_safety.model.meta import parse_time
from tests.unit.cli_helpers import DEMO, DEMO_NOW

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import generate  # noqa: E402
from tests.published import check, plan_drain


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    return [DEMO, generate.write(16, str(tmp_path_factory.mktemp("threads")), seed=3)]


def answers(path) -> str:
    """A check of a freshly loaded snapshot, and a drain of each node, as JSON."""
    snap = load_snapshot(snapshot_paths=[path], now=parse_time(DEMO_NOW))
    report = [check(snap, CheckOptions(), snap.taken_at)]
    options = DrainOptions(ignore_daemonsets=True, delete_emptydir_data=True)
    report += [plan_drain(snap, [n.name], options, snap.taken_at) for n in snap.nodes]
    return json.dumps(report, sort_keys=True, default=str)


def test_two_checks_in_threads_answer_as_each_alone(dumps):
    alone = [answers(p) for p in dumps]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # threads trade the interpreter often: their planning interleaves
    try:
        for _ in range(2):
            together, start = [None] * len(dumps), threading.Barrier(len(dumps))

            def run(i):
                start.wait()
                together[i] = answers(dumps[i])

            threads = [threading.Thread(target=run, args=(i,)) for i in range(len(dumps))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert together == alone
    finally:
        sys.setswitchinterval(interval)
