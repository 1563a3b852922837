"""Bounded by the input, never by a limit: reads sized by what they read, YAML nodes counted before
memory runs out, deadlines that bound a whole request (body, stream, exec plugin), numbers and
durations out of range as one error line, and storage that cannot be read named, not misjudged."""

import http.server
import json
import resource
import subprocess
import sys
import threading
import time

import pytest

from kubectl_safety.cluster.live import Connection, parse_timeout
from kubectl_safety.cluster.scopes import cluster_scope
from kubectl_safety.cluster.source import load_snapshot
from kubectl_safety.errors import UsageError
from tests.builders import make_node, make_pod
from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli
from tests.unit.loopback import serve

GIB = 1 << 30


def limited(limit):
    """A preexec_fn: the child's address space is at most ``limit`` bytes."""
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def python_under(limit, code, timeout=300):
    return subprocess.run([sys.executable, "-c", code], preexec_fn=limited(limit), capture_output=True,
                          text=True, timeout=timeout)


# -- reads sized by the input --------------------------------------------------------------------------
def test_a_dump_is_read_into_a_buffer_the_size_of_the_file_not_of_the_limit():
    proc = python_under(GIB, "from kubectl_safety.cluster.files import read_limited\n"
                             f"print(len(read_limited({DEMO!r}, 16 << 30)))")
    assert proc.returncode == 0, proc.stderr[-2000:]
    with open(DEMO, "rb") as f:
        assert int(proc.stdout) == len(f.read())


def test_a_file_that_grows_past_the_limit_while_read_is_refused(tmp_path, monkeypatch):
    from kubectl_safety.cluster import files

    path = tmp_path / "d.yaml"
    path.write_bytes(b"a" * 100)
    real = files.os.fstat
    monkeypatch.setattr(files.os, "fstat", lambda fd: type("S", (), {"st_size": 10, "st_mode": real(fd).st_mode})())
    with pytest.raises(OSError, match="larger than 50 bytes"):
        files.read_limited(str(path), 50)
    assert files.read_limited(str(path), 100) == b"a" * 100


def test_exec_plugin_output_is_read_in_pieces_up_to_the_limit():
    from kubectl_safety.cluster.exec_plugin import _read_output

    proc = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        out = _read_output(proc.stdout, 100_000)
    finally:
        proc.kill()
        proc.wait()
    assert 100_000 < len(out) <= 100_000 + (1 << 16)


