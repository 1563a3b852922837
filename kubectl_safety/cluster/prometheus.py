"""Prometheus over HTTP: the firing alerts (``GET /api/v1/alerts``), a push to a Pushgateway
(``PUT /metrics/job/<job>/<label>/<value>...``), a node-exporter textfile written atomically.

Requests go through ``transport.HttpTransport`` (its deadline and body bounds); a failure raises
``PrometheusError`` with one line saying what failed.
"""

import json
import os
import tempfile
from urllib.parse import quote

from kubectl_safety.cluster.kubeconfig import Endpoint
from kubectl_safety.cluster.transport import HttpTransport

TIMEOUT = 10.0
EXPOSITION = "text/plain; version=0.0.4; charset=utf-8"


class PrometheusError(Exception):
    """A request to Prometheus or the Pushgateway failed, or its answer was not what the API says."""


def _request(base, method, path, body=None, headers=()):
    base = base.rstrip("/")
    try:
        transport = HttpTransport(Endpoint(host=base))
        return transport.request(method, base + path, list(headers), body, TIMEOUT)
    except (OSError, ValueError) as e:
        raise PrometheusError(f"{method} {base}{path}: {e}") from None
    except Exception as e:  # http.client's protocol errors
        raise PrometheusError(f"{method} {base}{path}: {type(e).__name__}: {e}") from None


def firing_alerts(base) -> list:
    """The alerts Prometheus reports firing (``state == "firing"``): ``[{"name", "labels"}]``.

    Shape: ``{"status": "success", "data": {"alerts": [{"labels": {...}, "state": ...}, ...]}}``
    (prometheus web/api/v1/api.go, ``alerts``). Anything else raises."""
    status, data = _request(base, "GET", "/api/v1/alerts", headers=[("Accept", "application/json")])
    if status != 200:
        raise PrometheusError(f"GET {base.rstrip('/')}/api/v1/alerts: HTTP {status}: {data[:200]!r}")
    try:
        doc = json.loads(data)
        alerts = doc["data"]["alerts"]
        if doc.get("status") != "success" or not isinstance(alerts, list):
            raise ValueError
        out = []
        for a in alerts:
            labels = {str(k): str(v) for k, v in (a.get("labels") or {}).items()}
            if a.get("state") == "firing":
                out.append({"name": labels.get("alertname", ""), "labels": labels})
        return out
    except (ValueError, KeyError, TypeError, AttributeError):
        raise PrometheusError(f"GET {base.rstrip('/')}/api/v1/alerts: not an alerts answer") from None


def push(base, job, text, grouping=None):
    """Replace the group ``job`` (plus ``grouping`` labels) on a Pushgateway with ``text``
    (the text exposition format): a PUT, so series no longer pushed go too."""
    path = "/metrics/job/" + quote(job, safe="")
    for key, value in (grouping or {}).items():
        path += f"/{quote(key, safe='')}/{quote(value, safe='')}"
    status, data = _request(base, "PUT", path, text.encode(), [("Content-Type", EXPOSITION)])
    if status not in (200, 202):
        raise PrometheusError(f"PUT {base.rstrip('/')}{path}: HTTP {status}: "
                              f"{data[:200].decode('utf-8', 'replace').strip()}")


def write_textfile(path, text):
    """Write ``text`` to ``path`` for the node exporter's textfile collector: a temporary file in the same
    directory, then a rename, so the collector never reads half a file."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".kubectl-safety-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
