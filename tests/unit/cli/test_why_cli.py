"""`why pod|node` on dumps holding events: every cause's JSON (schema-checked), text and exit code."""

import json

import pytest

from tests.unit.cli_helpers import run_cli
from tests.unit.analysis.test_why import CASES, NODE_CASES, node

AS_OF = "2026-12-02T04:00:00Z"  # test_why's NOW


def dump(tmp_path, objects, events):
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects) + list(events)}))
    return str(path)


def why(path, *args, output="json"):
    return run_cli(["why", *args, "--snapshot", path, "--as-of", AS_OF, "-o", output])


@pytest.mark.parametrize("scenario,objects,events,code,actor,summary", CASES, ids=[c[0] for c in CASES])
def test_why_pod_answers_from_a_dump(tmp_path, scenario, objects, events, code, actor, summary):
    path = dump(tmp_path, objects + ([node()] if not any(o["kind"] == "Node" for o in objects) else []), events)
    rc, out, err = why(path, "pod", "web-1", "-n", "shop")
    assert rc == (3 if code == "UNKNOWN" else 0), err
    r = json.loads(out)
    assert (r["kind"], r["cause"]["code"], r["cause"]["actor"]) == ("PodPostMortem", code, actor)
    rc, text, _ = why(path, "pod", "web-1", "-n", "shop", output="table")
    assert f"Cause:     {code}" in text and summary.split(" (")[0] in text


@pytest.mark.parametrize("scenario,objects,events,code,actor", NODE_CASES, ids=[c[0] for c in NODE_CASES])
def test_why_node_answers_from_a_dump(tmp_path, scenario, objects, events, code, actor):
    rc, out, err = why(dump(tmp_path, objects, events), "node", "n1")
    assert rc == (3 if code == "UNKNOWN" else 0), err
    r = json.loads(out)
    assert (r["kind"], r["cause"]["code"], r["cause"]["actor"]) == ("NodePostMortem", code, actor)


@pytest.mark.parametrize("args", [("pod", "nobody", "-n", "shop"), ("node", "nowhere")], ids=["pod", "node"])
def test_why_neither_object_nor_event_is_an_error(tmp_path, args):
    rc, out, err = why(dump(tmp_path, [node()], []), *args)
    assert (rc, out) == (1, "") and "no event names it" in err


def test_why_pod_refuses_all_namespaces(tmp_path):
    rc, _, err = why(dump(tmp_path, [node()], []), "pod", "web-1", "-A")
    assert rc == 2 and "-n NAMESPACE" in err
