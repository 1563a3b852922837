"""Kubeconfig resolution for plain credentials, without importing the kubernetes client.

Importing the kubernetes client costs ~0.4 s (hundreds of model modules), several times what a
node-scoped command needs in all. Kubeconfigs whose user holds a token, a token file, a client
certificate or a username/password (the common case on local and most managed clusters) are
resolved here; anything else (exec and auth-provider plugins, proxies, invalid files) returns
``None`` and the kubernetes client handles it, with its own checks and messages.

Rules as kubectl and the Python client apply them: files of ``KUBECONFIG`` are merged, the first
file defining a name (or ``current-context``) wins; relative paths are relative to the file that
names them; inline ``*-data`` wins over the file; ``token`` wins over ``tokenFile``.
"""

import base64
import os
from dataclasses import dataclass, field

PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


@dataclass
class Endpoint:
    """Where the API server is and how to authenticate: enough for a urllib3 pool."""

    host: str
    namespace: str = None
    verify: bool = True
    ca_file: str = None
    ca_data: str = None  # PEM text
    cert_file: str = None
    key_file: str = None
    tls_server_name: str = None
    authorization: str = field(default=None, repr=False)  # the Authorization header value


def kubeconfig_paths(path=None) -> list:
    """The files to merge: ``--kubeconfig``, else ``$KUBECONFIG`` (existing ones), else ``~/.kube/config``."""
    if path:
        return [path]
    env = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    if env:
        return [p for p in env if os.path.exists(p)]
    default = os.path.expanduser("~/.kube/config")
    return [default] if os.path.exists(default) else []


def resolve(path=None, context=None, overrides=None):
    """The ``Endpoint`` of the chosen context, or None when the kubernetes client must decide.

    ``overrides``: kubectl's connection flags (``cluster user server token certificate_authority
    client_certificate client_key tls_server_name insecure_skip_tls_verify``), applied after the
    context is resolved, as kubectl's ConfigOverrides are.
    """
    if any(os.environ.get(v) for v in PROXY_VARIABLES):
        return None
    import yaml

    try:
        merged = _merge(kubeconfig_paths(path))
        if overrides:
            return _overridden(merged, context, overrides)
        return _endpoint(merged, context) if merged else None
    except (OSError, ValueError, TypeError, KeyError, AttributeError, yaml.YAMLError):
        return None  # the kubernetes client reports what is wrong


def _merge(paths):
    """Named entries (first definition wins, with the file it came from) and current-context."""
    import yaml

    if not paths:
        return None
    merged = {"clusters": {}, "users": {}, "contexts": {}, "current-context": None}
    for p in paths:
        with open(p, "rb") as f:
            doc = yaml.safe_load(f)
        if not isinstance(doc, dict):
            return None
        base = os.path.dirname(os.path.abspath(p))
        for section, key in (("clusters", "cluster"), ("users", "user"), ("contexts", "context")):
            for entry in doc.get(section) or []:
                name = entry["name"]
                if name not in merged[section]:
                    merged[section][name] = (entry.get(key) or {}, base)
        if not merged["current-context"] and doc.get("current-context"):
            merged["current-context"] = doc["current-context"]
    return merged


# -- kubectl's connection flags (ConfigOverrides) ---------------------------------------------------

class OverrideError(Exception):
    """A connection flag names something the kubeconfig does not define (one line for the user)."""


