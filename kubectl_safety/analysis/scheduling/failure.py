"""One Filter plugin's refusal of a pod on a node."""

from kubectl_safety.record import record


@record(slots=False)
class Failure:
    plugin: str       # "NodeResourcesFit", "TaintToleration", ...
    code: str         # stable kebab-case code, e.g. "insufficient-cpu"
    message: str      # upstream reason wording plus detail
    resolvable: bool  # True = Unschedulable (preemption may help); False = UnschedulableAndUnresolvable
