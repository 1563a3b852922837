"""The typed model keeps every field a command reads: each command answers the same, byte for byte,
from the trimmed objects (``model/typed.py``: msgspec Structs, or ``prune``) as from the objects
whole. A field an analysis starts reading without adding it to ``KEPT`` fails here.

Snapshots: the demo (YAML: the ``prune`` path), the demo as ``kubectl get -o json`` (the sliced
msgspec path) and a generated cluster (``benchmarks/generate.py``: realistic noise such as
managedFields, images, env). Commands: every explain, drain of every node (capacity-aware and not),
preemption, rebalance of every workload and of all of them (the cluster's default spreading too),
check, rollout, delete's force assessment; JSON and text.

``golden/demo-answers.json`` pins the demo's answers byte for byte (exit code, stdout, stderr) across
refactors of the plans, the engine and the CLI: regenerate it only for an output change an issue asks for.
``golden/explain-delete-answers.json`` pins, as digests, every explain answer of each snapshot (every pod and
node) and delete's assessments and acting reports, in every output (``regenerate_typed_pins``).
"""

import json
import os
import re
import sys

import pytest
import yaml

from kubectl_safety.model import typed
from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import generate  # noqa: E402

PREEMPTOR = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "urgent", "namespace": "default"},
             "spec": {"priority": 1000000, "containers": [{"name": "c", "image": "i",
                                                           "resources": {"requests": {"cpu": "3", "memory": "4Gi"}}}]}}


def _kubectl_json(items) -> str:
    """``kubectl get -o json``'s layout: what the sliced decoder reads."""
    return json.dumps({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}},
                      indent=4)


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory):
    """``{name: (dump path, its objects, a preemptor manifest)}``."""
    return guard_snapshots(tmp_path_factory.mktemp("guard"))


def guard_snapshots(tmp):
    """``{name: (dump path, its objects, a preemptor manifest)}``, written under the directory ``tmp``."""
    from pathlib import Path

    tmp = Path(tmp)
    tmp.mkdir(parents=True, exist_ok=True)
    with open(os.path.join(ROOT, DEMO)) as f:
        demo = yaml.safe_load(f)["items"]
    (tmp / "demo.json").write_text(_kubectl_json(demo))
    (tmp / "preemptor.yaml").write_text(json.dumps(PREEMPTOR))
    generated = generate.write(12, str(tmp / "generated"), seed=7)
    with open(generated) as f:
        objects = json.load(f)["items"]
    preemptor = str(tmp / "generated" / "preemptor-12.yaml")
    return {"demo (YAML)": (os.path.join(ROOT, DEMO), demo, str(tmp / "preemptor.yaml")),
            "demo (kubectl -o json)": (str(tmp / "demo.json"), demo, str(tmp / "preemptor.yaml")),
            "generated, 12 nodes": (generated, objects, preemptor)}


def commands(objects, preemptor):
    """Every command worth asking of a snapshot with ``objects``."""
    nodes = [o["metadata"]["name"] for o in objects if o["kind"] == "Node"]
    pods = [o for o in objects if o["kind"] == "Pod"]
    workloads = sorted({(o["metadata"]["namespace"], f"{o['kind'].lower()}/{o['metadata']['name']}")
                        for o in objects if o["kind"] in ("Deployment", "StatefulSet")})
    drain = ["--ignore-daemonsets", "--delete-emptydir-data"]
    asked = [["explain", "priorities", "-A"], ["check"], ["check", "-A", "-o", "wide"],
             ["preemption", "-f", preemptor], ["rollout", *nodes[:4], "--dry-run", *drain]]
    asked += [["explain", "node", n] for n in nodes]
    asked += [["drain", n, "--dry-run", *drain, *extra] for n in nodes for extra in ([], ["--no-capacity"])]
    asked += [["drain", n, "--dry-run", *extra] for n in nodes[:3]
              for extra in (["--disable-eviction", "--force"], ["--timeout", "5s", "--accept-risk", "returns,blocked"],
                            ["--ignore-daemonsets", "--grace-period", "3", "--skip-wait-for-delete-timeout", "20"])]
    asked += [["explain", "pod", p["metadata"]["name"], "-n", p["metadata"]["namespace"]] for p in pods[:25]]
    asked += [["delete", "pod", p["metadata"]["name"], "-n", p["metadata"]["namespace"], "--force"] for p in pods[:5]]
    asked += [["rebalance", w, "-n", ns, "--dry-run"] for ns, w in workloads[:6]]
    asked += [["rebalance", "-A", "--dry-run", "--cluster-defaults", "--include-soft", "--evict-local-storage"],
              ["rebalance", "-A", "--dry-run", "--cluster-defaults", "--max-evictions", "2"]]
    return [a + o for a in asked for o in (["-o", "json"], [])]


