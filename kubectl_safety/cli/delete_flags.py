"""What ``delete pod``'s flags mean together, as kubectl reads them: the dry-run mode, the grace period,
the combinations refused, and why nothing may be changed."""

from kubectl_safety.errors import RefusedError, UsageError


def dry_run_value(ctx, param, value):
    """kubectl's ``--dry-run[=none|client|server]`` (bare: client); a following word that is no mode is a NAME."""
    if value in ("none", "client", "server"):
        return value
    ctx.meta["delete.name_after_dry_run"] = value
    return "client"


def grace_period_of(grace_period, now, force):
    """kubectl's rules: --now is 1 s; 0 without --force is 1 s; --force alone is 0; -1 is the pod's own."""
    if now:
        if grace_period is not None:
            raise UsageError("--now and --grace-period cannot be specified together")
        return 1
    if grace_period == -1:
        grace_period = None
    if grace_period == 0 and not force:
        return 1  # as kubectl: only --force bypasses this conversion
    if force and grace_period is None:
        return 0
    return grace_period


def check_flags(names, selector, grace_period, force, timeout, all_namespaces, field_selector=None, all_pods=False):
    if names and (selector or field_selector or all_pods):
        raise UsageError("give pod NAMEs or -l/--field-selector/--all, not both")
    if not names and not selector and not field_selector and not all_pods:
        raise UsageError("give at least one pod NAME, -l SELECTOR, --field-selector SELECTOR or --all")
    if all_pods and (selector or field_selector):
        raise UsageError("--all cannot be used with -l or --field-selector")
    if field_selector:
        from kubectl_safety.model.field_selector import FieldSelectorError, parse

        try:
            parse(field_selector)
        except FieldSelectorError as e:
            raise UsageError(f"--field-selector={field_selector}: {e}") from None
    if names and all_namespaces:
        raise UsageError("a resource cannot be retrieved by name across all namespaces: use -n NAMESPACE")
    if force and grace_period:
        raise UsageError("--force deletes with grace period 0: drop --grace-period, "
                         "or drop --force for a graceful delete")
    if timeout:
        from kubectl_safety.model.duration import flag_seconds

        flag_seconds(timeout, "--timeout")


def refusal(force, confirm, dry_run, offline):
    """Why nothing may be changed (the error to raise), or None. Force without --confirm is refused in
    every mode."""
    if force and not confirm:
        return RefusedError("refused: force deletion needs --confirm (nothing was changed); "
                            "review the assessment above")
    if offline and dry_run != "client":
        return UsageError("delete needs a live cluster: --snapshot files can only be assessed (add --dry-run)")
    return None
