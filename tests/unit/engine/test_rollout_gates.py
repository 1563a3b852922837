"""What a rollout checks before every batch: maintenance windows, firing alerts (a fake Prometheus serving
the real /api/v1/alerts JSON shape), blocking pods; and the plan's view of them."""

import http.server
import json
from datetime import datetime, timedelta, timezone

import pytest

from kubectl_safety.analysis.rollout_gates import plan_gates
from kubectl_safety.cluster.prometheus import PrometheusError, firing_alerts
from kubectl_safety.engine.gates import RolloutGates
from kubectl_safety.model.selectors import LabelSelector
from kubectl_safety.model.windows import parse_window
from tests.builders import make_node, make_pod, snapshot
from tests.unit.loopback import serve

BERLIN = [parse_window("Mon-Fri 02:00-05:00 Europe/Berlin")]
MONDAY_0230 = datetime(2026, 11, 30, 1, 30, tzinfo=timezone.utc)  # 02:30 in Berlin (CET)


class Clock:
    """``now`` and an ``interrupted`` whose ``wait`` moves the clock on instead of sleeping."""

    def __init__(self, start):
        self.at, self.waits = start, []

    def now(self):
        return self.at

    def wait(self, seconds):
        self.waits.append(seconds)
        self.at += timedelta(seconds=seconds)
        return False


def gates(clock, **kw):
    return RolloutGates(None, now=clock.now, interrupted=clock, poll=30.0, **kw)


@pytest.mark.parametrize("now, estimate, outside, status, says", [
    (MONDAY_0230, 600, "stop", "done", None),  # inside, 2.5 h left
    (MONDAY_0230, 3 * 3600, "stop", "blocked", "needs about 10800s but the window closes 2026-11-30T04:00:00Z"),
    (MONDAY_0230 + timedelta(hours=3), 600, "stop", "blocked",
     "outside the maintenance windows (next opens 2026-12-01T01:00:00Z)"),
    (MONDAY_0230, 4 * 3600, "wait", "blocked", "no maintenance window in the coming week is open for batch 1"),
])
def test_window_gate_before_a_batch(now, estimate, outside, status, says):
    got = gates(Clock(now), windows=BERLIN, outside=outside, estimates=[estimate]).before_batch(1, ["n1"])
    assert got[0] == status and (says is None or says in got[1]), got


def test_a_batch_that_would_not_finish_waits_for_the_next_window():
    clock = Clock(MONDAY_0230 + timedelta(hours=2))  # 04:30 Berlin: 30 min left, the batch needs an hour
    events = []
    g = gates(clock, windows=BERLIN, estimates=[3600], emit=lambda *a, **k: events.append(k))
    assert g.before_batch(1, ["n1"]) == ("done", None)
    assert clock.at == datetime(2026, 12, 1, 1, 0, tzinfo=timezone.utc)  # Tuesday 02:00 Berlin
    assert max(clock.waits) == 30.0 and "closes 2026-11-30T04:00:00Z" in events[0]["message"]


ALERTS = {"status": "success", "data": {"alerts": [
    {"labels": {"alertname": "NodeDown", "severity": "page", "instance": "n1"}, "annotations": {},
     "state": "firing", "activeAt": "2026-11-30T01:00:00Z", "value": "1e+00"},
    {"labels": {"alertname": "DiskFilling", "severity": "warning"}, "annotations": {},
     "state": "pending", "activeAt": "2026-11-30T01:00:00Z", "value": "9.1e+01"},
]}}