def _answers(path, asked):
    return [run_cli(args + ["--snapshot", path, "--as-of", DEMO_NOW]) for args in asked]


@pytest.mark.parametrize("name", ["demo (YAML)", "demo (kubectl -o json)", "generated, 12 nodes"])
def test_every_command_answers_the_same_from_trimmed_and_whole_objects(name, snapshots, monkeypatch):
    path, objects, preemptor = snapshots[name]
    asked = commands(objects, preemptor)
    trimmed = _answers(path, asked)
    monkeypatch.setitem(sys.modules, "msgspec", None)
    monkeypatch.setattr(typed, "_DECODERS", {})
    monkeypatch.setattr(typed, "prune", lambda obj, tree=None: obj)
    whole = _answers(path, asked)
    assert sum(code in (0, 3) for code, _, _ in whole) > len(asked) // 2  # the commands ran: answers compared
    for args, a, b in zip(asked, trimmed, whole):
        assert a == b, f"kubectl safety {' '.join(args)}: trimmed objects answer otherwise"


GOLDEN = os.path.join(ROOT, "tests", "unit", "golden", "demo-answers.json")


def test_the_demo_answers_exactly_as_pinned():
    with open(GOLDEN) as f:
        pinned = json.load(f)
    for args, want in sorted(pinned.items()):
        code, out, err = run_cli(args.split() + ["--snapshot", DEMO, "--as-of", DEMO_NOW])
        assert (code, out, err) == (want["exit"], want["stdout"], want["stderr"]), f"kubectl safety {args}"


# -- explain and delete's assessment: every pod and node of each guard snapshot --------------------------------

TYPED_GOLDEN = os.path.join(ROOT, "tests", "unit", "golden", "explain-delete-answers.json")
OUTPUTS = (["-o", "json"], [], ["-o", "yaml"], ["-o", "name"], ["-o", "wide"])
JSONPATH = {"explain": ["-o", "jsonpath={.kind}:{.findings[*].code}"], "delete": ["-o", "jsonpath={.pods[*].verdict}"]}
DELETES = (["--force"], ["--force", "--confirm", "--dry-run"], ["--dry-run"], ["--dry-run", "--grace-period", "15"])
EVERY_OUTPUT = 25  # the first pods asked in every output and with every delete flag set (the demo: all of them)


def explain_and_delete_commands(objects) -> list:
    """explain pod of every pod, explain node of every node, explain priorities, delete --force of every pod
    (JSON and table); the first ``EVERY_OUTPUT`` pods, the nodes and priorities also as YAML, name, wide and
    jsonpath, and delete's other flag sets on them and on all pods at once."""
    nodes = [o["metadata"]["name"] for o in objects if o["kind"] == "Node"]
    pods = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objects if o["kind"] == "Pod"]
    every = [*OUTPUTS, JSONPATH["explain"]]
    asked = [a + o for a in (["explain", "priorities"], ["explain", "priorities", "-A"]) for o in every]
    asked += [["explain", "node", n, *o] for n in nodes for o in every]
    asked += [["explain", "pod", name, "-n", ns, *o] for i, (ns, name) in enumerate(pods)
              for o in (every if i < EVERY_OUTPUT else OUTPUTS[:2])]
    asked += [["delete", "pod", name, "-n", ns, "--force", *o] for ns, name in pods[EVERY_OUTPUT:] for o in OUTPUTS[:2]]
    every = [*OUTPUTS, JSONPATH["delete"]]
    asked += [["delete", "pod", name, "-n", ns, *flags, *o] for ns, name in pods[:EVERY_OUTPUT] for flags in DELETES
              for o in every]
    asked += [["delete", "pod", "--all", "-A", *flags, *o] for flags in DELETES[:2] for o in every]
    return asked


def answer_digest(answer) -> str:
    """(exit code, stdout, stderr) as a short digest: the pins of thousands of answers stay small."""
    import hashlib

    return hashlib.sha256(json.dumps(answer).encode()).hexdigest()[:16]


