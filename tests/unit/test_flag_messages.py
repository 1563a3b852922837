"""A message names the flag the user gave: drain's --timeout is not --request-timeout, and a header-bound
flag (--as, --as-group, --as-uid, --token) whose value cannot be sent is a usage error naming it."""

import json

import pytest

from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli
from tests.unit.hostile_servers import hostile_server  # noqa: F401 - fixture

TOKEN = "tok-0123456789abcdef"


def kubeconfig(tmp_path, server) -> str:
    path = tmp_path / "kubeconfig.json"
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "x",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": TOKEN}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}]}))
    return str(path)


@pytest.mark.parametrize("flags, named", [
    (["--timeout", "1s"], "--timeout=1s"),
    (["--timeout", "30s", "--request-timeout", "1s"], "--request-timeout=1s"),
], ids=["timeout", "request-timeout-given-too"])
def test_drain_timeout_message_names_the_flag_given(hostile_server, tmp_path, flags, named):  # noqa: F811
    config = kubeconfig(tmp_path, f"{hostile_server}/m/drip")
    code, out, err = run_cli(["drain", "node-a1", "--dry-run", *flags, "--kubeconfig", config])
    assert code == 1 and err.endswith(f"did not answer within {named}\n"), err


def test_rebalance_invalid_timeout_names_timeout():
    code, out, err = run_cli(["rebalance", "--timeout", "abc", "--dry-run", "--snapshot", DEMO, "--as-of", DEMO_NOW])
    assert code == 2 and err.startswith("error: invalid --timeout 'abc': "), err
    assert "--request-timeout" not in err


@pytest.mark.parametrize("flags, message", [
    (["--as=ユーザー"], "--as='ユーザー' is not ASCII: the Impersonate-User header is sent in ASCII only"),
    (["--as=bob", "--as-group=system:masters", "--as-group=グループ"],
     "--as-group='グループ' is not ASCII: the Impersonate-Group header is sent in ASCII only"),
    (["--as=bob", "--as-uid=ユーザー"],
     "--as-uid='ユーザー' is not ASCII: the Impersonate-Uid header is sent in ASCII only"),
    (["--token=トークン"], "--token value is not ASCII: the Authorization header is sent in ASCII only"),
    (["--as=José"], "--as='José' is not ASCII: the Impersonate-User header is sent in ASCII only"),
], ids=["as", "as-group", "as-uid", "token", "as-latin-1"])
def test_non_latin1_as_is_a_usage_error_naming_the_flag(hostile_server, tmp_path, flags, message):  # noqa: F811
    config = kubeconfig(tmp_path, f"{hostile_server}/m/forbidden")
    code, out, err = run_cli(["explain", "pod", "a", *flags, "--kubeconfig", config])
    assert (code, out, err) == (2, "", f"error: {message}\n")
    assert "トークン" not in err
