"""The plain transport (http.client) and the kubernetes client's transport send the same requests.

A loopback HTTPS server that requires a client certificate echoes what it received (method,
path, headers in order, body, and the client's port, to see kept-alive connections). The same
kubeconfig is used through ``Connection`` twice: once as resolved without the kubernetes client,
once forced through it; the echoes must agree.
"""

import base64
import http.server
import json
import os
import ssl
import threading

import pytest

from kubectl_safety.cluster import kubeconfig
from kubectl_safety.cluster.live import Connection
from kubectl_safety.cluster.transport import ClientTransport, HttpTransport
from tests import builders
from tests.ci import unavailable
from tests.unit.loopback import self_signed, serve


class Echo(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the API server

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.dumps({"method": self.command, "path": self.path, "port": self.client_address[1],
                           "headers": [[k.lower(), v] for k, v in self.headers.items()],
                           "body": self.rfile.read(length).decode() if length else None}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if "framing=chunked" in self.path:  # as the API server streams large lists
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(body), 7):
                piece = body[i:i + 7]
                self.wfile.write(b"%x;ext=1\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\nX-Trailer: t\r\n\r\n")
        elif "framing=close" in self.path:  # no length: the body ends with the connection
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True
        else:
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    do_GET = do_POST = do_PATCH = do_DELETE = _answer

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """An mTLS echo server for the name 'kubernetes.example' (and 127.0.0.1); the kubeconfig pieces."""
    tmp = tmp_path_factory.mktemp("mtls")
    server_cert, server_key, server_pem = self_signed(tmp, ["kubernetes.example", "127.0.0.1"])
    client_cert, client_key, client_pem = self_signed(tmp, ["alice"])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(server_cert, server_key)
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cadata=client_pem.decode())
    httpd, url = serve(Echo, context)
    yield {"url": url, "ca": server_pem,
           "cert": client_cert, "key": client_key}
    httpd.shutdown()


def write_kubeconfig(tmp_path, server, cluster_extra=None, user_extra=None, inline=False):
    b64 = lambda data: base64.b64encode(data).decode()  # noqa: E731
    user = ({"client-certificate-data": b64(server["cert"].read_bytes()), "client-key-data": b64(server["key"].read_bytes())}
            if inline else {"client-certificate": str(server["cert"]), "client-key": str(server["key"])})
    return builders.write_kubeconfig(
        tmp_path / "kubeconfig", server["url"], user={**user, "token": "t0k", **(user_extra or {})},
        cluster={"certificate-authority-data": b64(server["ca"]), **(cluster_extra or {})}, context={"namespace": "shop"})


def connections(path, **flags):
    """(plain, via the kubernetes client) Connections for the same kubeconfig and flags."""
    plain = Connection(kubeconfig=path, **flags)
    assert isinstance(plain.transport(), HttpTransport)
    client = Connection(kubeconfig=path, **flags)
    client._transport = ClientTransport(client._build_client())
    return plain, client


def echo(conn, method="GET", body=None):
    status, payload = conn.request(method, "/api/v1/namespaces/shop/pods", query={"labelSelector": "app=web,tier in (a,b)"},
                                   body=body)
    assert status == 200
    return payload


REQUESTS = [
    ("get", {}, "GET", None),
    ("impersonation-repeats-groups", {"as_user": "bob", "as_groups": ("g1", "g2")}, "GET", None),
    ("post-json", {}, "POST", {"kind": "Eviction"}),
    ("patch-strategic-merge", {}, "PATCH", {"spec": {"unschedulable": True}}),
    ("tls-server-name", {}, "GET", None),
]


@pytest.mark.parametrize("name, flags, method, body", REQUESTS, ids=[r[0] for r in REQUESTS])
def test_both_transports_send_the_same_request(server, tmp_path, name, flags, method, body):
    extra = {"tls-server-name": "kubernetes.example"} if name == "tls-server-name" else None
    plain, client = connections(write_kubeconfig(tmp_path, server, cluster_extra=extra), **flags)
    a, b = echo(plain, method, body), echo(client, method, body)
    assert a["method"] == b["method"] == method
    assert a["path"] == b["path"] == "/api/v1/namespaces/shop/pods?labelSelector=app%3Dweb%2Ctier+in+%28a%2Cb%29"
    assert a["body"] == b["body"]
    wanted = ("authorization", "user-agent", "accept", "content-type", "impersonate-user", "impersonate-group")
    assert [h for h in a["headers"] if h[0] in wanted] == [h for h in b["headers"] if h[0] in wanted]
    assert ["authorization", "Bearer t0k"] in a["headers"]
    assert plain.default_namespace() == client.default_namespace() == "shop"
    if flags.get("as_groups"):
        assert [v for k, v in a["headers"] if k == "impersonate-group"] == ["g1", "g2"]


