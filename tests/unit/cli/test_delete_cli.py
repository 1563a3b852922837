"""`delete pod` on the demo dump (assessment, refusals, exit codes) and its live wiring.

The live tests use ``FakeApi``: the real ``Connection`` with its single HTTP method replaced by
an in-memory object store, so the command's reads and mutating requests can be counted exactly.
The real control plane proves the same in tests/integration/test_delete.py.
"""

import itertools
import json
from types import SimpleNamespace

import pytest

from kubectl_safety.cli import session
from kubectl_safety.cluster.live import Connection
from tests.builders import make_node, make_pod
from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli

OFFLINE = ["--snapshot", DEMO, "--as-of", DEMO_NOW]


def delete(*args, offline=True):
    return run_cli(["delete", "pod", *args, *(OFFLINE if offline else []), "-o", "json"])


def by_name(report):
    return {p["name"]: p for p in report["pods"]}


# -- the demo dump -----------------------------------------------------------------------------

@pytest.mark.parametrize("flags", [["--force"], ["--grace-period=0", "--force"], ["--force", "--dry-run"],
                                   ["--grace-period", "0", "--force", "--wait", "--reason", "x"]],
                         ids=["force", "grace-0-force", "force-dry-run", "grace-0-force-wait-reason"])
def test_force_without_confirm_is_refused_with_the_assessment(flags):
    code, out, err = delete("db-0", "legacy-0", "-n", "shop", *flags)
    assert code == 3
    assert "force deletion needs --confirm" in err
    report = json.loads(out)
    assert report["kind"] == "ForceDeleteAssessment" and report["force"] is True
    pods = by_name(report)
    assert [r["code"] for r in pods["db-0"]["risks"]] == ["STATEFULSET_IDENTITY", "NODE_READY", "UNSAFE_VOLUME_TYPE"]
    assert pods["db-0"]["node"]["state"] == "Ready" and pods["db-0"]["forceNeeded"] is False
    assert pods["legacy-0"]["node"] == {"name": "node-d1", "state": "Unknown", "partitioned": True,
                                        "heartbeatAgeSeconds": 1200, "message": "Unknown, last heartbeat 20m ago (Ready condition)"}
    assert [r["code"] for r in pods["legacy-0"]["risks"]] == ["NO_CONTROLLER", "NODE_PARTITIONED"]
    assert {p["action"] for p in report["pods"]} == {"refused"}
    assert report["summary"] == {"refused": 2}


@pytest.mark.parametrize("flags, code, action, message", [
    (["--force", "--confirm"], 2, None, "needs a live cluster"),
    ([], 2, None, "needs a live cluster"),
    (["--force", "--confirm", "--dry-run"], 0, "wouldDelete", ""),
    (["--dry-run"], 0, "wouldDelete", ""),
], ids=["force-confirm", "graceful", "force-confirm-dry-run", "graceful-dry-run"])
def test_snapshot_can_only_assess(flags, code, action, message):
    rc, out, err = delete("db-0", "-n", "shop", *flags)
    assert rc == code and message in err
    if action is None:  # a usage error: no assessment
        assert out == ""
        return
    report = json.loads(out)
    assert report["kind"] == "ForceDeleteAssessment"
    assert report["pods"][0]["action"] == action


def test_graceful_dry_run_shows_the_timeline():
    code, out, _ = delete("db-0", "-n", "shop", "--dry-run")
    pod = json.loads(out)["pods"][0]
    assert (pod["force"], pod["gracePeriodSeconds"], pod["risks"]) == (False, 120, [])
    assert pod["timeline"][-1] == {"at": 120, "event": "SIGKILL to anything still running"}
    code, out, _ = delete("db-0", "-n", "shop", "--dry-run", "--grace-period", "15")
    assert json.loads(out)["pods"][0]["gracePeriodSeconds"] == 15


def test_selector_selects_the_statefulset_pods():
    code, out, _ = delete("-l", "app=db", "-n", "shop", "--force")
    assert code == 3
    assert sorted(by_name(json.loads(out))) == ["db-0", "db-1", "db-2"]


def test_table_output_warns_and_explains():
    code, out, err = run_cli(["delete", "pod", "legacy-0", "-n", "shop", "--force", *OFFLINE])
    assert code == 3
    assert err.startswith("warning: Force deleting a pod does not wait")
    assert "NODE_PARTITIONED" in out and "last heartbeat 20m ago" in out
    assert "Action:   refused (nothing changed)" in out and "Summary: 1 refused" in out


