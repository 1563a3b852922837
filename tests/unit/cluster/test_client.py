"""cluster/client.py: every answer read once (``Result``), the conflict loop in one place, and the
kubeconfig user of a context (the force-delete Event's 'who')."""

import pytest
import yaml

from kubectl_safety.cluster.client import Client, Result
from kubectl_safety.cluster.kubeconfig import context_user
from kubectl_safety.errors import ClusterError


class Answers:
    """A connection answering each request from a list of (status, payload); ClusterError: no answer."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.sent = []

    def request(self, method, path, *, query=None, body=None):
        self.sent.append((method, path, body))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


@pytest.mark.parametrize("status,payload,result", [
    (200, {}, Result.DONE),
    (201, {"kind": "Status", "status": "Failure", "code": 500,
           "message": "Cannot evict pod as it would violate the pod's disruption budget."}, Result.ERROR),
    (500, {"kind": "Status", "status": "Failure",
           "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."},
     Result.MULTIPLE_PDBS),
    (429, {"details": {"causes": [{"reason": "DisruptionBudget"}]}}, Result.PDB_BLOCKED),
    (429, {}, Result.THROTTLED),
    (403, {}, Result.FORBIDDEN),
    (404, {}, Result.NOT_FOUND),
    (409, {}, Result.CONFLICT),
    (503, {}, Result.UNAVAILABLE),
    (422, {}, Result.ERROR),
])
def test_each_answer_has_one_result(status, payload, result):
    outcome = Client(Answers((status, payload))).get("pods", "ns", "p")
    assert outcome.result is result and outcome.status == status and f"{outcome.result}" == result.value


def test_no_answer_is_unavailable_and_raises_only_when_asked():
    outcome = Client(Answers(ClusterError("unable to connect to the server x"))).get("leases", "ns", "l")
    assert outcome.result is Result.UNAVAILABLE and outcome.status is None
    with pytest.raises(ClusterError, match="unable to connect"):
        outcome.raise_unanswered()


def test_a_patch_that_conflicts_is_built_again_from_the_object_read_again():
    conn = Answers((200, {"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 2}}), (409, {}),
                   (200, {"metadata": {"resourceVersion": "2"}, "spec": {"replicas": 3}}),
                   (200, {"metadata": {"resourceVersion": "3"}, "spec": {"replicas": 4}}))
    outcome, sent = Client(conn).patch_checked("deployments", "ns", "d",
                                               lambda o: {"spec": {"replicas": o["spec"]["replicas"] + 1}})
    assert outcome.done and outcome.body["spec"]["replicas"] == 4
    assert sent == {"spec": {"replicas": 4}, "metadata": {"resourceVersion": "2"}}
    assert [m for m, _, _ in conn.sent] == ["GET", "PATCH", "GET", "PATCH"]


def test_a_patch_that_keeps_conflicting_ends_as_a_conflict():
    conn = Answers(*[(200, {"metadata": {"resourceVersion": "1"}}), (409, {})] * 2)
    outcome, sent = Client(conn).patch_checked("nodes", None, "n", lambda o: {"spec": {}}, retries=2)
    assert outcome.result is Result.CONFLICT and sent is None


def test_a_patch_of_an_object_that_cannot_be_read_says_so_without_patching():
    conn = Answers((404, {"message": "not found"}))
    outcome, sent = Client(conn).patch_checked("nodes", None, "n", lambda o: {"spec": {}})
    assert outcome.result is Result.NOT_FOUND and outcome.action == "get" and len(conn.sent) == 1


@pytest.mark.parametrize("context,user", [(None, "alice"), ("other", "bob"), ("missing", "alice")])
def test_the_user_of_a_context_comes_from_the_kubeconfig(tmp_path, context, user):
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "main",
        "clusters": [{"name": "c", "cluster": {"server": "https://x"}}],
        "users": [{"name": "alice", "user": {}}, {"name": "bob", "user": {}}],
        "contexts": [{"name": "main", "context": {"cluster": "c", "user": "alice"}},
                     {"name": "other", "context": {"cluster": "c", "user": "bob"}}]}))
    assert context_user(str(path), context) == user


def test_without_a_kubeconfig_there_is_no_user(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    assert context_user(None, None) is None