class Prometheus(http.server.BaseHTTPRequestHandler):
    answer = (200, ALERTS)

    def do_GET(self):  # noqa: N802
        code, doc = Prometheus.answer
        body = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
        self.send_response(code if self.path == "/api/v1/alerts" else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def prometheus():
    server, url = serve(Prometheus, poll_interval=0.05)
    Prometheus.answer = (200, ALERTS)
    yield url
    server.shutdown()
    server.server_close()


def test_only_firing_alerts_are_read(prometheus):
    assert firing_alerts(prometheus + "/") == [
        {"name": "NodeDown", "labels": {"alertname": "NodeDown", "severity": "page", "instance": "n1"}}]


@pytest.mark.parametrize("answer, alert_filter, status, says", [
    ((200, ALERTS), None, "blocked", "1 alert(s) firing: NodeDown"),
    ((200, ALERTS), "severity=page", "blocked", "NodeDown"),  # a label=value matches
    ((200, ALERTS), "^Disk", "done", None),  # the firing one does not match: pending ones never block
    ((200, {"status": "success", "data": {"alerts": []}}), None, "done", None),
    ((503, {"status": "error"}), None, "blocked", "the alerts query failed, which blocks"),
    ((200, b"<html>"), None, "blocked", "not an alerts answer"),
    ((200, {"status": "success", "data": {}}), None, "blocked", "not an alerts answer"),
])
def test_alert_gate_before_a_batch(prometheus, answer, alert_filter, status, says):
    Prometheus.answer = answer
    got = gates(Clock(MONDAY_0230), outside="stop", alerts=prometheus, alert_filter=alert_filter).before_batch(2, [])
    assert got[0] == status and (says is None or says in got[1]), got


def test_an_unreachable_prometheus_blocks():
    with pytest.raises(PrometheusError):
        firing_alerts("http://127.0.0.1:9")


def test_alerts_are_checked_again_while_waiting_and_the_batch_goes_when_they_clear(prometheus):
    clock = Clock(MONDAY_0230)
    answers = iter([(200, ALERTS), (200, ALERTS), (200, {"status": "success", "data": {"alerts": []}})])

    def wait(seconds):
        Prometheus.answer = next(answers)
        return Clock.wait(clock, seconds)

    clock.wait = wait
    Prometheus.answer = next(answers)
    assert gates(clock, alerts=prometheus).before_batch(1, []) == ("done", None)
    assert clock.waits == [30.0, 30.0]


class Pods:
    """A connection answering the pod list with the pods of one node."""

    def __init__(self, on):
        self.on, self.asked = on, []

    def request(self, method, path, query=None, body=None):
        self.asked.append(query)
        node = query["fieldSelector"].split(",")[0].split("=", 1)[1]
        items = [{"metadata": {"namespace": "ops", "name": p}} for p in self.on.get(node, ())]
        return 200, {"items": items}


def test_a_blocking_pod_holds_its_nodes_batch_checked_live():
    conn = Pods({"n2": ["backup-0"]})
    g = RolloutGates(conn, outside="stop", blocking_selector="app=backup")
    status, message = g.before_batch(1, ["n1", "n2"])
    assert status == "blocked" and "node n2 is held by pod(s) matching app=backup: ops/backup-0" in message
    assert g.held == ("n2",)
    assert conn.asked[0] == {"labelSelector": "app=backup", "limit": "10", "fieldSelector":
                             "spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown"}
    assert RolloutGates(Pods({}), outside="stop", blocking_selector="app=backup").before_batch(1, ["n1"]) == (
        "done", None)


def test_the_plan_shows_the_windows_batch_starts_and_held_nodes():
    snap = snapshot(make_node("n1"), make_node("n2"),
                    make_pod("backup-0", "ops", "n2", labels={"app": "backup"}),
                    make_pod("backup-old", "ops", "n1", labels={"app": "backup"}, phase="Succeeded"))
    g = plan_gates(snap, ["n1", "n2"], MONDAY_0230, windows=BERLIN, window_texts=("Mon-Fri 02:00-05:00 Europe/Berlin",),
                   selector=LabelSelector.from_string("app=backup"), selector_text="app=backup",
                   alerts="http://prom:9090", estimates=[3600, 3600, 3600])
    assert g.window_closes_at == "2026-11-30T04:00:00Z" and g.next_window_opens_at == "2026-11-30T01:30:00Z"
    assert g.batch_starts == ("2026-11-30T01:30:00Z", "2026-11-30T02:30:00Z", "2026-12-01T01:00:00Z")
    assert [(h.node, h.pods) for h in g.held_nodes] == [("n2", ("ops/backup-0",))]


def test_a_batch_waiting_on_its_gates_is_one_live_progress_line():
    from kubectl_safety.cli.views.rollout import progress

    p = progress()
    event = {"event": "gate-wait", "batch": 2, "message": "batch 2 waits: 1 alert(s) firing: NodeDown"}
    assert p.text(event) == "batch 2 waits: 1 alert(s) firing: NodeDown" and "gate-wait" in p.LIVE
