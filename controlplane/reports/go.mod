// Pinned module: the report CRDs the tests install (no Go is built from it). The OpenReports CRDs
// come from reports-api (config/crd/); the wgpolicyk8s.io/v1alpha2 PolicyReport CRDs from the
// Kyverno release that still ships them (config/crds/policyreport/), as the wg-policy-prototypes
// module is not published. crds.sh downloads both and copies the CRD YAML into the cache.
module kubectl-safety/controlplane/reports

go 1.26.0

require (
	github.com/kyverno/kyverno v1.19.1
	github.com/openreports/reports-api v0.2.1
)
