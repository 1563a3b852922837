"""A small metrics.k8s.io APIService serving fixed usage, so the HorizontalPodAutoscaler controller acts.

An HTTPS server on 127.0.0.1 (self-signed certificate, made with openssl) answers the aggregated
API's discovery and ``PodMetricsList`` requests: every pod the API server lists for the request's
namespace and label selector uses ``USAGE`` per container. The API server reaches it through an
ExternalName Service (the aggregator resolves one to its external name, without kube-proxy) named by
an APIService with insecureSkipTLSVerify.
"""

from __future__ import annotations

import json
import ssl
import subprocess
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from kubectl_safety.cluster.live import Connection

GROUP_VERSION = "/apis/metrics.k8s.io/v1beta1"
USAGE = {"cpu": "10m", "memory": "16Mi"}
DISCOVERY = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "metrics.k8s.io/v1beta1",
             "resources": [{"name": "pods", "singularName": "", "namespaced": True, "kind": "PodMetrics",
                            "verbs": ["get", "list"]},
                           {"name": "nodes", "singularName": "", "namespaced": False, "kind": "NodeMetrics",
                            "verbs": ["get", "list"]}]}


class MetricsAPI:
    def __init__(self, cluster, workdir: Path):
        self.cluster = cluster
        self.connection = Connection(kubeconfig=str(cluster.kubeconfig))
        self.workdir = workdir
        self.requests = 0
        self.server = None

    def start(self) -> "MetricsAPI":
        cert, key = self.workdir / "metrics.crt", self.workdir / "metrics.key"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                        "/CN=localhost", "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                api.requests += 1
                status, body = api.answer(self.path)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(cert), str(key))
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        port = self.server.server_address[1]
        self.cluster.apply([
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "safety-metrics", "namespace": "default"},
             "spec": {"type": "ExternalName", "externalName": "localhost", "ports": [{"port": port}]}},
            {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
             "metadata": {"name": "v1beta1.metrics.k8s.io"},
             "spec": {"service": {"namespace": "default", "name": "safety-metrics", "port": port},
                      "group": "metrics.k8s.io", "version": "v1beta1", "insecureSkipTLSVerify": True,
                      "groupPriorityMinimum": 100, "versionPriority": 100}}])
        self.cluster.kubectl("wait", "apiservice/v1beta1.metrics.k8s.io", "--for=condition=Available",
                             "--timeout=60s", timeout=90)
        return self

    def answer(self, path):
        url = urlparse(path)
        if url.path == GROUP_VERSION:
            return 200, DISCOVERY
        parts = url.path[len(GROUP_VERSION):].strip("/").split("/")
        if url.path.startswith(GROUP_VERSION) and len(parts) == 3 and parts[0] == "namespaces" and parts[2] == "pods":
            selector = (parse_qs(url.query).get("labelSelector") or [None])[0]
            pods = self.connection.list("pods", parts[1], label_selector=selector)["items"]
            now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            items = [{"metadata": {"name": p["metadata"]["name"], "namespace": parts[1]}, "timestamp": now,
                      "window": "30s", "containers": [{"name": c["name"], "usage": dict(USAGE)}
                                                      for c in p["spec"]["containers"]]}
                     for p in pods if p.get("status", {}).get("phase") == "Running"]
            return 200, {"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {},
                         "items": items}
        return 404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404, "reason": "NotFound"}

    def stop(self):
        self.cluster.kubectl("delete", "apiservice/v1beta1.metrics.k8s.io", "--ignore-not-found", check=False)
        self.cluster.kubectl("delete", "service/safety-metrics", "-n", "default", "--ignore-not-found", check=False)
        if self.server is not None:
            self.server.shutdown()