@pytest.mark.parametrize("args, message", [
    ([], "give at least one pod NAME"),
    (["db-0", "-l", "app=db"], "not both"),
    (["db-0", "--force", "--grace-period", "5"], "--force deletes with grace period 0"),
    (["db-0", "--timeout", "10"], "invalid --timeout '10': missing unit"),
    (["db-0", "--grace-period", "-5"], "-5"),
    (["db-0", "--now", "--grace-period", "5"], "--now and --grace-period cannot be specified together"),
    (["db-0", "-A"], "cannot be retrieved by name across all namespaces"),
], ids=["nothing", "names-and-selector", "force-with-grace", "timeout-without-unit", "negative-grace", "now-with-grace",
        "name-across-namespaces"])
def test_usage_errors(args, message):
    code, _, err = delete(*args, "-n", "shop")
    assert code == 2 and message in err


def test_unknown_pod_is_not_found():
    code, _, err = delete("db-9", "-n", "shop", "--dry-run")
    assert code == 1 and 'pod "db-9" not found in namespace "shop"' in err


# -- the live wiring against an in-memory API --------------------------------------------------

class FakeApi(Connection):
    """A ``Connection`` answering from a dict of objects; records every request."""

    def __init__(self, *objects, forbidden=(), keep_on_delete=False):
        super().__init__()
        self.store = {self._path(o): o for o in objects}
        self.forbidden = set(forbidden)  # (method, path) pairs answered 403
        self.keep_on_delete = keep_on_delete
        self.calls = []

    @staticmethod
    def _path(obj):
        meta, kind = obj["metadata"], obj["kind"]
        plural = {"Pod": "pods", "Node": "nodes", "PersistentVolumeClaim": "persistentvolumeclaims",
                  "PersistentVolume": "persistentvolumes"}[kind]
        ns = f"/namespaces/{meta['namespace']}" if meta.get("namespace") else ""
        return f"/api/v1{ns}/{plural}/{meta['name']}"

    def transport(self):
        return SimpleNamespace(host="https://fake")

    def request(self, method, path, *, query=None, body=None, ok=(200, 201)):
        self.calls.append((method, path, query, body))
        if (method, path) in self.forbidden:
            return 403, {"kind": "Status", "status": "Failure", "reason": "Forbidden", "code": 403,
                         "message": f'pods "x" is forbidden: User "bob" cannot {method.lower()} resource "pods"'}
        if method == "GET" and path in self.store:
            return 200, self.store[path]
        if method == "GET" and path.endswith("/pods"):
            wanted = dict(kv.split("=") for kv in (query or {}).get("labelSelector", "").split(",") if kv)
            items = [o for p, o in self.store.items() if p.startswith(path + "/")
                     and wanted.items() <= o["metadata"].get("labels", {}).items()]
            return 200, {"kind": "PodList", "items": items, "metadata": {}}
        if method == "DELETE" and path in self.store:
            if not self.keep_on_delete:
                del self.store[path]
            return 200, {"kind": "Status", "status": "Success"}
        if method == "POST" and path.endswith("/events"):
            return 201, body
        return 404, {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404, "message": "not found"}

    def mutations(self):
        return [c for c in self.calls if c[0] not in ("GET",)]


@pytest.fixture
def live(monkeypatch):
    """Install a FakeApi as the session's connection: ``api = live(*objects, **options)``."""
    def install(*objects, **options):
        api = FakeApi(*objects, **options)
        monkeypatch.setattr(session.Session, "connection", lambda self, command="": api)
        return api
    return install


STS_POD = make_pod("db-0", "shop", owner=("StatefulSet", "db"),
                   volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}])
DEAD_NODE = make_node("n1", ready="Unknown", heartbeat="2026-11-22T08:40:00Z")
LIVE = ["--as-of", DEMO_NOW]

FLAGS = ["--dry-run", "--wait", "--reason=why", "--as=alice"]


@pytest.mark.parametrize("force, extra", [
    (force, list(extra)) for force in (["--force"], ["--grace-period=0", "--force"], ["--force", "--grace-period=0"])
    for n in range(len(FLAGS) + 1) for extra in itertools.combinations(FLAGS, n)])
def test_force_without_confirm_never_mutates(live, force, extra):
    api = live(STS_POD, DEAD_NODE)
    code, out, err = delete("db-0", "-n", "shop", *force, *extra, *LIVE, offline=False)
    assert code == 3, err
    assert api.mutations() == []
    assert json.loads(out)["pods"][0]["action"] == "refused"