def test_a_template_file_that_never_ends_is_refused():
    proc = subprocess.run([sys.executable, "-m", "kubectl_safety", "explain", "node", "node-a1", "--snapshot", DEMO,
                           "-o", "go-template-file=/dev/zero"], preexec_fn=limited(GIB), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2 and proc.stderr == \
        "error: cannot read the template file /dev/zero: not a regular file\n", proc.stderr[-2000:]


# -- YAML that starts like JSON ------------------------------------------------------------------------
def test_a_yaml_dump_in_flow_style_that_starts_with_a_brace_is_read_as_yaml(tmp_path):
    import yaml

    with open(DEMO) as f:
        flow = yaml.safe_dump(yaml.safe_load(f), default_flow_style=True)
    assert flow.startswith("{") and not flow.startswith('{"')
    (tmp_path / "flow.yaml").write_text(flow)
    args = ["drain", "node-a1", "--dry-run", "--ignore-daemonsets", "--as-of", DEMO_NOW, "--snapshot"]
    assert run_cli(args + [str(tmp_path / "flow.yaml")]) == run_cli(args + [DEMO])


@pytest.mark.parametrize("name, text, expect", [
    ("flow-yaml-broken", "{kind: [Pod, }", r"invalid JSON at line 1 column 2: .* \(nor YAML: invalid YAML at line"),
    ("json-file-is-json-only", '{"kind": "Pod",}', r"d.json: invalid JSON at line 1 column 16"),
])
def test_text_neither_json_nor_yaml_is_one_error_line(tmp_path, name, text, expect):
    import re

    path = tmp_path / ("d.json" if "json-file" in name else "d.yaml")
    path.write_text(text)
    code, out, err = run_cli(["check", "--snapshot", str(path)])
    assert code == 1 and err.count("\n") == 1 and err.startswith("error: "), err
    assert re.search(expect, err), err


# -- YAML nodes bounded before memory ------------------------------------------------------------------
def test_a_yaml_list_of_scalars_trips_the_node_bound_before_memory_runs_out(tmp_path):
    path = tmp_path / "scalars.yaml"
    path.write_text("- 1\n" * 10_000_000)  # 40 MB: 10 million nodes, some 3.5 GB once composed
    proc = subprocess.run([sys.executable, "-m", "kubectl_safety", "check", "--snapshot", str(path)],
                          preexec_fn=limited(2 * GIB), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr[-2000:]
    *warnings, error = proc.stderr.splitlines()  # the large-YAML hint may come first
    assert all(w.startswith("warning: ") for w in warnings), proc.stderr[-2000:]
    assert error.startswith("error: ") and "more than 2500000 nodes" in error, proc.stderr[-2000:]


def test_the_pure_python_loader_counts_nodes_too(monkeypatch):
    import yaml

    from kubectl_safety.cluster import dump

    monkeypatch.setattr(dump, "MAX_YAML_NODES", 1000)
    text = "a: &x 1\nb:\n" + "- 1\n" * 2000  # an anchor: the bounded loader
    with pytest.raises(yaml.YAMLError, match="more than 1000 nodes"):
        dump.load_yaml_all(text)
    assert dump.load_yaml_all("a: &x 1\nb: *x\n") == [{"a": 1, "b": 1}]


# -- deadlines bound the whole request -----------------------------------------------------------------
class _Forever(http.server.BaseHTTPRequestHandler):
    """A watch whose body never ends (until the client hangs up, or two minutes)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        end = time.monotonic() + 120
        try:
            while time.monotonic() < end:
                self.wfile.write(b"1000\r\n" + b" " * 4096 + b"\r\n")
                time.sleep(0.01)
        except OSError:
            pass


def test_a_stream_that_never_ends_is_stopped_at_its_deadline():
    from types import SimpleNamespace

    from kubectl_safety.cluster.transport import HttpTransport

    server, url = serve(_Forever, daemon_threads=True)
    try:
        endpoint = SimpleNamespace(host=url, authorization=None,
                                   refresh=None, tls_server_name=None)
        status, stream = HttpTransport(endpoint).stream(endpoint.host + "/api/v1/pods?watch=1", [], 1.0)
        reader = threading.Thread(target=lambda: list(stream.lines()), daemon=True)
        reader.start()
        reader.join(60)  # a liveness bound, far past the 1 s deadline: not a timing assertion
        assert status == 200 and not reader.is_alive(), "the stream outlived its deadline"
    finally:
        server.shutdown()
        server.server_close()


def test_an_exec_plugin_is_killed_at_the_request_timeout(tmp_path, monkeypatch):
    from tests.builders import exec_user, kubeconfig

    monkeypatch.setenv("KUBECTL_SAFETY_EXEC_TIMEOUT", "30")
    (tmp_path / "kc.yaml").write_text(kubeconfig("https://127.0.0.1:1", user=exec_user("/bin/sh", "-c", "sleep 300")))
    code, out, err = run_cli(["explain", "pod", "a", "--request-timeout", "1s",
                              "--kubeconfig", str(tmp_path / "kc.yaml")])
    assert code == 1 and err == "error: exec plugin /bin/sh: no answer within 1s\n", err


# -- numbers and durations out of range ----------------------------------------------------------------
@pytest.mark.parametrize("text", ["99999999999s", "2562047h47m17s", "99999999999", "9" * 5000, "9" * 5000 + "ms"])
def test_a_request_timeout_past_go_durations_is_a_usage_error(text):
    with pytest.raises(UsageError, match="invalid --request-timeout .*out of range|invalid --request-timeout"):
        parse_timeout(text)


def test_a_huge_request_timeout_is_one_error_line_not_a_thread_traceback(tmp_path):
    from tests.builders import kubeconfig

    (tmp_path / "kc.yaml").write_text(kubeconfig("https://127.0.0.1:1"))
    proc = subprocess.run([sys.executable, "-m", "kubectl_safety", "explain", "pod", "a", "--request-timeout",
                           "99999999999s", "--kubeconfig", str(tmp_path / "kc.yaml")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr == \
        "error: invalid --request-timeout '99999999999s': out of range: at most 2562047h47m16s\n", proc.stderr


BIG = "9" * 5000


def _dump(*objects):
    return {"kind": "List", "apiVersion": "v1", "items": list(objects)}


def _pdb(min_available):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b", "namespace": "default"},
            "spec": {"selector": {}, "minAvailable": min_available}}


NUMBERS = {  # name: (file name, text, extra args)
    "quantity-json": ("d.json", json.dumps(_dump(make_node("n1"), make_pod("p", cpu=BIG))), []),
    "quantity-yaml-milli": ("d.yaml", json.dumps(_dump(make_node("n1"), make_pod("p", cpu=BIG + "m"))), []),
    "quantity-exponent": ("d.json", json.dumps(_dump(make_node("n1"), make_pod("p", memory="1e99999"))), []),
    "node-allocatable": ("d.json", json.dumps(_dump(make_node("n1", cpu=BIG), make_pod("p", cpu="1"))), []),
    "priority-json": ("d.json", json.dumps(_dump(make_node("n1"), make_pod("p", cpu="1"))).replace(
        '"nodeName": "n1"', f'"nodeName": "n1", "priority": {BIG}'), []),
    "pdb-percent": ("d.json", json.dumps(_dump(make_node("n1"), make_pod("p", cpu="1"), _pdb(BIG + "%"))), []),
    "go-template": ("d.json", json.dumps(_dump(make_node("n1"))), ["-o", "go-template={{ " + BIG + " }}"]),
    "jsonpath-slice": ("d.json", json.dumps(_dump(make_node("n1"))), ["-o", "jsonpath={.pods[1:" + BIG + "]}"]),
    "jsonpath-filter": ("d.json", json.dumps(_dump(make_node("n1"))), ["-o", "jsonpath={.pods[?(@.x==" + BIG + ")]}"]),
    "jsonpath-filter-not-json": ("d.json", json.dumps(_dump(make_node("n1"))), ["-o", "jsonpath={.pods[?(@.x==x)]}"]),
}


@pytest.mark.parametrize("name", NUMBERS)
def test_an_integer_of_thousands_of_digits_is_one_error_line(name, tmp_path):
    file_name, text, extra = NUMBERS[name]
    (tmp_path / file_name).write_text(text)
    code, out, err = run_cli(["explain", "node", "n1", "--snapshot", str(tmp_path / file_name),
                              "--as-of", DEMO_NOW] + extra)
    assert code in (1, 2) and err.startswith("error: ") and err.count("\n") == 1, err[:500]
    assert "internal error" not in err and "Traceback" not in err, err[:500]


# -- storage that cannot be read -----------------------------------------------------------------------
class _PartialTransport:
    """LIST answers from pages; storage classes are not served (404), volumes forbidden (403)."""

    host = "https://partial.invalid"

    def __init__(self, pages, refused):
        self.pages, self.refused = pages, refused

    def auth_headers(self):
        return {}

    def request(self, method, url, headers, body, timeout):
        resource = url.split("?")[0].rsplit("/", 1)[-1]
        if resource in self.refused:
            code = self.refused[resource]
            return code, json.dumps({"kind": "Status", "code": code, "message": f"{resource} is refused",
                                     "reason": "Forbidden" if code == 403 else "NotFound"}).encode()
        items = self.pages.get(resource, [])
        return 200, json.dumps({"kind": "List", "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
                                "items": items}).encode()


def _storage_cluster():
    pod = make_pod("db-0", node="n1", cpu="100m", volumes=[{"name": "data", "persistentVolumeClaim":
                                                            {"claimName": "data-db-0"}}])
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": "data-db-0", "namespace": "default"},
             "spec": {"storageClassName": "zonal", "volumeName": "pv-1", "accessModes": ["ReadWriteOnce"]},
             "status": {"phase": "Bound"}}
    return {"nodes": [make_node("n1"), make_node("n2")], "pods": [pod], "persistentvolumeclaims": [claim]}


@pytest.mark.parametrize("refused, named", [
    ({"storageclasses": 404, "persistentvolumes": 403}, "persistentvolumes (forbidden), storageclasses (not served)"),
    ({"storageclasses": 403}, "storageclasses (forbidden)"),
])
def test_storage_that_cannot_be_read_is_named_and_not_judged(refused, named):
    from tests.published import plan_drain

    warnings = []
    connection = Connection(_transport=_PartialTransport(_storage_cluster(), refused))
    snapshot = load_snapshot(connection=connection, queries=cluster_scope(), warnings=warnings)
    assert sorted(snapshot.storage_unread) == sorted(refused) and not snapshot.storage_known
    assert len(warnings) == len(refused)
    plan = plan_drain(snapshot, ["n1"])
    entry = plan["pods"][0]
    assert entry["action"] == "evict" and plan["capacity"]["ok"] is True, entry
    storage = [w for w in plan["warnings"] if w["code"] == "STORAGE_NOT_JUDGED"]
    assert len(storage) == 1 and named in storage[0]["message"] and "default/db-0 (data-db-0)" in storage[0]["message"]


def test_storage_read_whole_adds_no_warning():
    from tests.published import plan_drain

    pages = _storage_cluster()
    pages["persistentvolumes"] = [{"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"},
                                   "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}}]
    pages["storageclasses"] = [{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                "metadata": {"name": "zonal"}, "provisioner": "x"}]
    connection = Connection(_transport=_PartialTransport(pages, {}))
    snapshot = load_snapshot(connection=connection, queries=cluster_scope())
    assert snapshot.storage_known and not snapshot.storage_unread
    assert not [w for w in plan_drain(snapshot, ["n1"])["warnings"] if w["code"] == "STORAGE_NOT_JUDGED"]


# -- a rollout's --exec output -------------------------------------------------------------------------
EXEC_UNDER_LIMIT = """
import subprocess, threading
from types import SimpleNamespace
from kubectl_safety.engine.rollout import Rollout
from kubectl_safety.engine.rollout_report import NodeProgress
r = object.__new__(Rollout)
r.spec = SimpleNamespace(exec_command=COMMAND, exec_timeout=300)
r.emit, r.clock, r._run = (lambda *a, **k: None), (lambda: 0.0), subprocess.run
r.nodes, r.interrupted = {"n1": NodeProgress("n1", 1, "drained")}, threading.Event()
print(r._exec("n1"), r.nodes["n1"].exec.output)
"""


def test_a_rollout_exec_that_prints_more_than_memory_holds_is_judged_by_its_last_line():
    command = "head -c 700000000 /dev/zero | tr '\\\\0' a; echo; echo the-last-line"
    proc = python_under(600 << 20, f"COMMAND = {command!r}\n" + EXEC_UNDER_LIMIT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == "('done', None) the-last-line\n"
