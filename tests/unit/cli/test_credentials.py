"""Nothing prints credentials: tokens, client keys and exec-plugin tokens never reach the output.

Each scenario points a kubeconfig holding secrets at a loopback server that fails in some way
(refused, 401, 403 echoing nothing, self-signed TLS, silent) and runs read-only commands, with
and without ``KUBECTL_SAFETY_DEBUG=1``. Everything the user could see is searched: stdout,
stderr, a traceback raised in debug mode, log records and warnings.
"""

import base64
import io
import json
import logging
import traceback
import uuid
import warnings
from contextlib import redirect_stderr, redirect_stdout

import pytest

from kubectl_safety.cli.main import main
from tests.builders import kubeconfig
from tests.unit.cli.test_bad_input import servers  # noqa: F401  (fixture)
from tests.unit.loopback import self_signed

TOKEN = f"tok-{uuid.uuid4().hex}"
EXEC_TOKEN = f"exec-{uuid.uuid4().hex}"
PASSWORD = f"pw-{uuid.uuid4().hex}"
COMMANDS = [["version"], ["explain", "pod", "a"], ["explain", "priorities"],
            ["explain", "pod", "a", "-o", "json", "--as", "someone"]]


@pytest.fixture(scope="module")
def client_key(tmp_path_factory):
    """(cert PEM, key PEM) of a client certificate."""
    cert, key, pem = self_signed(tmp_path_factory.mktemp("client"), ["client"])
    return pem, key.read_bytes()


def users(client_key):
    cert, key = client_key
    exec_credential = json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                                  "status": {"token": EXEC_TOKEN}})
    return {
        "token": {"token": TOKEN},
        "client-key": {"client-certificate-data": base64.b64encode(cert).decode(),
                       "client-key-data": base64.b64encode(key).decode()},
        "token-and-key": {"token": TOKEN, "client-certificate-data": base64.b64encode(cert).decode(),
                          "client-key-data": base64.b64encode(key).decode()},
        "basic-auth": {"username": "admin", "password": PASSWORD},
        "exec-plugin": {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "/bin/sh",
                                 "args": ["-c", f"echo '{exec_credential}'"], "interactiveMode": "Never"}},
    }


def secrets(client_key) -> list:
    """Every string that must never be shown: tokens, password, the key in PEM and base64 forms."""
    key = client_key[1]
    body_lines = [line for line in key.decode().splitlines() if line and not line.startswith("-----")]
    return [TOKEN, EXEC_TOKEN, PASSWORD, base64.b64encode(key).decode()[:40], *body_lines]


def run_visible(args, debug, monkeypatch, caplog) -> str:
    """Everything a user could see from one run: stdout, stderr, a debug traceback, logs, warnings."""
    monkeypatch.setenv("KUBECTL_SAFETY_DEBUG", "1" if debug else "0")
    out, err = io.StringIO(), io.StringIO()
    shown = []
    with warnings.catch_warnings(record=True) as caught, redirect_stdout(out), redirect_stderr(err):
        warnings.simplefilter("always")
        try:
            main(list(args))
        except SystemExit:
            pass
        except Exception:  # debug mode re-raises: Python would print this traceback
            shown.append(traceback.format_exc())
    shown += [out.getvalue(), err.getvalue(), caplog.text, *(str(w.message) for w in caught)]
    return "\n".join(shown)


SERVERS = ["@REFUSED@", "@HTTP_401@", "@HTTP_403@", "@HTTP_500@", "@TLS@", "@SLOW@"]
USERS = ["token", "client-key", "basic-auth", "exec-plugin"]


@pytest.mark.parametrize("debug", [False, True], ids=["normal", "debug"])
@pytest.mark.parametrize("server", SERVERS, ids=[s.strip("@").lower() for s in SERVERS])
@pytest.mark.parametrize("user", USERS)
def test_no_credentials_in_output(user, server, debug, servers, client_key, tmp_path, monkeypatch, caplog):  # noqa: F811
    caplog.set_level(logging.DEBUG)
    path = tmp_path / "kc.yaml"
    path.write_text(kubeconfig(servers[server], users(client_key)[user]))
    for args in COMMANDS:
        visible = run_visible(args + ["--kubeconfig", str(path), "--request-timeout", "0.3s"], debug, monkeypatch,
                              caplog)
        assert visible.strip(), "the command said nothing"
        for secret in secrets(client_key):
            assert secret not in visible, f"{args}: credential shown:\n{visible[:2000]}"


def test_secret_search_would_catch_a_leak(client_key):
    """The search sees a printed token, key or base64 key."""
    key = client_key[1]
    for leaked in (f"Authorization: Bearer {TOKEN}", key.decode(), base64.b64encode(key).decode()):
        assert any(s in leaked for s in secrets(client_key)), leaked
