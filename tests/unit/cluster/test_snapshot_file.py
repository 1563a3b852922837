"""A snapshot that says what it holds (``kubectl safety snapshot``'s file), read by every command like a dump."""

import io
import json

import pytest
import yaml

from kubectl_safety.cluster.snapshot_file import API_VERSION, KIND, write
from tests.unit.cli_helpers import DEMO, run_cli

TAKEN = "2026-11-22T09:00:00Z"


def snapshot_file(tmp_path, kinds=None, read=None, unread=None):
    """The demo's objects of ``kinds`` (all by default) in a snapshot file whose record read ``read``."""
    items = yaml.safe_load(open(DEMO))["items"]
    items = [i for i in items if kinds is None or i["kind"] in kinds]
    record = {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "demo", "creationTimestamp": TAKEN},
              "context": "demo", "serverVersion": "v1.36.3", "read": sorted(read or ()), "unread": unread or {}}
    buffer = io.BytesIO()
    write(buffer, record, items)
    path = tmp_path / "snapshot.json"
    path.write_bytes(buffer.getvalue())
    return str(path)


ALL = ("nodes", "pods", "poddisruptionbudgets")
CASES = {  # kinds held, kinds the record read, kinds it could not: what drain node-b1 says
    "read-and-empty": ({"Node", "Pod"}, ALL, {}, 0, None),
    "never-read": ({"Node", "Pod"}, ("nodes", "pods"), {}, 3, "poddisruptionbudgets:"),
    "forbidden": ({"Node", "Pod"}, ("nodes", "pods"), {"poddisruptionbudgets": "forbidden"}, 3,
                  "poddisruptionbudgets (forbidden):"),
}


@pytest.mark.parametrize("held, read, unread, code, missing", CASES.values(), ids=CASES.keys())
def test_a_kind_such_a_snapshot_read_and_found_empty_is_empty_not_unknown(tmp_path, held, read, unread, code, missing):
    path = snapshot_file(tmp_path, held, read, unread)
    result, out, err = run_cli(["drain", "node-b1", "--dry-run", "--ignore-daemonsets", "--delete-emptydir-data",
                                "-o", "json", "--snapshot", path])
    plan = json.loads(out)
    codes = [r["code"] for r in plan["risks"]]
    assert result == code, (out, err)
    if missing is None:
        assert "SNAPSHOT_INCOMPLETE" not in codes
    else:
        risk = next(r for r in plan["risks"] if r["code"] == "SNAPSHOT_INCOMPLETE")
        assert f"does not hold {missing}" in risk["message"]


def test_a_snapshot_needs_no_as_of_and_answers_as_the_dump_does(tmp_path):
    """The record's time is the snapshot's "now": the same answers as the demo dump at its --as-of."""
    path = snapshot_file(tmp_path, read=("nodes", "pods", "poddisruptionbudgets", "priorityclasses"))
    for command in (["check", "-o", "json"], ["drain", "node-a2", "--dry-run", "-o", "json"],
                    ["rollout", "node-a1", "node-b1", "--dry-run", "-o", "json"]):
        ours = run_cli(command + ["--snapshot", path])
        theirs = run_cli(command + ["--snapshot", DEMO, "--as-of", TAKEN])
        assert ours[0] == theirs[0]
        assert ours[1].replace(path, DEMO) == theirs[1]


def test_a_snapshot_file_is_a_kubectl_list_the_sliced_decoder_reads(tmp_path):
    from kubectl_safety.cluster.dump import load_objects

    path = snapshot_file(tmp_path)
    text = open(path).read()
    assert text.startswith('{\n    "apiVersion": "v1",\n    "items": [\n        {\n')
    assert json.loads(text)["kind"] == "List"
    pairs, _ = load_objects([path])
    assert [r["kind"] for r in pairs.records] == [KIND] and all(o["kind"] != KIND for _, o in pairs)


@pytest.mark.parametrize("field, value", [("read", "nodes"), ("unread", ["pods"]), ("serverVersion", 1),
                                          ("metadata", {"name": "x", "creationTimestamp": "yesterday"})],
                         ids=["read", "unread", "serverVersion", "creationTimestamp"])
def test_a_snapshot_record_of_the_wrong_shape_is_one_error_line(tmp_path, field, value):
    path = snapshot_file(tmp_path, read=ALL)
    document = json.loads(open(path).read())
    document["items"][0][field] = value
    open(path, "w").write(json.dumps(document, indent=4))
    code, out, err = run_cli(["check", "--snapshot", path])
    assert (code, out) == (1, "") and err.startswith(f"error: {path}: its Snapshot record must hold "), err
