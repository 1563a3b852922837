"""A loopback API server that misbehaves on request, for the hostile corpus.

One ``ThreadingHTTPServer`` on 127.0.0.1; the kubeconfig's server URL carries the behaviour as a
path prefix (``http://127.0.0.1:PORT/m/drip``), so one server serves every case. Every loop is
bounded (it stops by itself after a few seconds or when the client hangs up).
"""

import http.server
import json
import re
import time

import pytest

from tests.unit.loopback import serve

HOSTILE_MESSAGE = "pods is forbidden\x1b]0;pwned\x07\n\x1b[31merror: forged line\u202e\x9b2J"
ECHO_SECRET_HEADERS = ("Authorization",)


RAW_ANSWERS = {
    "garbage-status": b"HTTP/1.1 OK maybe\r\n\r\n",
    "not-http": b"SSH-2.0-OpenSSH_9.0\r\n",
    "too-many-headers": b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(500)) + b"\r\n",
    "long-header": b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 200_000 + b"\r\n\r\n",
    "cut-body": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"kind\":",
    "bad-chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
}


def _list(kind, items, token=None):
    meta = {"resourceVersion": "1"}
    if token:
        meta["continue"] = token
    return {"kind": kind, "apiVersion": "v1", "metadata": meta, "items": items}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: C901 - one branch per behaviour, each short
        match = re.match(r"/m/([^/]+)(/.*)?", self.path)
        mode, rest = (match.group(1), match.group(2) or "/") if match else ("drip", self.path)  # (as a proxy: drip)
        self.mode = mode
        try:
            answer = self.raw_answer if mode in RAW_ANSWERS else getattr(self, "mode_" + mode.replace("-", "_"))
            answer(rest)
        except (OSError, ValueError):
            pass  # the client hung up: that is what most cases want

    do_POST = do_PATCH = do_DELETE = do_GET

    # -- helpers ---------------------------------------------------------------------------
    def send(self, status, payload, headers=()):
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def raw(self, data: bytes):
        self.wfile.write(data)
        self.wfile.flush()

    def bounded(self, seconds=8.0):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            yield

    # -- behaviours ------------------------------------------------------------------------
    def mode_drip(self, rest):
        """Headers one byte at a time, forever (bounded here)."""
        self.raw(b"HTTP/1.1 200 OK\r\n")
        for _ in self.bounded():
            self.raw(b"X")
            time.sleep(0.05)

    def mode_drip_body(self, rest):
        self.raw(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
        for _ in self.bounded():
            self.raw(b" ")
            time.sleep(0.05)

    def mode_endless_chunked(self, rest):
        self.raw(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        piece = b" " * 65536
        for _ in self.bounded():
            self.raw(b"%x\r\n%s\r\n" % (len(piece), piece))

    def mode_endless_close(self, rest):
        self.raw(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
        piece = b" " * 65536
        for _ in self.bounded():
            self.raw(piece)

    def mode_trickle(self, rest):
        """200 without Content-Length (a broken proxy): a body that trickles on past every timeout."""
        self.raw(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{")
        for _ in self.bounded(60.0):
            self.raw(b" ")
            time.sleep(0.05)

    def mode_huge_length(self, rest):
        self.raw(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 999999999999\r\n\r\n{}")

    def raw_answer(self, rest):
        """A fixed, malformed answer (RAW_ANSWERS), then the connection closes."""
        self.raw(RAW_ANSWERS[self.mode])
        self.close_connection = True

    def mode_deep_json(self, rest):
        self.send(200, b"[" * 200_000 + b"]" * 200_000)

    def mode_deep_object(self, rest):
        self.send(200, b'{"a":' * 50_000 + b"1" + b"}" * 50_000)

    def mode_not_json(self, rest):
        self.send(200, b"<html>\x1b[2Jhello</html>")

    def mode_nan(self, rest):
        self.send(200, b'{"kind": "PodList", "items": [], "metadata": {"x": NaN}}')

    def mode_huge_number(self, rest):
        # in a field that is read (a field nobody reads is skipped unparsed, as kubectl's decoder does)
        self.send(200, b'{"kind": "PodList", "items": [{"metadata": {"name": "p"}, "spec": {"priority": '
                  + b"9" * 10_000 + b"}}]}")

    def mode_json_array(self, rest):
        self.send(200, [1, 2, 3])

    def mode_items_not_list(self, rest):
        self.send(200, {"kind": "PodList", "items": {"a": 1}, "metadata": {}})

    def mode_continue_forever(self, rest):
        self.send(200, _list("PodList", [], token=f"t{time.monotonic_ns()}"))

    def mode_continue_same(self, rest):
        self.send(200, _list("PodList", [], token="same"))

    def mode_continue_not_string(self, rest):
        self.send(200, _list("PodList", [], token={"a": 1}))

    def mode_hostile_message(self, rest):
        self.send(403, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden\x1b[5m",
                        "message": HOSTILE_MESSAGE, "code": 403})

    def mode_hostile_500(self, rest):
        self.send(500, HOSTILE_MESSAGE.encode())

    def mode_echo_auth(self, rest):
        """401 whose message repeats the credentials it got (a careless proxy)."""
        seen = "; ".join(f"{h}: {self.headers.get(h)}" for h in ECHO_SECRET_HEADERS) + f"; path {self.path}"
        self.send(401, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Unauthorized",
                        "message": f"bad credentials ({seen})", "code": 401})

    def mode_echo_auth_500(self, rest):
        seen = "; ".join(f"{h}: {self.headers.get(h)}" for h in ECHO_SECRET_HEADERS)
        self.send(500, f"upstream said: {seen}".encode())

    def mode_redirect(self, rest):
        self.send(302, b"", headers=[("Location", "http://127.0.0.1:1/elsewhere?access_token=leak")])

    def mode_forbidden(self, rest):
        self.send(403, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden",
                        "message": 'pods is forbidden: User "u" cannot list resource "pods"', "code": 403})


def start():
    return serve(Handler, daemon_threads=True)


@pytest.fixture(scope="module")
def hostile_server():
    server, url = start()
    yield url
    server.shutdown()
    server.server_close()