def _overridden(merged, context, o):
    """The context with ``--cluster``/``--user`` swapped in, then the other flags on top."""
    merged = merged or {"clusters": {}, "users": {}, "contexts": {}, "current-context": None}
    for section, key in (("clusters", "cluster"), ("users", "user")):
        if o.get(key) and o[key] not in merged[section]:
            raise OverrideError(f'{key} "{o[key]}" (--{key}) is not defined in the kubeconfig')
    name = context or merged["current-context"]
    ctx, base = merged["contexts"].get(name, ({}, "")) if name else ({}, "")
    ctx = dict(ctx, **{k: o[k] for k in ("cluster", "user") if o.get(k)})
    cluster = dict(merged["clusters"].get(ctx.get("cluster"), ({}, ""))[0])
    user = dict(merged["users"].get(ctx.get("user"), ({}, ""))[0])
    if o.get("server"):
        cluster["server"] = o["server"]
    if o.get("certificate_authority"):
        cluster.pop("certificate-authority-data", None)
        cluster["certificate-authority"] = os.path.abspath(o["certificate_authority"])
    if o.get("tls_server_name"):
        cluster["tls-server-name"] = o["tls_server_name"]
    if o.get("insecure_skip_tls_verify"):
        cluster["insecure-skip-tls-verify"] = True
    for flag, key in (("client_certificate", "client-certificate"), ("client_key", "client-key")):
        if o.get(flag):
            user.pop(key + "-data", None)
            user[key] = os.path.abspath(o[flag])
    if o.get("token"):
        user = {k: v for k, v in user.items() if k not in ("tokenFile", "exec", "auth-provider", "username", "password")}
        user["token"] = o["token"]
    one = {"clusters": {"c": (cluster, merged["clusters"].get(ctx.get("cluster"), ({}, ""))[1])},
           "users": {"u": (user, merged["users"].get(ctx.get("user"), ({}, ""))[1])},
           "contexts": {"x": ({"cluster": "c", "user": "u", "namespace": ctx.get("namespace")}, base)},
           "current-context": "x"}
    return _endpoint(one, "x")


def _endpoint(merged, context):
    name = context or merged["current-context"]
    if not name or name not in merged["contexts"]:
        return None
    ctx, _ = merged["contexts"][name]
    if ctx.get("cluster") not in merged["clusters"] or (ctx.get("user") and ctx["user"] not in merged["users"]):
        return None
    cluster, cluster_base = merged["clusters"][ctx["cluster"]]
    user, user_base = merged["users"].get(ctx.get("user"), ({}, ""))
    if user.get("exec") or user.get("auth-provider") or cluster.get("proxy-url") or not cluster.get("server"):
        return None
    host = cluster["server"].rstrip("/")
    ep = Endpoint(host=host, namespace=ctx.get("namespace") or None,
                  verify=not cluster.get("insecure-skip-tls-verify", False),
                  tls_server_name=cluster.get("tls-server-name"))
    if host.startswith("https"):
        ep.ca_data = _data(cluster, "certificate-authority-data")
        if ep.ca_data and "-----BEGIN CERTIFICATE-----" not in ep.ca_data:
            return None
        ep.ca_file = None if ep.ca_data else _file(cluster, "certificate-authority", cluster_base)
        ep.cert_file = _file_or_data(user, "client-certificate", user_base)
        ep.key_file = _file_or_data(user, "client-key", user_base)
    token = user.get("token")
    if not token and user.get("tokenFile"):
        with open(_file(user, "tokenFile", user_base)) as f:
            token = f.read().strip()
    if token:
        ep.authorization = f"Bearer {token}"
    elif "username" in user and "password" in user:
        basic = base64.b64encode(f"{user['username']}:{user['password']}".encode()).decode()
        ep.authorization = f"Basic {basic}"
    return ep


def _data(section, key):
    value = section.get(key)
    return base64.b64decode(value, validate=True).decode() if value else None


def _file(section, key, base):
    value = section.get(key)
    if not value:
        return None
    path = value if os.path.isabs(value) else os.path.join(base, value)
    if not os.path.exists(path):
        raise OSError(f"{path}: no such file")  # the client reports it
    return path


def _file_or_data(section, key, base):
    """A path for a certificate or key: inline data goes to a private file removed at exit."""
    data = section.get(key + "-data")
    if not data:
        return _file(section, key, base)
    import tempfile

    content = base64.b64decode(data, validate=True)
    fd, path = tempfile.mkstemp(dir=_private_dir(), suffix=".pem")  # mode 0600
    with os.fdopen(fd, "wb") as f:
        f.write(content)
    return path


_PRIVATE = []


def _private_dir():
    if not _PRIVATE:
        import atexit
        import shutil
        import tempfile

        _PRIVATE.append(tempfile.mkdtemp(prefix="kubectl-safety-"))  # mode 0700
        atexit.register(shutil.rmtree, _PRIVATE[0], True)
    return _PRIVATE[0]

