"""The live API server: kubeconfig handling and raw JSON requests (no model deserialization)."""

import json
import os
import sys
import time
from dataclasses import field
from urllib.parse import quote, urlencode

from kubectl_safety import __version__
from kubectl_safety.errors import ClusterError, InputError, NotFoundError, SafetyError
from kubectl_safety.model.kinds import TABLE
from kubectl_safety.record import record

# resource: (api prefix, namespaced, kind), from the table of kinds
RESOURCES = {k.resource: (k.prefix, k.namespaced, k.kind) for k in TABLE}


def parse_timeout(text) -> float:
    """kubectl's ``--request-timeout``: ``0`` (none), ``30`` (seconds), or a Go duration (``1m30s``)."""
    from kubectl_safety.model.duration import flag_seconds

    return flag_seconds(text or "0", "--request-timeout")


@record(frozen=False, slots=False)
class Connection:
    """How to reach the cluster: the kubectl flags that shape a client."""

    kubeconfig: str = None
    context: str = None
    request_timeout: str = "0"
    timeout_flag: str = "--request-timeout"  # the flag that gave request_timeout, as messages name it
    as_user: str = None
    as_groups: tuple = ()
    insecure_skip_tls_verify: bool = False
    user_agent_suffix: str = ""
    overrides: dict = field(default_factory=dict)  # kubectl's connection flags (--server, --token, ...)
    as_uid: str = None
    verbosity: int = 0  # -v: 6 and more log each request on stderr
    _transport: object = field(default=None, repr=False)
    _namespace: str = field(default=None, repr=False)
    requests_made: list = field(default_factory=list, repr=False)

    # -- configuration -------------------------------------------------------------------
    @property
    def host(self) -> str:
        """The server URL as shown to people: no user name, password or query."""
        from urllib.parse import urlsplit

        parts = urlsplit(self.transport().host)
        netloc = parts.netloc.rpartition("@")[2]
        return f"{parts.scheme}://{netloc}{parts.path}" if parts.scheme else netloc

    def transport(self):
        """How requests go out (built once): a plain pool, or the kubernetes client's."""
        if self._transport is None:
            self._transport = self._fast_transport()
        if self._transport is None:
            from kubectl_safety.cluster.transport import ClientTransport

            self._transport = ClientTransport(self._build_client())
        return self._transport

    def _fast_transport(self):
        """Resolved without importing the kubernetes client (~0.4 s): all but auth providers and proxies."""
        from kubectl_safety.cluster.kubeconfig import OverrideError, forget_private_files, resolve
        from kubectl_safety.cluster.transport import HttpTransport

        if self.kubeconfig and not os.path.exists(self.kubeconfig):
            raise ClusterError(f"kubeconfig {self.kubeconfig}: no such file")
        try:
            endpoint = resolve(self.kubeconfig, self.context, self.overrides, parse_timeout(self.request_timeout))
        except OverrideError as e:
            raise ClusterError(f"invalid kubeconfig: {e}") from None
        if endpoint is None:
            return None
        if self.insecure_skip_tls_verify:
            endpoint.verify = False
        # the kubeconfig's as / as-uid / as-groups, each unless its flag is given (client-go merges them so)
        self.as_user = self.as_user or endpoint.impersonate
        self.as_uid = self.as_uid or endpoint.impersonate_uid
        self.as_groups = tuple(self.as_groups) or endpoint.impersonate_groups
        self._namespace = endpoint.namespace
        try:
            return HttpTransport(endpoint)
        except (OSError, ValueError) as e:  # e.g. an unreadable certificate or key, a bad server URL
            raise ClusterError(f"invalid kubeconfig: {_tls_setup_reason(e)}") from None
        finally:
            forget_private_files()  # the TLS context holds the key now

    def _build_client(self):
        try:
            from kubernetes import client, config
            from kubernetes.config.config_exception import ConfigException
        except ImportError:
            raise ClusterError("talking to a live cluster needs the kubernetes Python client: "
                               "python3 -m pip install kubernetes (or use --snapshot FILE)") from None

        configuration = client.Configuration()
        path = self.kubeconfig
        if path and not os.path.exists(path):
            raise ClusterError(f"kubeconfig {path}: no such file")
        try:
            env_paths = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
            default = os.path.expanduser("~/.kube/config")
            if path or any(os.path.exists(p) for p in env_paths) or (not env_paths and os.path.exists(default)):
                _check_context(path, self.context)
                with _auth_plugin_errors() as errors:
                    config.load_kube_config(config_file=path, context=self.context,
                                            client_configuration=configuration, persist_config=False)
                if errors:
                    raise ClusterError(f"the kubeconfig's credential plugin failed: {errors[0]}")
                contexts, active = config.list_kube_config_contexts(config_file=path)
                ctx = self.context or (active or {}).get("name")
                for c in contexts:
                    if c.get("name") == ctx:
                        self._namespace = (c.get("context") or {}).get("namespace")
            elif os.environ.get("KUBERNETES_SERVICE_HOST"):
                config.load_incluster_config(client_configuration=configuration)
                ns_file = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
                if os.path.exists(ns_file):
                    from kubectl_safety.cluster.files import read_limited
                    from kubectl_safety.cluster.kubeconfig import MAX_FILE

                    self._namespace = read_limited(ns_file, MAX_FILE).decode("utf-8", "replace").strip()
            else:
                raise ClusterError("no kubeconfig found: set KUBECONFIG, pass --kubeconfig, "
                                   "or use --snapshot FILE for offline analysis")
        except ConfigException as e:
            raise ClusterError(f"invalid kubeconfig: {_one_line(e)}") from None
        except (OSError, ValueError, TypeError, KeyError) as e:
            raise ClusterError(f"invalid kubeconfig: {_one_line(e)}") from None
        except SafetyError:
            raise
        except Exception as e:  # exec/auth plugins raise anything
            raise ClusterError(f"cannot load credentials from kubeconfig: {_one_line(e)}") from None
        _apply_overrides(configuration, self.overrides)
        if self.insecure_skip_tls_verify:
            configuration.verify_ssl = False
            _quiet_insecure_warnings()
        from kubectl_safety.printable import register_secret

        for value in list((configuration.api_key or {}).values()) + [configuration.password]:
            register_secret(value)
        configuration.retries = False
        configuration.connection_pool_maxsize = 32
        return client.ApiClient(configuration)

    def default_namespace(self) -> str:
        self.transport()
        return self._namespace or "default"

    # -- requests ------------------------------------------------------------------------
    def request(self, method, path, *, query=None, body=None, list_of=None, content_type=None):
        """One HTTP request; returns (status, parsed JSON body). Transport errors -> ClusterError.

        Raw JSON through the transport (``cluster/transport.py``: TLS, client certificates and
        credentials as the kubeconfig says; plugin tokens refreshed), nothing deserialized into models.
        ``list_of``: a kind whose list page is decoded straight into the typed model (``model/typed.py``).
        ``content_type``: the body's type when not JSON or (PATCH) a strategic merge patch.
        """
        transport = self.transport()
        headers = self._headers(transport)
        payload_bytes = None
        if body is not None:
            patch = method == "PATCH"
            headers.append(("Content-Type", content_type or (
                "application/strategic-merge-patch+json" if patch else "application/json")))
            payload_bytes = json.dumps(body).encode()
        url = transport.host + path + ("?" + urlencode(query) if query else "")
        timeout = parse_timeout(self.request_timeout) or None
        self.requests_made.append((method, path))
        started = time.monotonic()
        try:
            status, data = transport.request(method, url, headers, payload_bytes, timeout)
            refused = dict(headers).get("Authorization")
            if status == 401 and getattr(transport, "refresh", None) and transport.refresh(refused):
                headers = [h for h in headers if h[0] != "Authorization"] + list(transport.auth_headers().items())
                status, data = transport.request(method, url, headers, payload_bytes, timeout)
        except SafetyError:
            raise
        except Exception as e:
            raise self._transport_error(e) from None
        if self.verbosity >= 6:  # as kubectl -v=6: one line per request
            from kubectl_safety.printable import for_terminal

            elapsed = int((time.monotonic() - started) * 1000)
            sys.stderr.write(for_terminal(f"{method} {url} {status} in {elapsed} milliseconds") + "\n")
        if list_of and 200 <= status < 300 and data:
            from kubectl_safety.model.typed import decode_page

            payload = decode_page(data, list_of)
            if payload is not None:
                return status, payload
        try:
            payload = json.loads(data, parse_constant=_no_constant) if data else {}
        except RecursionError:
            raise ClusterError(f"unexpected answer from the server {self.host} to {method} {path}: "
                               "JSON nested too deeply") from None
        except ValueError:
            if 200 <= status < 300:
                raise ClusterError(f"unexpected answer from the server {self.host} to {method} {path}: "
                                   "not JSON") from None
            payload = {"message": data[:200].decode("utf-8", "replace")}
        if not isinstance(payload, dict):
            raise ClusterError(f"unexpected answer from the server {self.host} to {method} {path}: "
                               f"JSON {type(payload).__name__}, not an object")
        return status, payload

    def _headers(self, transport) -> list:
        """Accept, User-Agent, credentials and impersonation, as every request sends them.

        Impersonation values go out as UTF-8 bytes, as kubectl sends them (a str would be Latin-1)."""
        headers = [("Accept", "application/json"), ("User-Agent", self.user_agent)]
        headers += transport.auth_headers().items()
        if self.as_user:  # client-go sends a UID only with the user it impersonates
            headers.append(("Impersonate-User", _utf8(self.as_user)))
            if self.as_uid:
                headers.append(("Impersonate-Uid", _utf8(self.as_uid)))
        headers += [("Impersonate-Group", _utf8(group)) for group in self.as_groups]
        return headers

    def _transport_error(self, e):
        from kubectl_safety.cluster.transport import DeadlineExceeded, ResponseTooLarge

        host = self.host
        text = _one_line(e)
        if isinstance(e, ResponseTooLarge):
            return ClusterError(f"the server {host} answered too much: {text}")
        if isinstance(e, DeadlineExceeded) and not parse_timeout(self.request_timeout):
            return ClusterError(f"the server {host} did not answer in time ({text}); "
                                "--request-timeout sets the limit")
        if "CERTIFICATE_VERIFY_FAILED" in text or "SSLError" in text or "certificate" in text.lower():
            return ClusterError(f"TLS error talking to {host}: {_tls_reason(text)} "
                                "(verification stays on; --insecure-skip-tls-verify disables it)")
        if "timed out" in text.lower() or "timeout" in type(e).__name__.lower():
            return ClusterError(f"the server {host} did not answer within {self.timeout_flag}={self.request_timeout}")
        return ClusterError(f"unable to connect to the server {host}: {_connection_reason(text)}")

    def get(self, resource, name, namespace=None, optional=False):
        status, payload = self.request("GET", resource_path(resource, namespace, name))
        if status == 404 and optional:
            return None
        check(status, payload, resource, name, namespace)
        payload.setdefault("kind", RESOURCES[resource][2])
        payload.setdefault("apiVersion", RESOURCES[resource][0].split("/", 2)[-1])
        return payload

    def list(self, resource, namespace=None, *, field_selector=None, label_selector=None,
             chunk_size=500, checked=None):
        """All items of a (paginated) list, as a ``kind: List``-shaped dict with kind/apiVersion set.
        ``checked``: a list to which the items already shape-checked by their Struct are added."""
        items, _ = self.list_versioned(resource, namespace, field_selector=field_selector,
                                       label_selector=label_selector, chunk_size=chunk_size, checked=checked)
        return {"kind": "List", "apiVersion": "v1", "items": items}

    def watch(self, resource, namespace=None, *, resource_version, field_selector=None, label_selector=None,
              timeout_seconds=300, on_stream=None):
        """WATCH from ``resource_version``: yields event dicts (``type``, ``object``) until the server
        ends the stream (after ``timeout_seconds``: every watch has a deadline) or it breaks.
        An expired version arrives as an ``ERROR`` event with code 410 (or HTTP 410): relist.
        ``on_stream`` receives the open stream (its ``close()`` ends the watch from another thread)."""
        query = {"watch": "1", "resourceVersion": resource_version, "allowWatchBookmarks": "true",
                 "timeoutSeconds": str(int(timeout_seconds))}
        if field_selector:
            query["fieldSelector"] = field_selector
        if label_selector:
            query["labelSelector"] = label_selector
        transport = self.transport()
        headers = self._headers(transport)
        path = resource_path(resource, namespace)
        url = transport.host + path + "?" + urlencode(query)
        self.requests_made.append(("WATCH", path))
        try:  # the socket's read timeout outlives the server's deadline a little
            status, stream = transport.stream(url, headers, timeout_seconds + 15)
        except Exception as e:
            raise self._transport_error(e) from None
        if on_stream is not None:
            on_stream(stream)
        try:
            if status != 200:
                try:
                    payload = json.loads(stream.read() or b"{}")
                except ValueError:
                    payload = {}
                yield {"type": "ERROR", "object": {"kind": "Status", "code": status, **payload}}
                return
            for line in stream.lines():
                try:
                    event = json.loads(line, parse_constant=_no_constant)
                except (ValueError, RecursionError):
                    continue
                if isinstance(event, dict):
                    yield event
        except Exception as e:  # a broken stream ends the watch; the caller reconnects
            if not isinstance(e, (OSError, ValueError)) and "Protocol" not in type(e).__name__:
                raise
        finally:
            stream.close()

    def list_versioned(self, resource, namespace=None, *, field_selector=None, label_selector=None,
                       chunk_size=500, checked=None):
        """``(items, resourceVersion)`` of a (paginated) LIST: the version a WATCH starts from.
        Each page is decoded into the typed model (``model/typed.py``) as it arrives; the items of
        a page msgspec decoded and checked are added to ``checked`` too, if given."""
        from kubectl_safety.model.typed import TypedPage, prune

        kind = RESOURCES[resource][2]
        api_version = RESOURCES[resource][0].split("/", 2)[-1]
        items, query = [], {}
        if field_selector:
            query["fieldSelector"] = field_selector
        if label_selector:
            query["labelSelector"] = label_selector
        if chunk_size:
            query["limit"] = chunk_size
        path = resource_path(resource, namespace)
        seen, empty = set(), 0
        while True:
            status, payload = self.request("GET", path, query=query, list_of=kind)
            check(status, payload, resource, None, namespace, verb="list")
            page = payload.get("items") or []
            metadata = payload.get("metadata") or {}
            if not isinstance(page, list) or not isinstance(metadata, dict):
                raise ClusterError(f"unexpected answer from the server {self.host} to a LIST of {resource}: "
                                   "items must be a list, metadata a map")
            if isinstance(payload, TypedPage):  # trimmed by the decoder already
                for item in page:
                    item.setdefault("apiVersion", api_version)
                items += page
                if payload.checked and checked is not None:
                    checked += page
            else:
                for i, item in enumerate(page):
                    if isinstance(item, dict):
                        item.setdefault("kind", kind)
                        item.setdefault("apiVersion", api_version)
                        item = prune(item)  # the typed model's fields only, page by page
                    page[i] = None
                    items.append(item)
            token = metadata.get("continue")
            if not token:
                return items, metadata.get("resourceVersion") or "0"
            empty = empty + 1 if not page else 0
            if not isinstance(token, str) or token in seen or empty > MAX_EMPTY_PAGES or len(seen) >= MAX_PAGES:
                raise ClusterError(f"the server {self.host} keeps answering the LIST of {resource} with "
                                   f"more pages (stopped after {len(seen) + 1})")
            seen.add(token)
            query["continue"] = token

    @property
    def user_agent(self) -> str:
        return f"kubectl-safety/{__version__}{self.user_agent_suffix}"

    def server_version(self):
        status, payload = self.request("GET", "/version")
        return payload.get("gitVersion") if status == 200 else None


