"""Kubeconfig resolution without the kubernetes client: what it serves, and what it leaves to the client."""

import base64
import json
import os
import stat
from dataclasses import dataclass, field

import pytest

from kubectl_safety.cluster import kubeconfig


def config(user=None, cluster=None, context=None, current="x", name="x", user_name="u", cluster_name="c") -> dict:
    cfg = {"apiVersion": "v1", "kind": "Config",
           "clusters": [{"name": cluster_name, "cluster": {"server": "https://10.0.0.1:6443/", **(cluster or {})}}],
           "users": [{"name": user_name, "user": user if user is not None else {"token": "t0k"}}],
           "contexts": [{"name": name, "context": {"cluster": cluster_name, "user": user_name, **(context or {})}}]}
    if current:
        cfg["current-context"] = current
    return cfg


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@dataclass
class Case:
    id: str
    files: dict  # file name -> config dict or text
    expect: dict = None  # Endpoint fields, or None: left to the kubernetes client
    context: str = None
    env: dict = field(default_factory=dict)
    kubeconfig_env: list = None  # file names for $KUBECONFIG (else --kubeconfig first file)


CASES = [
    Case("token", {"a": config()}, {"host": "https://10.0.0.1:6443", "authorization": "Bearer t0k"}),
    Case("token-file-relative-to-its-kubeconfig", {"a": config({"tokenFile": "tok"}), "tok": "from-file\n"},
         {"authorization": "Bearer from-file"}),
    Case("token-wins-over-token-file", {"a": config({"token": "inline", "tokenFile": "tok"}), "tok": "file"},
         {"authorization": "Bearer inline"}),
    Case("basic-auth", {"a": config({"username": "ann", "password": "pw"})},
         {"authorization": "Basic " + b64("ann:pw")}),
    Case("client-certificate-files", {"a": config({"client-certificate": "c.crt", "client-key": "c.key"}),
                                      "c.crt": "CERT", "c.key": "KEY"},
         {"cert_file": "@DIR@/c.crt", "key_file": "@DIR@/c.key", "authorization": None}),
    Case("ca-file-and-namespace", {"a": config(cluster={"certificate-authority": "ca.crt"}, context={"namespace": "shop"}),
                                   "ca.crt": "CA"}, {"ca_file": "@DIR@/ca.crt", "namespace": "shop"}),
    Case("ca-data", {"a": config(cluster={"certificate-authority-data": b64("-----BEGIN CERTIFICATE-----\nx\n")})},
         {"ca_data": "-----BEGIN CERTIFICATE-----\nx\n", "ca_file": None}),
    Case("insecure-and-tls-server-name", {"a": config(cluster={"insecure-skip-tls-verify": True,
                                                               "tls-server-name": "api.internal"})},
         {"verify": False, "tls_server_name": "api.internal"}),
    Case("plain-http-ignores-tls-fields", {"a": config(cluster={"server": "http://127.0.0.1:8080",
                                                                "certificate-authority": "missing.crt"})},
         {"host": "http://127.0.0.1:8080", "ca_file": None}),
    Case("context-flag", {"a": config(name="other", current="x")}, {"host": "https://10.0.0.1:6443"}, context="other"),
    Case("merge-first-file-wins", {"a": config({"token": "first"}, current="x"), "b": config({"token": "second"}, current="y")},
         {"authorization": "Bearer first"}, kubeconfig_env=["a", "b"]),
    Case("merge-current-context-from-a-later-file", {"a": config({"token": "first"}, current=None),
                                                      "b": config({"token": "second"}, current="x")},
         {"authorization": "Bearer first"}, kubeconfig_env=["a", "b"]),
    Case("merge-skips-missing-files", {"a": config()}, {"authorization": "Bearer t0k"}, kubeconfig_env=["none", "a"]),
    # left to the kubernetes client: plugins, proxies, and anything invalid (it words the error)
    Case("exec-plugin", {"a": config({"exec": {"command": "aws"}})}),
    Case("auth-provider", {"a": config({"auth-provider": {"name": "oidc"}})}),
    Case("proxy-url", {"a": config(cluster={"proxy-url": "http://proxy:3128"})}),
    Case("proxy-environment", {"a": config()}, env={"HTTPS_PROXY": "http://proxy:3128"}),
    Case("no-current-context", {"a": config(current=None)}),
    Case("unknown-context", {"a": config()}, context="nope"),
    Case("unknown-user", {"a": config(context={"user": "nobody"})}),
    Case("missing-ca-file", {"a": config(cluster={"certificate-authority": "none.crt"})}),
    Case("ca-data-not-pem", {"a": config(cluster={"certificate-authority-data": b64("garbage")})}),
    Case("ca-data-not-base64", {"a": config(cluster={"certificate-authority-data": "%%%"})}),
    Case("not-yaml", {"a": "clusters: [\n"}),
    Case("a-list", {"a": "- a\n- b\n"}),
    Case("no-server", {"a": config(cluster={"server": ""})}),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_resolve(case, tmp_path, monkeypatch):
    for name, content in case.files.items():
        (tmp_path / name).write_text(json.dumps(content) if isinstance(content, dict) else content)
    for var in kubeconfig.PROXY_VARIABLES:
        monkeypatch.delenv(var, raising=False)
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    path = None
    if case.kubeconfig_env:
        monkeypatch.setenv("KUBECONFIG", os.pathsep.join(str(tmp_path / n) for n in case.kubeconfig_env))
    else:
        path = str(tmp_path / "a")
    endpoint = kubeconfig.resolve(path, case.context)
    if case.expect is None:
        assert endpoint is None
        return
    assert endpoint is not None
    for key, value in case.expect.items():
        if isinstance(value, str):
            value = value.replace("@DIR@", str(tmp_path))
        assert getattr(endpoint, key) == value, key


def test_inline_client_certificate_goes_to_a_private_file(tmp_path):
    path = tmp_path / "a"
    path.write_text(json.dumps(config({"client-certificate-data": b64("CERT"), "client-key-data": b64("KEY")})))
    endpoint = kubeconfig.resolve(str(path))
    for file, content in ((endpoint.cert_file, "CERT"), (endpoint.key_file, "KEY")):
        assert open(file).read() == content
        assert stat.S_IMODE(os.stat(file).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(os.path.dirname(file)).st_mode) == 0o700


def test_default_location_is_used_without_flag_or_environment(tmp_path, monkeypatch):
    (tmp_path / ".kube").mkdir()
    (tmp_path / ".kube" / "config").write_text(json.dumps(config({"token": "home"})))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    assert kubeconfig.resolve().authorization == "Bearer home"
