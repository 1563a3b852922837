"""The planners' typed plans as their published JSON (``cli/published.py``): what the scenario
tables compare, field by field, as ``-o json`` prints them."""

from kubectl_safety.analysis import (check as _check, drain as _drain, preemption as _preemption, rebalance as _rebalance,
                                     rollout_plan as _rollout)
from kubectl_safety.cli.published import published


def plan_drain(*args, **kwargs) -> dict:
    return published(_drain.plan_drain(*args, **kwargs))


def check(*args, **kwargs) -> dict:
    return published(_check.check(*args, **kwargs))


def plan_rollout(*args, **kwargs) -> dict:
    return published(_rollout.plan_rollout(*args, **kwargs))


def plan_rebalance(*args, **kwargs) -> dict:
    return published(_rebalance.plan_rebalance(*args, **kwargs))


def preview(*args, **kwargs) -> dict:
    return published(_preemption.preview(*args, **kwargs))