def _apply_overrides(configuration, o):
    """kubectl's connection flags on the kubernetes client's configuration (exec/auth-provider kubeconfigs)."""
    for flag, attr in (("server", "host"), ("certificate_authority", "ssl_ca_cert"), ("client_certificate", "cert_file"),
                       ("client_key", "key_file"), ("tls_server_name", "tls_server_name")):
        if o.get(flag):
            setattr(configuration, attr, o[flag])
    if o.get("token"):
        configuration.api_key = {"authorization": "Bearer " + o["token"]}
        configuration.refresh_api_key_hook = None


MAX_PAGES = 100_000  # 50 million objects at 500 a page
MAX_EMPTY_PAGES = 20  # pages in a row with a continue token and no items


def _no_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def _tls_setup_reason(e) -> str:
    text = _one_line(e)
    if "PEM" in text or "SSL" in text or "key values mismatch" in text.upper().replace("_", " ").lower():
        return f"the client certificate, key or CA cannot be used ({text[:160]})"
    return text[:200]


def _quiet_insecure_warnings():
    import urllib3  # the user asked for it: no two-line warning on every request

    urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)


def _check_context(path, context):
    """The chosen context must name a cluster and a user that the kubeconfig defines."""
    from kubernetes.config.kube_config import KUBE_CONFIG_DEFAULT_LOCATION, KubeConfigMerger

    merged = KubeConfigMerger(path or KUBE_CONFIG_DEFAULT_LOCATION).config
    name = context or merged.safe_get("current-context")
    if not name:
        raise ClusterError("invalid kubeconfig: no current-context is set: pass --context NAME")
    entry = next((c for c in merged.safe_get("contexts") or [] if c.safe_get("name") == name), None)
    if entry is None:
        raise ClusterError(f'invalid kubeconfig: context "{name}" not found')
    ctx = entry.safe_get("context") or {}
    for section, key in (("clusters", "cluster"), ("users", "user")):
        wanted = ctx.get(key) if isinstance(ctx, dict) else ctx.safe_get(key)
        if wanted and not any(x.safe_get("name") == wanted for x in merged.safe_get(section) or []):
            raise ClusterError(f'invalid kubeconfig: {key} "{wanted}" of context "{name}" is not defined')


