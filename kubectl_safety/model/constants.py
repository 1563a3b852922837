"""Names and numbers fixed by Kubernetes or by our published output, defined once."""

# apiVersion of every report kubectl-safety prints (the schemas in kubectl_safety/schemas/)
API_VERSION = "safety.kubectl.io/v1"

# scheduling.SystemCriticalPriority: the built-in classes start here; pods at or above it are system-critical
SYSTEM_CRITICAL = 2_000_000_000
SYSTEM_CLASSES = {"system-cluster-critical": SYSTEM_CRITICAL, "system-node-critical": SYSTEM_CRITICAL + 1000}

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
# Built-in workload kinds without a scale subresource, by (kind, group), with their resource: the disruption
# controller's finders get no scale for them.
NO_SCALE = {("DaemonSet", "apps"): "daemonsets.apps", ("Job", "batch"): "jobs.batch",
            ("CronJob", "batch"): "cronjobs.batch"}
NO_SCALE_KINDS = tuple(kind for kind, _ in NO_SCALE)