def test_force_with_confirm_deletes_with_uid_precondition_and_records_the_event(live):
    api = live(STS_POD, DEAD_NODE)
    code, out, err = delete("db-0", "-n", "shop", "--force", "--confirm", "--as", "alice",
                            "--reason", "n1 powered off (INC-42)", *LIVE, offline=False)
    assert code == 0, err
    (m1, p1, _, body), (m2, p2, _, event) = api.mutations()
    assert (m1, p1) == ("DELETE", "/api/v1/namespaces/shop/pods/db-0")
    assert body["gracePeriodSeconds"] == 0 and body["preconditions"] == {"uid": "uid-shop-db-0"}
    assert (m2, p2) == ("POST", "/apis/events.k8s.io/v1/namespaces/shop/events")
    assert event["reason"] == "ForceDeleted" and event["regarding"]["uid"] == "uid-shop-db-0"
    assert (event["reportingController"], event["action"]) == ("safety.kubectl.io", "Delete")
    assert event["note"].startswith("delete: ") and len(event["note"].encode()) <= 1024
    assert "by alice" in event["note"] and "n1 powered off (INC-42)" in event["note"]
    assert "node n1 was Unknown" in event["note"]
    report = json.loads(out)
    assert report["kind"] == "DeleteReport"
    pod = report["pods"][0]
    assert pod["action"] == "forceDeleted" and pod["event"]["recorded"] is True
    assert [r["code"] for r in pod["risks"]] == ["STATEFULSET_IDENTITY", "NODE_PARTITIONED", "RWO_VOLUME"]


def test_force_with_confirm_and_dry_run_sends_nothing(live):
    api = live(STS_POD, DEAD_NODE)
    code, out, _ = delete("db-0", "-n", "shop", "--force", "--confirm", "--dry-run", *LIVE, offline=False)
    assert code == 0 and api.mutations() == []
    assert json.loads(out)["pods"][0]["action"] == "wouldDelete"


def test_graceful_delete_and_wait(live):
    api = live(STS_POD, make_node("n1"))
    code, out, err = delete("db-0", "-n", "shop", "--grace-period", "10", "--wait", *LIVE, offline=False)
    assert code == 0, err
    (method, _, _, body), (m2, _, _, _) = api.mutations()
    assert method == "DELETE" and body["gracePeriodSeconds"] == 10 and m2 == "POST"
    pod = json.loads(out)["pods"][0]
    assert (pod["action"], pod["gone"], pod["risks"]) == ("deleted", True, [])
    assert "pod/db-0 deleted\n" in err and "pod/db-0 gone\n" in err


def test_graceful_delete_records_a_deleted_event_naming_the_command(live):
    api = live(STS_POD, make_node("n1"))
    code, _, err = delete("db-0", "-n", "shop", *LIVE, offline=False)
    assert code == 0, err
    (m1, _, _, _), (m2, p2, _, event) = api.mutations()
    assert (m1, m2, p2) == ("DELETE", "POST", "/apis/events.k8s.io/v1/namespaces/shop/events")
    assert (event["reason"], event["action"], event["type"]) == ("Deleted", "Delete", "Normal")
    assert (event["reportingController"], event["regarding"]["uid"]) == ("safety.kubectl.io", "uid-shop-db-0")
    assert event["note"] == "kubectl-safety: deleted from node n1"


def test_graceful_delete_whose_event_is_refused_warns_once_and_deletes(live):
    other = make_pod("db-1", "shop", owner=("StatefulSet", "db"))
    api = live(STS_POD, other, make_node("n1"),
               forbidden=[("POST", "/apis/events.k8s.io/v1/namespaces/shop/events")])
    code, out, err = delete("db-0", "db-1", "-n", "shop", "--no-wait", *LIVE, offline=False)
    assert code == 0, err
    assert [a["action"] for a in json.loads(out)["pods"]] == ["deleted", "deleted"]
    assert err.count("could not record kubectl-safety's events (403") == 1
    assert [m[0] for m in api.mutations()] == ["DELETE", "POST", "DELETE"]


def test_graceful_delete_dry_run_server_records_no_event(live):
    api = live(STS_POD, make_node("n1"))
    code, _, err = delete("db-0", "-n", "shop", "--dry-run=server", *LIVE, offline=False)
    assert code == 0, err
    assert [m[0] for m in api.mutations()] == ["DELETE"]


def test_wait_times_out_on_a_partitioned_node(live):
    api = live(STS_POD, DEAD_NODE, keep_on_delete=True)
    code, out, err = delete("db-0", "-n", "shop", "--wait", "--timeout", "1s", *LIVE, offline=False)
    assert code == 4
    assert json.loads(out)["pods"][0]["gone"] is False
    assert "partitioned node cannot finish a graceful delete" in err
    assert [m[0] for m in api.mutations()] == ["DELETE", "POST"]


def test_forbidden_delete_names_verb_and_resource(live):
    live(STS_POD, make_node("n1"), forbidden=[("DELETE", "/api/v1/namespaces/shop/pods/db-0")])
    code, out, err = delete("db-0", "-n", "shop", *LIVE, offline=False)
    assert code == 1
    assert 'error: Error from server (Forbidden): pods "x" is forbidden: User "bob" cannot delete resource "pods"' in err
    assert json.loads(out)["pods"][0]["action"] == "failed"


