"""kured (kubereboot/kured 1.23.0): reboots nodes one lock-holder at a time, draining each with kubectl's
drain helper.

Source: cmd/kured/main.go (flag block; ``drain``: ``kubectldrain.Helper`` with ``Force: true``,
``DeleteEmptyDirData: true``, ``IgnoreAllDaemonSets: true``, ``GracePeriodSeconds`` from
--drain-grace-period, ``PodSelector`` from --drain-pod-selector, ``Timeout`` from --drain-timeout;
``rebootAsRequired``: a drain that fails or times out releases the lock and uncordons the node it
cordoned, unless --force-reboot, which reboots anyway), pkg/daemonsetlock (--concurrency lock holders).
Its oracle is kubectl's drain with these flags (tests/integration/test_engine_kubectl_drain.py).
Settings are read from kured's DaemonSet (its container's command and args, ``--flag=value``, ``--flag value``
or a bare boolean ``--flag``, and its ``KURED_*`` environment, as the flags' viper binding reads them)
when the snapshot holds them.
"""

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.profiles.base import (AtTimeout, DrainProfile, Grace, GraceRule, Order, SettingSpec, boolean,
                                                    count, duration, integer)
from kubectl_safety.analysis.profiles.kubectl import selector

NAME = "kured"
TITLE = "kured node reboot"
SOURCES = ("kubereboot/kured 1.23.0 cmd/kured/main.go drain, rebootAsRequired", "pkg/daemonsetlock")

SETTINGS = (
    SettingSpec("drain-timeout", "0", duration, "how long a drain may take (0: for ever)"),
    SettingSpec("force-reboot", "false", boolean, "reboot when the drain fails or times out"),
    SettingSpec("drain-grace-period", "-1", integer, "seconds each pod gets (-1: its own)"),
    SettingSpec("drain-pod-selector", "", selector, "only these pods are drained; the others stay through the reboot"),
    SettingSpec("skip-wait-for-delete-timeout", "0", count, "pods deleted longer ago are not waited for"),
    SettingSpec("concurrency", "1", count, "nodes rebooting at once (lock holders)"),
)


def read(snapshot, nodes=(), given=None) -> dict:
    """{setting: (value, origin)} from kured's DaemonSet: the one whose container runs kured."""
    names = {spec.name for spec in SETTINGS}
    for w in snapshot.workloads:
        if w.kind != "DaemonSet":
            continue
        for c in (w.template.get("spec") or {}).get("containers") or []:
            words = [str(x) for x in (c.get("command") or []) + (c.get("args") or [])]
            if not (c.get("name") == "kured" or any(x.rsplit("/", 1)[-1] == "kured" for x in words)):
                continue
            origin = f"DaemonSet {w.namespace}/{w.name}"
            found = {}
            for e in c.get("env") or []:
                key = str(e.get("name") or "")
                name = key[len("KURED_"):].lower().replace("_", "-") if key.startswith("KURED_") else ""
                if name in names and "value" in e:
                    found[name] = (str(e["value"]), origin)
            found.update(_flags(words, names, origin))
            return found
    return {}


def _flags(words, names, origin) -> dict:
    """The settings among ``--flag=value``, ``--flag value`` and bare boolean ``--flag`` words."""
    booleans = {spec.name for spec in SETTINGS if spec.parse is boolean}
    found, i = {}, 0
    while i < len(words):
        word = words[i]
        name, sep, value = word.lstrip("-").partition("=")
        if word.startswith("--") and name in names:
            if not sep and name in booleans:
                value = "true"
            elif not sep and i + 1 < len(words):
                i += 1
                value = words[i]
            found[name] = (value, origin)
        i += 1
    return found


def drain_options(v) -> DrainOptions:
    """kured's fixed flags and the ones its settings set."""
    return DrainOptions(ignore_daemonsets=True, delete_emptydir_data=True, force=True,
                        grace_period=v["drain-grace-period"], pod_selector=v["drain-pod-selector"],
                        skip_wait_for_delete_timeout=v["skip-wait-for-delete-timeout"])


def profile(settings) -> DrainProfile:
    v = {name: s.value for name, s in settings.items()}
    force = v["force-reboot"]
    grace = v["drain-grace-period"]
    return DrainProfile(
        name=NAME, title=TITLE, settings=tuple(settings.values()), drain=drain_options(v),
        grace=Grace(GraceRule.FIXED, grace) if grace >= 0 else Grace(),
        timeout_seconds=v["drain-timeout"] or None,
        timeout_setting="force-reboot" if force else "drain-timeout",
        timeout_label="drain-timeout",
        at_timeout=AtTimeout.FORCE if force else AtTimeout.FAIL,
        leaves="the node uncordoned and not rebooted; kured tries again at its next period", halts=False,
        parallel=max(v["concurrency"], 1), order=Order.RANDOM, sources=SOURCES,
        notes=("each node's kured takes the lock at a random tick: the order is unknown",))
