"""The rollout's metrics: the exposition text, the push to a Pushgateway, the textfile written whole."""

import http.server
import re

import pytest

from kubectl_safety.cluster.prometheus import PrometheusError, push, write_textfile
from kubectl_safety.engine.drain_report import DrainStatus, RequestCounts
from kubectl_safety.engine.rollout_metrics import MetricsSink, RolloutMetrics, escape, exposition
from kubectl_safety.engine.rollout_report import (BatchProgress, NodeDrain, NodeProgress, RolloutReport,
                                                  RolloutStatus)
from tests.unit.loopback import serve

SAMPLE = re.compile(r'^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)\{(?P<labels>(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*)\} '
                    r'(?P<value>\S+)$')


def report(status="running"):
    drain = NodeDrain(DrainStatus.DRAINED, ("ns/a", "ns/b"), (), ())
    nodes = (NodeProgress("n1", 1, "done", drain=drain, surges=("Deployment ns/web 2->3",)),
             NodeProgress("n2", 1, "done", drain=NodeDrain(DrainStatus.DRAINED, ("ns/c",), (), ()),
                          surges=("Deployment ns/web 2->3",)),
             NodeProgress("n3", 2, "pending"), NodeProgress('we"ird\\', None, "pending"))
    batches = (BatchProgress(1, ("n1", "n2"), RolloutStatus.DONE), BatchProgress(2, ("n3",), RolloutStatus.BLOCKED))
    return RolloutReport("r1", "kube-system/r1", "me", RolloutStatus(status), None, False, 12.5, batches, nodes,
                         RequestCounts(1, 1, 3))


def series(text) -> dict:
    """``name{labels}`` -> value, every line checked against the exposition format's grammar."""
    out, typed = {}, set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in ("counter", "gauge") and name not in typed
            typed.add(name)
            continue
        if line.startswith("# HELP "):
            continue
        m = SAMPLE.match(line)
        assert m, line
        assert m["name"] in typed, line
        out[f"{m['name']}{{{m['labels']}}}"] = float(m["value"])
    return out


def test_metrics_of_a_rollout_blocked_at_its_second_batch():
    clock = iter([0.0, 30.0, 31.0]).__next__  # batch 1, batch 2, the report
    m = RolloutMetrics("r1", clock)
    m.observe({"event": "batch", "batch": 1})
    m.observe({"event": "retrying", "result": "pdb-blocked", "pod": "ns/a"})
    m.observe({"event": "retrying", "result": "throttled", "pod": "ns/a"})  # not a budget
    m.observe({"event": "batch", "batch": 2})
    got = series(m.text(report(), blocked=("n4",)))
    p = "kubectl_safety_rollout_"
    assert got[f'{p}nodes_done_total{{rollout="r1"}}'] == 2
    assert got[f'{p}blocked_nodes{{rollout="r1"}}'] == 2  # n3 (its batch blocked) and n4 (held by a gate)
    assert got[f'{p}batches_done_total{{rollout="r1"}}'] == 1
    assert got[f'{p}pods_evicted_total{{rollout="r1",node="n1",batch="1"}}'] == 2
    assert got[f'{p}pods_evicted_total{{rollout="r1",node="n2",batch="1"}}'] == 1
    assert got[f'{p}surges_total{{rollout="r1",batch="1"}}'] == 1  # one workload surged for both nodes
    assert got[f'{p}budget_waits_total{{rollout="r1",batch="1"}}'] == 1
    assert got[f'{p}budget_waits_total{{rollout="r1",batch="2"}}'] == 0
    assert got[f'{p}batch_duration_seconds{{rollout="r1",batch="1"}}'] == 31.0  # ended by the first report after it
    assert got[f'{p}batch_duration_seconds{{rollout="r1",batch="2"}}'] == 1.0
    assert got[f'{p}duration_seconds{{rollout="r1"}}'] == 12.5
    assert got[f'{p}status{{rollout="r1",status="running"}}'] == 1
    assert got[f'{p}node_done{{rollout="r1",node="we\\"ird\\\\",batch=""}}'] == 0


@pytest.mark.parametrize("value, escaped", [("plain", "plain"), ('a"b', 'a\\"b'), ("a\\b", "a\\\\b"),
                                            ("two\nlines", "two\\nlines")])
def test_label_values_are_escaped_as_the_exposition_format_says(value, escaped):
    assert escape(value) == escaped
    assert series(exposition([("nodes", {"rollout": value}, 1)]))  # still parses


class Gateway(http.server.BaseHTTPRequestHandler):
    seen = []
    answer = 200

    def do_PUT(self):  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Gateway.seen.append((self.path, self.headers["Content-Type"], body.decode()))
        self.send_response(Gateway.answer)
        self.send_header("Content-Length", "3")
        self.end_headers()
        self.wfile.write(b"bad")

    def log_message(self, *args):
        pass


@pytest.fixture
def gateway():
    server, url = serve(Gateway, poll_interval=0.05)
    Gateway.seen, Gateway.answer = [], 200
    yield url
    server.shutdown()
    server.server_close()


def test_push_replaces_the_rollouts_group_with_a_put(gateway):
    push(gateway + "/", "kubectl-safety", "x 1\n", {"rollout": "r/1"})
    assert Gateway.seen == [("/metrics/job/kubectl-safety/rollout/r%2F1", "text/plain; version=0.0.4; charset=utf-8",
                             "x 1\n")]


def test_a_refused_push_is_a_warning_not_a_stopped_rollout(gateway, tmp_path):
    Gateway.answer = 400
    warnings = []
    sink = MetricsSink("r1", pushgateway=gateway, metrics_file=str(tmp_path / "m.prom"), warn=warnings.append)
    sink.publish(report("done"))
    assert len(warnings) == 1 and "HTTP 400: bad" in warnings[0]
    assert "kubectl_safety_rollout_nodes_done_total" in (tmp_path / "m.prom").read_text()  # the file still written
    with pytest.raises(PrometheusError):
        push(gateway, "j", "x 1\n")


def test_textfile_is_replaced_whole_and_no_temporary_is_left(tmp_path):
    path = tmp_path / "rollout.prom"
    path.write_text("old\n")
    write_textfile(str(path), "new 1\n")
    assert path.read_text() == "new 1\n" and [p.name for p in tmp_path.iterdir()] == ["rollout.prom"]
    with pytest.raises(OSError):
        write_textfile(str(tmp_path / "missing" / "x.prom"), "new 1\n")
