"""One Filter plugin's refusal of a pod on a node."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Failure:
    plugin: str       # "NodeResourcesFit", "TaintToleration", ...
    code: str         # stable kebab-case code, e.g. "insufficient-cpu"
    message: str      # upstream reason wording plus detail
    resolvable: bool  # True = Unschedulable (preemption may help); False = UnschedulableAndUnresolvable