@pytest.mark.parametrize("framing", ["chunked", "close", "length"])
def test_both_transports_read_every_body_framing(server, tmp_path, framing):
    plain, client = connections(write_kubeconfig(tmp_path, server))
    answers = [c.request("GET", f"/api/v1/pods?framing={framing}")[1] for c in (plain, client, plain)]
    assert answers[0]["path"] == answers[1]["path"] == answers[2]["path"] == f"/api/v1/pods?framing={framing}"
    assert (answers[0]["port"] == answers[2]["port"]) is (framing != "close")  # reused unless closed


def test_plain_transport_keeps_the_connection_alive(server, tmp_path):
    plain = Connection(kubeconfig=write_kubeconfig(tmp_path, server, inline=True))
    ports = {echo(plain)["port"] for _ in range(3)}
    assert len(ports) == 1


def test_plain_transport_keeps_the_connection_alive_in_a_process_holding_many_descriptors(server, tmp_path):
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        unavailable(f"the hard descriptor limit ({hard}) is below the 1,024 that select() can watch")
    if soft != resource.RLIM_INFINITY and soft < 1200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1200, hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]  # the connection's socket lands above 1024
    try:
        plain = Connection(kubeconfig=write_kubeconfig(tmp_path, server, inline=True))
        assert len({echo(plain)["port"] for _ in range(3)}) == 1
    finally:
        for fd in held:
            os.close(fd)


def test_concurrent_requests_each_get_an_answer(server, tmp_path):
    plain = Connection(kubeconfig=write_kubeconfig(tmp_path, server))
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(echo(plain)["method"])) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == ["GET"] * 8


def test_wrong_server_name_is_a_tls_error(server, tmp_path):
    from kubectl_safety.errors import ClusterError

    plain = Connection(kubeconfig=write_kubeconfig(tmp_path, server, cluster_extra={"tls-server-name": "other.example"}))
    with pytest.raises(ClusterError, match="TLS error"):
        echo(plain)


def test_exec_plugin_runs_without_the_kubernetes_client(server, tmp_path):
    path = write_kubeconfig(tmp_path, server)
    cfg = json.loads(open(path).read())
    del cfg["users"][0]["user"]["token"]
    cfg["users"][0]["user"]["exec"] = {"apiVersion": "client.authentication.k8s.io/v1", "command": "/bin/sh",
                                        "args": ["-c", 'echo \'{"apiVersion":"client.authentication.k8s.io/v1",'
                                                 '"kind":"ExecCredential","status":{"token":"from-exec"}}\''],
                                        "interactiveMode": "Never"}
    open(path, "w").write(json.dumps(cfg))
    assert kubeconfig.resolve(path).authorization == "Bearer from-exec"
    conn = Connection(kubeconfig=path)
    assert isinstance(conn.transport(), HttpTransport)
    assert ["authorization", "Bearer from-exec"] in echo(conn)["headers"]


@pytest.mark.parametrize("flags, user, group", [
    ({}, "bob", ["g1"]),  # the kubeconfig's as / as-groups, as kubectl sends them
    ({"as_user": "carol"}, "carol", ["g1"]),  # each flag wins over its own field only
    ({"as_user": "carol", "as_groups": ("g2",)}, "carol", ["g2"]),
], ids=["from-kubeconfig", "user-flag-wins", "both-flags-win"])
def test_kubeconfig_impersonation_is_sent(server, tmp_path, flags, user, group):
    path = write_kubeconfig(tmp_path, server, user_extra={"as": "bob", "as-groups": ["g1"]})
    headers = echo(Connection(kubeconfig=path, **flags))["headers"]
    assert [v for k, v in headers if k == "impersonate-user"] == [user]
    assert [v for k, v in headers if k == "impersonate-group"] == group


class _Endpoint:
    """An exec-plugin endpoint whose plugin hands out bearer-1, bearer-2, ... slowly."""

    host, tls_server_name = "http://127.0.0.1:1", None

    def __init__(self):
        self.runs, self.authorization = 0, "Bearer 0"

    def refresh(self):
        import time

        time.sleep(0.05)  # long enough for the other refused requests to queue up behind it
        self.runs += 1
        return f"Bearer {self.runs}"


REFRESHES = {  # name: (Authorization each concurrent request was refused with, plugin runs)
    "requests refused at once run the plugin once": (["Bearer 0"] * 8, 1),
    "a refusal of the new token runs it again": (["Bearer 0", "Bearer 1"], 2),
    "without the refused value, each runs it": ([None, None], 2),
}


@pytest.mark.parametrize("name", REFRESHES)
def test_a_401_refreshes_exec_credentials_once_for_all_requests_refused_together(name):
    refused, runs = REFRESHES[name]
    endpoint = _Endpoint()
    transport = HttpTransport(endpoint)
    retry = []
    for batch in ([r for r in refused if r != "Bearer 1"], [r for r in refused if r == "Bearer 1"]):
        threads = [threading.Thread(target=lambda r=r: retry.append(transport.refresh(r))) for r in batch]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert endpoint.runs == runs and all(retry)
    assert transport.auth_headers() == {"Authorization": f"Bearer {runs}"}