class _auth_plugin_errors:
    """Collect the errors the kubernetes client only logs (failing exec plugins) instead of printing them."""

    def __enter__(self):
        import logging

        class Collect(logging.Handler):
            def emit(handler, record):
                self.errors.append(" ".join(record.getMessage().split()))

        self.errors, self.handler = [], Collect(level=logging.ERROR)
        logging.getLogger().addHandler(self.handler)
        return self.errors

    def __exit__(self, *exc):
        import logging

        logging.getLogger().removeHandler(self.handler)


def resource_path(resource, namespace=None, name=None, subresource=None) -> str:
    prefix, namespaced, _ = RESOURCES[resource]
    path = prefix
    if namespaced and namespace:
        path += f"/namespaces/{quote(namespace, safe='')}"
    path += f"/{resource}"
    if name:
        path += f"/{quote(name, safe='')}"
    if subresource:
        path += f"/{subresource}"
    return path


def check(status, payload, resource, name=None, namespace=None, verb="get"):
    """Turn an error status into one clear exception, as kubectl words it."""
    if 200 <= status < 300:
        return
    message = " ".join(str(payload.get("message") or f"HTTP {status}").split())  # one line
    if status == 404:
        kind = RESOURCES.get(resource, ("", "", resource))[2]
        where = f' in namespace "{namespace}"' if namespace else ""
        what = f'{kind.lower()} "{name}"' if name else f"{resource}{where}"
        raise NotFoundError(f"{what} not found{where if name else ''}")
    if status == 401:
        raise ClusterError(f"Unauthorized: the server rejected the credentials ({message})")
    if status == 403:
        raise ClusterError(f"Error from server (Forbidden): {message}")
    if status == 422 or status == 400:
        raise InputError(f"Error from server ({payload.get('reason') or 'Invalid'}): {message}")
    raise ClusterError(f"Error from server ({payload.get('reason') or status}): {message}")


def _one_line(e) -> str:
    text = " ".join(str(e).split())
    return text[:300] or type(e).__name__


def _tls_reason(text):
    for marker in ("certificate verify failed", "CERTIFICATE_VERIFY_FAILED", "hostname mismatch",
                   "self-signed certificate", "unable to get local issuer certificate"):
        if marker.lower() in text.lower():
            return marker.lower().replace("_", " ")
    return text.rsplit("] ", 1)[-1].split(" (_ssl")[0] if "] " in text else "handshake failed"


def _connection_reason(text):
    for marker in ("Connection refused", "Name or service not known", "No route to host",
                   "Network is unreachable", "Temporary failure in name resolution"):
        if marker.lower() in text.lower():
            return marker.lower()
    return text[:160]


def _utf8(value: str):
    """A header value as kubectl sends it: ASCII as is, anything else as its UTF-8 bytes."""
    return value if value.isascii() else value.encode("utf-8")
