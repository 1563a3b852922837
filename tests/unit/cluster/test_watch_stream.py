"""WATCH through both transports: events arrive as the server writes them (a line may span chunks),
a 410 Gone answer is one ERROR event, and closing the stream from another thread ends the watch."""

import http.server
import json
import threading
import time

import pytest

from kubectl_safety.cluster.live import Connection
from kubectl_safety.cluster.transport import ClientTransport
from tests.builders import write_kubeconfig
from tests.unit.hostile_servers import hostile_server  # noqa: F401 - fixture
from tests.unit.loopback import serve

EVENTS = [{"type": "ADDED", "object": {"metadata": {"name": f"p{i}", "resourceVersion": str(10 + i)}}}
          for i in range(3)]


class Watcher(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if "resourceVersion=1&" in self.path:  # compacted away
            body = json.dumps({"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}).encode()
            self.send_response(410)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        data = b"".join(json.dumps(e).encode() + b"\n" for e in EVENTS)
        for i in range(0, len(data), 11):  # lines split across chunks, as a proxy may
            piece = data[i:i + 11]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        if "hold=1" in self.path:  # an open stream with nothing more to say
            time.sleep(5)
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory):
    httpd, url = serve(Watcher)
    yield write_kubeconfig(tmp_path_factory.mktemp("watch") / "kubeconfig", url, token="t0k")
    httpd.shutdown()


def connection(kubeconfig, via_client):
    conn = Connection(kubeconfig=kubeconfig)
    if via_client:
        conn._transport = ClientTransport(conn._build_client())
    return conn


@pytest.mark.parametrize("via_client", [False, True], ids=["plain", "kubernetes-client"])
def test_events_arrive_whole_across_chunks(kubeconfig, via_client):
    events = list(connection(kubeconfig, via_client).watch("pods", resource_version="5", timeout_seconds=5))
    assert events == EVENTS


@pytest.mark.parametrize("via_client", [False, True], ids=["plain", "kubernetes-client"])
def test_gone_is_one_error_event(kubeconfig, via_client):
    [event] = connection(kubeconfig, via_client).watch("pods", resource_version="1", timeout_seconds=5)
    assert event["type"] == "ERROR" and event["object"]["code"] == 410


def test_closing_the_stream_ends_a_waiting_watch(kubeconfig):
    streams = []
    events = connection(kubeconfig, False).watch("pods", field_selector="hold=1", resource_version="5",
                                                  timeout_seconds=30, on_stream=streams.append)
    seen = [next(events) for _ in EVENTS]
    started = time.monotonic()
    threading.Timer(0.3, lambda: streams[0].close()).start()
    assert list(events) == [] and seen == EVENTS
    assert time.monotonic() - started < 3  # not the server's 5 s


@pytest.mark.parametrize("via_client", [False, True], ids=["plain", "kubernetes-client"])
def test_a_watch_whose_body_trickles_forever_ends_at_its_deadline(hostile_server, tmp_path, via_client):  # noqa: F811
    """A socket shut down for reading still takes what keeps arriving: the stream stops at its deadline."""
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "x",
        "clusters": [{"name": "c", "cluster": {"server": f"{hostile_server}/m/trickle"}}],
        "users": [{"name": "u", "user": {"token": "t0k"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}]}))
    transport = connection(str(path), via_client).transport()
    started = time.monotonic()
    status, stream = transport.stream(transport.host + "/api/v1/pods?watch=1", [("Accept", "application/json")], 1.0)
    assert status == 200 and list(stream.lines()) == []
    assert time.monotonic() - started < 5  # not the server's 60 s
