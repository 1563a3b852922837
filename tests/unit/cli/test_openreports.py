"""check -o openreports: the demo cluster's readiness as OpenReports / PolicyReport objects, valid against
the CRDs' openAPI schemas of the pinned modules (controlplane/reports)."""

import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.unit.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[3]
DEMO = str(ROOT / "examples" / "demo-cluster.yaml")


@pytest.fixture(scope="module")
def crd_schemas():
    """kind -> the openAPIV3Schema of its CRD, as the pinned modules ship it."""
    out = subprocess.run([str(ROOT / "controlplane" / "reports" / "crds.sh")], check=True, capture_output=True,
                         text=True).stdout.strip().splitlines()[-1]
    schemas = {}
    for path in Path(out).glob("*.yaml"):
        crd = yaml.safe_load(path.read_text())
        schemas[crd["spec"]["names"]["kind"]] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schemas


def _reports(*args):
    code, out, err = run_cli(["check", "--snapshot", DEMO, "-o", "openreports", *args])
    assert code == 3, err  # the demo cluster is not ready: the exit code is check's
    return yaml.safe_load(out)["items"]


@pytest.mark.parametrize("api, kinds", [
    ("openreports", {"ClusterReport", "Report"}),
    ("wgpolicy", {"ClusterPolicyReport", "PolicyReport"}),
])
def test_demo_cluster_reports_are_valid_against_the_crd_schema(crd_schemas, api, kinds):
    items = _reports("--report-api", api)
    assert {i["kind"] for i in items} == kinds
    for item in items:
        jsonschema.validate(item, crd_schemas[item["kind"]])
        _assert_no_unknown_fields(item, crd_schemas[item["kind"]], item["kind"])
        assert item["summary"] == {r: sum(x["result"] == r for x in item["results"])
                                   for r in ("pass", "fail", "warn", "error", "skip")}
    assert ("source" in items[0]) == (api == "openreports")  # wgpolicy: no report-level source
    assert {r.get("source") for i in items for r in i["results"]} == {None if api == "openreports" else "kubectl-safety"}


def _assert_no_unknown_fields(value, schema, where):
    """The API server prunes (or, strict, refuses) a field its structural schema does not declare."""
    if isinstance(value, dict) and "properties" in schema:
        for key, sub in value.items():
            if where.count(".") == 0 and key in ("apiVersion", "kind", "metadata"):
                continue
            assert key in schema["properties"], f"{where}.{key} is not in the CRD schema"
            _assert_no_unknown_fields(sub, schema["properties"][key], f"{where}.{key}")
    elif isinstance(value, list) and "items" in schema:
        for x in value:
            _assert_no_unknown_fields(x, schema["items"], where)


def test_demo_cluster_report_has_a_result_per_node_and_per_finding():
    items = _reports()
    cluster, namespaced = items[0], items[1:]
    nodes = [r for r in cluster["results"] if r["policy"] == "NODE_DRAINABLE"]
    assert len(nodes) == 7 and all(r["result"] == "fail" and r["properties"]["blockingCodes"] for r in nodes)
    a2 = next(r for r in nodes if r["resources"][0]["name"] == "node-a2")
    assert a2["properties"]["blockingCodes"] == "PDB_NEVER_ALLOWS,POD_NOT_EVICTABLE"
    findings = [r for i in items for r in i["results"] if r["policy"] != "NODE_DRAINABLE"]
    assert len(findings) == 12  # 3 error, 5 warning, 4 info in the demo's summary
    assert sorted(r["severity"] for r in findings).count("high") == 3
    pdb = next(r for r in findings if r["policy"] == "PDB_NEVER_ALLOWS")
    assert pdb["result"] == "fail" and pdb["resources"] == [
        {"kind": "PodDisruptionBudget", "name": "db", "apiVersion": "policy/v1", "namespace": "shop"}]
    assert all(i["metadata"]["namespace"] == r["namespace"] for i in namespaced for x in i["results"]
               for r in x["resources"])  # a namespace's Report holds only its own objects


def test_fail_on_none_makes_findings_warnings():
    findings = [r for i in _reports("--fail-on", "none") for r in i["results"] if r["policy"] != "NODE_DRAINABLE"]
    assert {r["result"] for r in findings} == {"warn"}


@pytest.mark.parametrize("args, message", [
    (["-o", "openreports", "--engine", "gke"], "without --engine"),
    (["--publish"], "cannot be used with --snapshot"),
])
def test_openreports_usage_errors(args, message):
    code, out, err = run_cli(["check", "--snapshot", DEMO, *args])
    assert code == 2 and message in err, err


def test_openreports_output_is_only_checks():
    code, out, err = run_cli(["drain", "node-a1", "--dry-run", "--snapshot", DEMO, "-o", "openreports"])
    assert code == 2 and "only check prints this format" in err, err
