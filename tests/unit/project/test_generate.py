"""The benchmark generator: deterministic, and its dumps load through the project's parser."""

import importlib.util
import json
import os
from collections import Counter

import pytest

from kubectl_safety.cluster.dump import load_objects
from kubectl_safety.model.parse import build_snapshot

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def load_generator():
    spec = importlib.util.spec_from_file_location("bench_generate", os.path.join(ROOT, "benchmarks", "generate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = load_generator()


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    path = generate.write(20, str(out), seed=1)
    with open(out / "cluster-20.targets.json") as f:
        targets = json.load(f)
    return path, targets, out


def read(path):
    with open(path, "rb") as f:
        return f.read()


@pytest.mark.parametrize("seed, same", [(1, True), (2, False)], ids=["same-seed-same-bytes", "other-seed-differs"])
def test_deterministic(dump, tmp_path, seed, same):
    path, _, _ = dump
    again = generate.write(20, str(tmp_path), seed=seed)
    assert (read(again) == read(path)) is same


def test_is_a_kubectl_list(dump):
    path, _, _ = dump
    doc = json.loads(read(path))
    assert doc["kind"] == "List" and doc["apiVersion"] == "v1"
    assert all("kind" in item and "apiVersion" in item for item in doc["items"])
    assert read(path).startswith(b'{\n    "apiVersion": "v1",\n    "items": [\n        {\n')  # kubectl's 4-space indent


def test_loads_through_the_parser(dump):
    path, targets, _ = dump
    pairs, _ = load_objects([path])
    snap = build_snapshot(pairs)
    kinds = Counter(obj["kind"] for _, obj in pairs)
    assert len(snap.nodes) == 20
    assert len(snap.pods) == 20 * generate.PODS_PER_NODE
    assert {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "PodDisruptionBudget", "PriorityClass"} <= set(kinds)
    assert len({n.labels["topology.kubernetes.io/zone"] for n in snap.nodes}) == len(generate.ZONES)
    assert any(not p.node_name for p in snap.pods), "some pods are pending"
    assert any(p.topology_spread_constraints for p in snap.pods)
    assert any(len(p.containers) > 1 for p in snap.pods)
    assert b'"managedFields"' in read(path), "the dump has managedFields, as a real one"
    assert not any("managedFields" in p.raw["metadata"] for p in snap.pods), "the typed model skips them"
    assert all(snap.owner(p) is not None for p in snap.pods), "every pod's controller is in the dump"
    assert snap.global_default_class is not None


def test_targets_exist(dump):
    path, targets, out = dump
    snap = build_snapshot(load_objects([path])[0])
    pod = snap.pod(targets["pod"]["namespace"], targets["pod"]["name"])
    assert pod is not None and pod.node_name == targets["node"]
    kind, name = targets["rebalance"]["workload"].split("/")
    assert snap.workload(kind.capitalize(), targets["rebalance"]["namespace"], name) is not None
    preemptor = build_snapshot(load_objects([str(out / "preemptor-20.yaml")])[0])
    assert len(preemptor.pods) == 1 and not preemptor.pods[0].node_name
