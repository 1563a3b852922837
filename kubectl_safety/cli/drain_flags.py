"""kubectl drain's flags, declared once for drain, rollout and check (same names, defaults and help),
and the one builder of the ``DrainOptions`` they plan with."""

import click

from kubectl_safety.errors import UsageError

FLAGS = {
    "ignore_daemonsets": click.option("--ignore-daemonsets", is_flag=True, help="Skip DaemonSet-managed pods."),
    "delete_emptydir_data": click.option("--delete-emptydir-data", is_flag=True,
                                         help="Evict pods using emptyDir (data lost)."),
    "force": click.option("--force", is_flag=True,
                          help="Also evict pods without a controller (they are not recreated)."),
    "grace_period": click.option("--grace-period", type=int, default=-1, show_default=True, metavar="SECONDS",
                                 help="Grace period for each pod (negative: the pod's own)."),
    "skip_wait_for_delete_timeout": click.option(
        "--skip-wait-for-delete-timeout", type=int, default=0, show_default=True, metavar="SECONDS",
        help="Skip pods terminating for longer than this (0: never skip)."),
    "pod_selector": click.option("--pod-selector", default="", metavar="SELECTOR",
                                 help="Only pods matching this label selector."),
    "disable_eviction": click.option("--disable-eviction", is_flag=True,
                                     help="Delete instead of evicting: bypasses PodDisruptionBudgets."),
    "no_capacity": click.option("--no-capacity", is_flag=True,
                                help="Skip the capacity check (not the budgets)."),
    "accept_risk": click.option("--accept-risk", "accept_risk", multiple=True, metavar="CODE[,CODE]",
                                help="Go ahead despite these risks (codes of risks[] or aliases such as "
                                     "unplaceable; they stay listed); repeatable."),
    "order": click.option("--order", type=click.Choice(["default", "priority"]), default="default",
                          show_default=True, help="priority: lowest priority first, level by level."),
    "surge": click.option("--surge", is_flag=True, help="Replace pods first (make before break)."),
    "surge_limit": click.option("--surge-limit", default="", metavar="N|N%",
                                help="With --surge: extra pods per workload."),
    "wait_completed": click.option("--wait-completed", is_flag=True, help="Wait for Job pods to complete."),
    "yes": click.option("--yes", "-y", is_flag=True,
                        help="Do not ask for confirmation (required when stdin is not a terminal)."),
}
KUBECTL = ("ignore_daemonsets", "delete_emptydir_data", "force", "grace_period", "skip_wait_for_delete_timeout")
ACTING = ("no_capacity", "accept_risk", "order", "yes")  # drain and rollout: they act
SURGE = ("surge", "surge_limit", "wait_completed")  # drain, rollout and check


def drain_flags(*names):
    """A decorator adding the flags ``names`` (keys of ``FLAGS``), in that order."""
    def decorate(f):
        for name in reversed(names):
            f = FLAGS[name](f)
        return f
    return decorate


def dry_run_value(ctx, param, value):
    """kubectl's bare ``--dry-run`` is client; a following word that is no mode is a node name."""
    if value in ("none", "client", "server"):
        return value
    ctx.meta["node_after_dry_run"] = value
    return "client"


def selector(text, flag):
    """The label selector given to ``flag`` (None when empty)."""
    from kubectl_safety.model.selectors import LabelSelector

    try:
        return LabelSelector.from_string(text) if text else None
    except Exception:
        raise UsageError(f"{flag}={text} must be a valid label selector") from None


def surge_limit(text):
    """--surge-limit: extra pods per workload, a number or a percentage of its replicas (None: no bound)."""
    text = (text or "").strip()
    if not text:
        return None
    number = text[:-1] if text.endswith("%") else text
    if not number.isdigit():
        raise UsageError(f"--surge-limit={text}: use a number of pods or a percentage such as 25%")
    return text if text.endswith("%") else int(text)


def build_drain_options(params, timeout=0.0):
    """The ``DrainOptions`` of a command's parsed flags (``params``: its click parameters; a flag the
    command does not take keeps kubectl drain's default); ``timeout``: --timeout in seconds."""
    from kubectl_safety.analysis.drain import DrainOptions
    from kubectl_safety.cli.risks import accepted_risks

    accepted = accepted_risks(params.get("accept_risk"))
    limit = surge_limit(params.get("surge_limit"))
    if limit is not None and not params.get("surge"):
        raise UsageError("--surge-limit needs --surge")
    return DrainOptions(ignore_daemonsets=params.get("ignore_daemonsets", False),
                        delete_emptydir_data=params.get("delete_emptydir_data", False),
                        force=params.get("force", False), grace_period=params.get("grace_period", -1),
                        disable_eviction=params.get("disable_eviction", False),
                        skip_wait_for_delete_timeout=params.get("skip_wait_for_delete_timeout", 0),
                        pod_selector=selector(params.get("pod_selector"), "--pod-selector"),
                        check_capacity=not params.get("no_capacity", False), timeout=timeout,
                        accept_risks=accepted, surge=params.get("surge", False), surge_limit=limit,
                        wait_completed=params.get("wait_completed", False))