def pinned_answers(path, objects) -> dict:
    """``{"commands": how many, "digests": each answer's digest, in the order of the commands}``."""
    asked = explain_and_delete_commands(objects)
    return {"commands": len(asked), "digests": [answer_digest(a) for a in _answers(path, asked)]}


@pytest.mark.parametrize("name", ["demo (YAML)", "demo (kubectl -o json)", "generated, 12 nodes"])
def test_explain_and_delete_answer_exactly_as_pinned(name, snapshots):
    """Pinned from the code before explain and delete's assessment were typed; regenerate only for an output
    change an issue asks for (``regenerate_typed_pins``)."""
    with open(TYPED_GOLDEN) as f:
        pinned = json.load(f)[name]
    path, objects, _ = snapshots[name]
    asked = explain_and_delete_commands(objects)
    assert len(asked) == pinned["commands"] > 300
    got = [answer_digest(a) for a in _answers(path, asked)]
    changed = [" ".join(args) for args, a, b in zip(asked, got, pinned["digests"]) if a != b]
    assert not changed, f"{len(changed)} answer(s) changed, e.g. kubectl safety {changed[0]}"


LIVE_DELETES = [  # (scenario, delete pod's arguments, objects of the in-memory API, its options)
    ("force-confirm", ["db-0", "--force", "--confirm", "--as", "alice", "--reason", "n1 is off"], "dead", {}),
    ("graceful-wait", ["db-0", "--grace-period", "10", "--wait"], "ready", {}),
    ("wait-times-out", ["db-0", "--wait", "--timeout", "1s"], "dead", {"keep_on_delete": True}),
    ("forbidden", ["db-0"], "ready", {"forbidden": [("DELETE", "/api/v1/namespaces/shop/pods/db-0")]}),
    ("server-dry-run", ["db-0", "--dry-run=server"], "ready", {"keep_on_delete": True}),
    ("wait-false", ["db-0", "--wait=false"], "ready", {"keep_on_delete": True}),
    ("ignore-not-found", ["db-0", "nope", "--ignore-not-found", "--force", "--confirm"], "dead", {}),
]


def live_delete_answers() -> list:
    """delete pod acting on an in-memory API (``test_delete_cli.FakeApi``): each scenario in every output
    (the wait's countdown left out)."""
    from kubectl_safety.cli import session
    from tests.builders import make_node
    from tests.unit.cli.test_delete_cli import DEAD_NODE, STS_POD, FakeApi

    nodes = {"dead": DEAD_NODE, "ready": make_node("n1")}
    answers = []
    with pytest.MonkeyPatch.context() as patch:
        for _, args, node, options in LIVE_DELETES:
            for output in (*OUTPUTS, JSONPATH["delete"]):
                api = FakeApi(STS_POD, nodes[node], **options)
                patch.setattr(session.Session, "connection", lambda self, command="", api=api: api)
                code, out, err = run_cli(["delete", "pod", *args, "-n", "shop", "--as-of", DEMO_NOW, *output])
                answers.append((code, out, re.sub(r"\d+s left", "_s left", err)))  # the countdown depends on time
    return answers


def test_delete_acting_answers_exactly_as_pinned():
    """What delete pod prints after sending DELETEs (DeleteReport), pinned from the code before it was typed."""
    with open(TYPED_GOLDEN) as f:
        pinned = json.load(f)["delete, acting (in-memory API)"]
    got = [answer_digest(a) for a in live_delete_answers()]
    assert len(got) == len(pinned) == len(LIVE_DELETES) * (len(OUTPUTS) + 1)
    changed = [f"{LIVE_DELETES[i // (len(OUTPUTS) + 1)][0]} (output {i % (len(OUTPUTS) + 1)})"
               for i, (a, b) in enumerate(zip(got, pinned)) if a != b]
    assert not changed, f"{len(changed)} answer(s) changed: {', '.join(changed)}"


def regenerate_typed_pins(tmp):
    """Write ``TYPED_GOLDEN`` from the code as it is (``tmp``: a scratch directory for the snapshots)."""
    found = guard_snapshots(tmp)
    pins = {name: pinned_answers(path, objects) for name, (path, objects, _) in found.items()}
    pins["delete, acting (in-memory API)"] = [answer_digest(a) for a in live_delete_answers()]
    with open(TYPED_GOLDEN, "w") as f:
        json.dump(pins, f, indent=0)
        f.write("\n")
