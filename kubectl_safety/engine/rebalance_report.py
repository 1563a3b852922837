"""What a rebalance run returns: frozen, typed (published as JSON only at the CLI edge)."""

from typing import Optional, Tuple

from kubectl_safety.analysis.plans.rebalance import RebalancePlan, Relocation, SpreadState
from kubectl_safety.record import record


@record
class EvictionResult:
    """What became of one planned eviction: ``done``, ``gone``, ``skipped`` or why it was refused."""

    eviction: Relocation
    result: str
    status: Optional[int]
    message: str

    @property
    def went(self) -> bool:
        return self.result in ("done", "gone")


@record
class RebalanceRound:
    number: int
    evictions: Tuple[EvictionResult, ...]


@record
class RebalanceExecution:
    """The rounds a rebalance ran, and the constraints before and (measured again, with ``waited``) after."""

    rounds: Tuple[RebalanceRound, ...]
    waited: bool
    interrupted: bool
    before: Tuple[SpreadState, ...]
    last: RebalancePlan  # the plan measured last (the first plan unless measured again)

    @property
    def after(self) -> Optional[Tuple[SpreadState, ...]]:
        return self.last.constraints if self.waited else None

    def results(self) -> list:
        return [e for r in self.rounds for e in r.evictions]


@record
class ExecutedRebalance:
    """A rebalance plan and what acting on it did (published as the plan with its ``execution``)."""

    plan: RebalancePlan
    execution: RebalanceExecution
