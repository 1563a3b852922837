#!/usr/bin/env bash
# Maintain a node pool with kubectl-safety: the plan first, then the rollout; run again to resume.
#
# Usage: examples/rollout-pool.sh SELECTOR [extra `kubectl safety rollout` flags...]
#   examples/rollout-pool.sh cloud.google.com/gke-nodepool=blue
#   examples/rollout-pool.sh pool=blue --exec './patch-and-reboot.sh "$NODE"' --wait-for boot-id
#   KUBE_CONTEXT=prod MAX_UNAVAILABLE=25% examples/rollout-pool.sh pool=blue --by-zone
#
# The plan (--dry-run) must be SAFE (exit 0) or nothing is touched (exit 3). Then the rollout
# cordons the pool, and batch by batch drains, runs the maintenance, waits for the nodes to be
# Ready, uncordons them and waits for the health gate. Its progress lives in the cluster (node
# annotations, a Lease): after exit 4 (a batch blocked, a node not back, a failed health gate)
# or 130 (Ctrl-C), fix the cause and run the same command again: it continues where it stopped.
# Environment: KUBE_CONTEXT (kubeconfig context), MAX_UNAVAILABLE (default 1), TIMEOUT (each
# batch's drain, default 15m), GATE_TIMEOUT (health gate, default 10m), KUBECTL_SAFETY (the
# command, default "kubectl safety"). Drain flags: drain-flags.sh, shared with pool-gate.sh.
# Exit codes: those of `kubectl safety rollout`, each with its own message: 0 done, 1 error,
# 2 usage, 3 not safe or held by another rollout (nothing changed), 4 stopped part way,
# 5 declined, 130 interrupted.
set -uo pipefail

selector=${1:?usage: rollout-pool.sh SELECTOR [kubectl safety rollout flags...]}
shift
read -r -a safety <<< "${KUBECTL_SAFETY:-kubectl safety}"
source "$(dirname "${BASH_SOURCE[0]}")/drain-flags.sh"
context=(${KUBE_CONTEXT:+--context "$KUBE_CONTEXT"})
flags=(-l "$selector" "${DRAIN_FLAGS[@]}" --max-unavailable "${MAX_UNAVAILABLE:-1}"
       --timeout "${TIMEOUT:-15m}" --gate-timeout "${GATE_TIMEOUT:-10m}" "${context[@]}" "$@")

echo "== plan" >&2
"${safety[@]}" rollout "${flags[@]}" --dry-run
rc=$?
case $rc in
    0) ;;
    1) echo "== the plan failed (see the error above); nothing was changed" >&2; exit 1 ;;
    2) echo "== usage: check the selector and flags; nothing was changed" >&2; exit 2 ;;
    3) echo "== not safe: nothing was changed (see the risks; --accept-risk=CODE to go ahead)" >&2; exit 3 ;;
    4|5) echo "== unexpected exit $rc from a dry run; nothing was changed" >&2; exit "$rc" ;;
    130) echo "== interrupted; nothing was changed" >&2; exit 130 ;;
    *) exit "$rc" ;;
esac

echo "== rollout" >&2
"${safety[@]}" rollout "${flags[@]}" --yes
rc=$?
case $rc in
    0) echo "== every node of $selector maintained and back" >&2 ;;
    1) echo "== error (see above); progress is kept: fix it and run the same command again" >&2 ;;
    2) echo "== usage: nothing was changed" >&2 ;;
    3) echo "== refused (another rollout holds the pool, or the plan is no longer safe); nothing was changed" >&2 ;;
    4|130) echo "== stopped part way; progress is kept: run the same command again to resume" >&2 ;;
    5) echo "== declined at the question; nothing was changed" >&2 ;;
esac
exit "$rc"
