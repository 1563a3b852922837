#!/usr/bin/env bash
# A pre-maintenance gate for a node pool, for CI or a runbook step: is the pool ready (check -l),
# can its rollout complete (rollout --dry-run), and if not, what blocks it. Reads the reports with
# -o jsonpath: no jq needed.
#
# Usage: examples/pool-gate.sh SELECTOR [global flags...]
#   examples/pool-gate.sh pool=blue
#   examples/pool-gate.sh topology.kubernetes.io/zone=eu-west-1a --snapshot cluster.json --as-of 2026-11-22T09:00:00Z
# Environment: KUBECTL_SAFETY (the command, default "kubectl safety"). Drain flags: drain-flags.sh.
# Exit codes: 0 the pool can be maintained now (check READY and the plan SAFE), 3 not now (what
# blocks it is printed; nothing was changed), 1 error, 2 usage, 130 interrupted: those of
# kubectl safety (4 and 5 come only from acting: a dry run that returns them is passed on as an error).
set -uo pipefail

selector=${1:?usage: pool-gate.sh SELECTOR [global flags...]}
shift
read -r -a safety <<< "${KUBECTL_SAFETY:-kubectl safety}"
# the runbook's drain flags, shared with rollout-pool.sh: the gate judges the drain the rollout runs
source "$(dirname "${BASH_SOURCE[0]}")/drain-flags.sh"
drain=("${DRAIN_FLAGS[@]}")
verdict=0

echo "== gate: kubectl safety check -l $selector" >&2
"${safety[@]}" check -l "$selector" "${drain[@]}" "$@" > /dev/null
rc=$?
case $rc in
    0) echo "ready: every node of the pool can be drained now, no finding at --fail-on" ;;
    3) verdict=3
       echo "not ready; what blocks the pool:"
       blockers='{range .blockers[*]}  {.object.kind}/{.object.name} blocks {.blocks} node(s): {.codes[*]}{"\n"}{end}'
       findings='{range .findings[*]}  finding {.severity} {.code}{"\n"}{end}'
       "${safety[@]}" check -l "$selector" "${drain[@]}" "$@" -o jsonpath="$blockers$findings" ;;
    1|2) echo "error: check failed (exit $rc)" >&2; exit "$rc" ;;
    4|5) echo "error: check cannot exit $rc (it changes nothing)" >&2; exit 1 ;;
    130) echo "interrupted" >&2; exit 130 ;;
    *) echo "error: check failed (exit $rc)" >&2; exit "$rc" ;;
esac

echo "== plan: kubectl safety rollout -l $selector --dry-run" >&2
"${safety[@]}" rollout -l "$selector" "${drain[@]}" --dry-run "$@" > /dev/null
rc=$?
case $rc in
    0) echo "plan: SAFE, every batch can complete" ;;
    3) verdict=3
       left=$("${safety[@]}" rollout -l "$selector" "${drain[@]}" --dry-run "$@" -o jsonpath='{.leftNodes[*]}')
       cause=$("${safety[@]}" rollout -l "$selector" "${drain[@]}" --dry-run "$@" -o jsonpath='{.causes[*].code}')
       echo "plan: NOT SAFE; nodes left: ${left:-none}"
       if [ "$cause" = PRECORDON ]; then
           echo "cause: pre-cordoning the pool; the plan without it:"
           "${safety[@]}" rollout -l "$selector" "${drain[@]}" --dry-run --no-precordon "$@" > /dev/null
           case $? in
               0) echo "  SAFE with --no-precordon" ;;
               3) echo "  still NOT SAFE with --no-precordon" ;;
               *) echo "error: the plan without pre-cordon failed" >&2; exit 1 ;;
           esac
       fi ;;
    1|2) echo "error: the plan failed (exit $rc)" >&2; exit "$rc" ;;
    4|5) echo "error: a dry run cannot exit $rc (it changes nothing)" >&2; exit 1 ;;
    130) echo "interrupted" >&2; exit 130 ;;
    *) echo "error: the plan failed (exit $rc)" >&2; exit "$rc" ;;
esac
exit "$verdict"
