"""A message names the flag the user gave: drain's --timeout is not --request-timeout; a --token that is
not ASCII is a usage error naming it; impersonation goes out as UTF-8, as kubectl sends it."""

import pytest

from tests.builders import write_kubeconfig
from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli
from tests.unit.hostile_servers import hostile_server  # noqa: F401 - fixture

TOKEN = "tok-0123456789abcdef"


@pytest.mark.parametrize("flags, named", [
    (["--timeout", "1s"], "--timeout=1s"),
    (["--timeout", "30s", "--request-timeout", "1s"], "--request-timeout=1s"),
], ids=["timeout", "request-timeout-given-too"])
def test_drain_timeout_message_names_the_flag_given(hostile_server, tmp_path, flags, named):  # noqa: F811
    config = write_kubeconfig(tmp_path / "kubeconfig.json", f"{hostile_server}/m/drip", token=TOKEN)
    code, out, err = run_cli(["drain", "node-a1", "--dry-run", *flags, "--kubeconfig", config])
    assert code == 1 and err.endswith(f"did not answer within {named}\n"), err


def test_rebalance_invalid_timeout_names_timeout():
    code, out, err = run_cli(["rebalance", "--timeout", "abc", "--dry-run", "--snapshot", DEMO, "--as-of", DEMO_NOW])
    assert code == 2 and err.startswith("error: invalid --timeout 'abc': "), err
    assert "--request-timeout" not in err


def test_a_token_that_is_not_ascii_is_a_usage_error_naming_the_flag(hostile_server, tmp_path):  # noqa: F811
    config = write_kubeconfig(tmp_path / "kubeconfig.json", f"{hostile_server}/m/forbidden", token=TOKEN)
    code, out, err = run_cli(["explain", "pod", "a", "--token=トークン", "--kubeconfig", config])
    assert (code, out, err) == (2, "", "error: --token value is not ASCII: the Authorization header is sent in ASCII only\n")


@pytest.mark.parametrize("flags, header, sent", [
    (["--as=ユーザー"], "Impersonate-User", "ユーザー"),
    (["--as=bob", "--as-group=system:masters", "--as-group=グループ"], "Impersonate-Group", "グループ"),
    (["--as=bob", "--as-uid=ユーザー"], "Impersonate-Uid", "ユーザー"),
    (["--as=José"], "Impersonate-User", "José"),
], ids=["as", "as-group", "as-uid", "as-latin-1"])
def test_impersonation_that_is_not_ascii_is_sent_as_utf8_like_kubectl(flags, header, sent):
    from kubectl_safety.cluster.live import Connection

    values = [v for name, v in Connection._headers(_Impersonating(flags), _NoAuth()) if name == header]
    assert sent.encode("utf-8") in values


class _NoAuth:
    @staticmethod
    def auth_headers():
        return {}


class _Impersonating:
    """The fields Connection._headers reads, from --as/--as-group/--as-uid flags."""

    def __init__(self, flags):
        given = [f.split("=", 1) for f in flags]
        self.user_agent = "test"
        self.as_user = next((v for f, v in given if f == "--as"), None)
        self.as_uid = next((v for f, v in given if f == "--as-uid"), None)
        self.as_groups = tuple(v for f, v in given if f == "--as-group")
