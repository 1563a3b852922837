"""kubectl drain: the default profile; drain's own flags are its settings.

Source: k8s.io/kubectl v0.36.3 pkg/cmd/drain/drain.go (``RunDrain``: nodes cordoned, then drained one
after another, the first that fails stops the command; ``--timeout`` 0 waits for ever) and pkg/drain
(``makeFilters``, ``evictPods``). The plan drains the named nodes together, as ``drain --dry-run`` does.
"""

from dataclasses import replace

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.profiles.base import (AtTimeout, Budgets, DrainProfile, Grace, GraceRule, Order, SettingError,
                                                    SettingSpec, boolean, duration, integer)

NAME = "kubectl"
TITLE = "kubectl drain"
SOURCES = ("k8s.io/kubectl v0.36.3 pkg/cmd/drain/drain.go RunDrain", "k8s.io/kubectl v0.36.3 pkg/drain/filters.go makeFilters")


def selector(value):
    """A label selector as --pod-selector takes it (None when empty)."""
    from kubectl_safety.model.selectors import LabelSelector

    try:
        return LabelSelector.from_string(value) if value else None
    except Exception:
        raise SettingError("not a valid label selector") from None


SETTINGS = (
    SettingSpec("ignore-daemonsets", "false", boolean, "DaemonSet pods are left in place instead of refusing the node"),
    SettingSpec("delete-emptydir-data", "false", boolean, "pods with emptyDir volumes are evicted (their data lost)"),
    SettingSpec("force", "false", boolean, "pods without a controller are deleted"),
    SettingSpec("grace-period", "-1", integer, "seconds each pod gets (-1: its own)"),
    SettingSpec("disable-eviction", "false", boolean, "delete instead of evict: PDBs bypassed"),
    SettingSpec("timeout", "0s", duration, "how long the drain waits before giving up (0: for ever)"),
    SettingSpec("pod-selector", "", selector, "only the pods this label selector matches are drained"),
    SettingSpec("skip-wait-for-delete-timeout", "0", integer, "pods deleted longer ago than this are not waited for"),
)
DRAIN_FLAGS = {"ignore_daemonsets": "ignore-daemonsets", "delete_emptydir_data": "delete-emptydir-data",
               "force": "force", "grace_period": "grace-period", "disable_eviction": "disable-eviction",
               "timeout": "timeout", "pod_selector": "pod-selector",
               "skip_wait_for_delete_timeout": "skip-wait-for-delete-timeout"}  # drain's flags: {parameter: setting}


def options(settings, base=DrainOptions()) -> DrainOptions:
    """The ``DrainOptions`` these settings (kubectl drain's flags by name) amount to, over ``base``."""
    v = {name: s.value for name, s in settings.items()}
    return replace(base, ignore_daemonsets=v["ignore-daemonsets"], delete_emptydir_data=v["delete-emptydir-data"],
                   force=v["force"], grace_period=v["grace-period"], disable_eviction=v["disable-eviction"],
                   pod_selector=v["pod-selector"],
                   skip_wait_for_delete_timeout=v["skip-wait-for-delete-timeout"])


def profile(settings) -> DrainProfile:
    drain = options(settings)
    timeout = settings["timeout"].value or None
    return DrainProfile(
        name=NAME, title=TITLE, settings=tuple(settings.values()), drain=drain,
        budgets=Budgets.BYPASS if drain.disable_eviction else Budgets.HONOUR,
        grace=Grace(GraceRule.FIXED, drain.grace_period) if drain.grace_period >= 0 else Grace(),
        timeout_seconds=timeout, timeout_setting="timeout", at_timeout=AtTimeout.FAIL,
        leaves="the node cordoned; the nodes after it are not drained", halts=True, parallel=0, order=Order.GIVEN,
        sources=SOURCES)
