"""What ``delete pod`` reports: each pod's assessment and what became of it; frozen, typed (published as
JSON only at the CLI edge)."""

from enum import Enum
from typing import Mapping, Optional, Tuple

from kubectl_safety.analysis.explanations.delete import DeleteAssessment
from kubectl_safety.record import record


class DeleteAction(str, Enum):
    """What happened to a pod (or would have)."""

    REFUSED = "refused"  # a force delete without --confirm: nothing changed
    WOULD_DELETE = "wouldDelete"  # a dry run
    DELETED = "deleted"  # terminating gracefully
    FORCE_DELETED = "forceDeleted"
    ALREADY_GONE = "alreadyGone"
    FAILED = "failed"


@record
class PodDeletion:
    assessment: DeleteAssessment
    action: DeleteAction
    outcome: object = None  # the executor's Outcome of the DELETE (None: none was sent)
    event: Optional[Mapping] = None  # the ForceDeleted Event recorded: {"reason", "message", "recorded"}
    gone: Optional[bool] = None  # after waiting: whether the pod is gone (None: not waited for)


@record
class DeleteReport:
    """The pods ``delete pod`` selected, assessed, and what became of each. ``deleted``: DELETEs were sent
    for real (kind DeleteReport; otherwise, nothing changed, ForceDeleteAssessment)."""

    namespace: str  # '' with -A
    force: bool
    confirmed: bool
    dry_run: bool
    reason: Optional[str]
    pods: Tuple[PodDeletion, ...]
    deleted: bool = False

    def counts(self) -> dict:
        """{action: pods}, the actions in the order the pods first show them."""
        counts = {}
        for p in self.pods:
            counts[p.action] = counts.get(p.action, 0) + 1
        return counts
