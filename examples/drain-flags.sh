# The drain flags of the runbook, declared once: examples/pool-gate.sh checks and plans with them and
# examples/rollout-pool.sh plans and rolls out with them, so the gate and the rollout judge the same drain.
# kubectl drain's defaults block on DaemonSet pods and emptyDir data; a pool runbook lets both go.
# shellcheck disable=SC2034  # read by the scripts that source this file
DRAIN_FLAGS=(--ignore-daemonsets --delete-emptydir-data)