@pytest.mark.parametrize("objects, forbidden, state, code", [
    ([STS_POD], [], "Gone", "NODE_GONE"),
    ([STS_POD, make_node("n1")], [("GET", "/api/v1/nodes/n1")], "Unreadable", "NODE_UNKNOWN"),
], ids=["node-deleted", "node-forbidden"])
def test_node_missing_or_unreadable(live, objects, forbidden, state, code):
    live(*objects, forbidden=forbidden)
    rc, out, _ = delete("db-0", "-n", "shop", "--force", *LIVE, offline=False)
    pod = json.loads(out)["pods"][0]
    assert rc == 3 and pod["node"]["state"] == state and code in [r["code"] for r in pod["risks"]]


def test_claims_and_volumes_are_read_for_a_force_assessment(live):
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data-db-0", "namespace": "shop"},
             "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": "pv-7"}}
    volume = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-7"},
              "spec": {"nfs": {"server": "nas", "path": "/db"}}}
    live(STS_POD, make_node("n1"), claim, volume)
    _, out, _ = delete("db-0", "-n", "shop", "--force", *LIVE, offline=False)
    risks = {r["code"]: r["message"] for r in json.loads(out)["pods"][0]["risks"]}
    assert "bound to pv-7 (NFS)" in risks["UNSAFE_VOLUME_TYPE"]
    assert "claim data-db-0 is ReadWriteOnce, backed by NFS" in risks["RWO_VOLUME"]


def test_missing_pod_fails_before_any_mutation(live):
    api = live(STS_POD, make_node("n1"))
    code, _, err = delete("db-0", "db-9", "-n", "shop", "--force", "--confirm", *LIVE, offline=False)
    assert code == 1 and 'pod "db-9" not found in namespace "shop"' in err
    assert api.mutations() == []


# -- kubectl's delete flags, live ------------------------------------------------------------------

def test_server_dry_run_sends_the_delete_with_dry_run_all_and_changes_nothing(live):
    api = live(STS_POD, make_node("n1"), keep_on_delete=True)
    code, out, err = delete("db-0", "-n", "shop", "--dry-run=server", *LIVE, offline=False)
    assert code == 0, err
    [(method, _, _, body)] = api.mutations()
    assert method == "DELETE" and body["dryRun"] == ["All"]
    report = json.loads(out)
    assert (report["kind"], report["dryRun"], report["pods"][0]["action"]) == ("ForceDeleteAssessment", True, "wouldDelete")
    assert "pod/db-0 deleted (server dry run)" in err


@pytest.mark.parametrize("flags, grace", [([], None), (["--now"], 1), (["--grace-period=0"], 1), (["--grace-period=7"], 7)],
                         ids=["pods-own", "now", "grace-0-is-1", "grace-7"])
def test_graceful_delete_waits_by_default_with_kubectls_grace_rules(live, flags, grace):
    api = live(STS_POD, make_node("n1"))
    code, out, err = delete("db-0", "-n", "shop", *flags, *LIVE, offline=False)
    assert code == 0, err
    (method, _, _, body), (recorded, _, _, _) = api.mutations()
    assert method == "DELETE" and body.get("gracePeriodSeconds") == grace and recorded == "POST"
    assert json.loads(out)["pods"][0]["gone"] is True  # --wait is on by default


def test_wait_false_returns_after_the_delete(live):
    live(STS_POD, make_node("n1"), keep_on_delete=True)
    code, out, err = delete("db-0", "-n", "shop", "--wait=false", *LIVE, offline=False)
    assert code == 0, err
    assert "gone" not in json.loads(out)["pods"][0] and "waiting" not in err


@pytest.mark.parametrize("ignore, code", [(True, 0), (False, 1)], ids=["ignore-not-found", "not-found"])
def test_missing_pod_live(live, ignore, code):
    api = live(STS_POD, make_node("n1"))
    got, out, err = delete("db-0", "nope", "-n", "shop", *(["--ignore-not-found"] if ignore else []), *LIVE, offline=False)
    assert got == code, err
    if ignore:
        assert [p["name"] for p in json.loads(out)["pods"]] == ["db-0"]
    else:
        assert 'pod "nope" not found' in err and api.mutations() == []


def test_force_delete_assessment_of_an_unscheduled_pod_matches_its_schema():
    """An unscheduled pod's node has no name (null): its schema says so (the conftest checks every -o json)."""
    code, out, _ = delete("report-xyz", "-n", "jobs", "--force")
    assert code == 3
    assert json.loads(out)["pods"][0]["node"] == {"name": None, "state": "Unscheduled", "partitioned": False,
                                                 "heartbeatAgeSeconds": None, "message": "not scheduled to a node"}
