#!/usr/bin/env bash
# Build the local control-plane binaries (k8s, etcd, kwok), the test oracle and the real test node
# (kubelet, containerd, runc, CNI plugins, the test images) that are missing from the versioned
# caches. Idempotent; prints the control plane's bin dir on its last line (stdout).
#
#   build.sh [--engines]  --engines: also the upgrade engines' drain oracles (controlplane/engines/;
#                         tests only: Cluster API's machine drain and Karpenter's termination drain)
#   KUBECTL_SAFETY_CACHE  cache root (default: ~/.cache/kubectl-safety)
set -euo pipefail

ENGINES=false
case "${1:-}" in
--engines) ENGINES=true ;;
"") ;;
*) echo "usage: build.sh [--engines]" >&2; exit 2 ;;
esac

K8S_VERSION=v1.36.3
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0
CONTAINERD_VERSION=v2.3.7
RUNC_VERSION=v1.5.2
CNI_VERSION=v1.10.0
CAPI_VERSION=v1.14.2
KARPENTER_VERSION=v1.14.1

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${KUBECTL_SAFETY_CACHE:-$HOME/.cache/kubectl-safety}
BIN=$CACHE/k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}/bin
NODE_BIN=$CACHE/node-k8s-${K8S_VERSION}_containerd-${CONTAINERD_VERSION}_runc-${RUNC_VERSION}_cni-${CNI_VERSION}/bin
ENGINES_BIN=$CACHE/engines-capi-${CAPI_VERSION}_karpenter-${KARPENTER_VERSION}/bin
CONTROL_PLANE_BIN=$BIN

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false"

LOG_NAME=build.sh
# shellcheck source=controlplane/lib.sh
. "$HERE/lib.sh"

command -v go >/dev/null || die "go not found on PATH (need Go >= 1.26.0)"
log "$(go version); cache $BIN"
mkdir -p "$BIN"

K8S_VER=k8s.io/component-base/version
K8S_LDFLAGS="-X $K8S_VER.gitVersion=$K8S_VERSION -X $K8S_VER.gitMajor=1 -X $K8S_VER.gitMinor=36"
K8S_LDFLAGS+=" -X $K8S_VER.gitTreeState=clean"
build "$HERE/go/k8s" "$K8S_LDFLAGS" \
	kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver \
	kube-controller-manager=k8s.io/kubernetes/cmd/kube-controller-manager \
	kube-scheduler=k8s.io/kubernetes/cmd/kube-scheduler \
	kubectl=k8s.io/kubernetes/cmd/kubectl

build "$HERE/go/etcd" "-X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION" etcd=go.etcd.io/etcd/server/v3

KWOK_CONSTS=sigs.k8s.io/kwok/pkg/consts
build "$HERE/go/kwok" "-X $KWOK_CONSTS.Version=$KWOK_VERSION -X $KWOK_CONSTS.KubeVersion=$K8S_VERSION" \
	kwok=sigs.k8s.io/kwok/cmd/kwok \
	kwokctl=sigs.k8s.io/kwok/cmd/kwokctl

# The oracle (tests only) changes with its sources: its name carries their hash (the same
# hash tests/oracle.py computes), so an edited oracle is rebuilt and a stale one never used.
# Oracles of other sources (other checkouts on this machine) stay a week, then go.
ORACLE_HASH=$(cd "$HERE/go/oracle" && LC_ALL=C ls *.go go.mod go.sum | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16)
build "$HERE/go/oracle" "" oracle-$ORACLE_HASH=.
find "$BIN" -maxdepth 1 -name 'oracle-*' ! -name "oracle-$ORACLE_HASH" -mtime +7 -delete

# The real test node (controlplane/node.py): the kubelet from the control plane's release, containerd,
# runc (cgo: libseccomp), the CNI plugins, and the test images built from controlplane/go/testapp.
BIN=$NODE_BIN
mkdir -p "$BIN/cni"
build "$HERE/go/kubelet" "$K8S_LDFLAGS" \
	kubelet=k8s.io/kubernetes/cmd/kubelet

CONTAINERD=github.com/containerd/containerd/v2
TAGS="no_btrfs no_devmapper no_zfs" build "$HERE/go/containerd" "-X $CONTAINERD/version.Version=$CONTAINERD_VERSION" \
	containerd=$CONTAINERD/cmd/containerd \
	containerd-shim-runc-v2=$CONTAINERD/cmd/containerd-shim-runc-v2 \
	ctr=$CONTAINERD/cmd/ctr

if [[ ! -x $BIN/runc ]]; then
	command -v gcc >/dev/null || die "runc needs a C compiler (gcc) for cgo"
	if [[ ! -e /usr/include/seccomp.h ]]; then
		[[ $(id -u) == 0 ]] || die "runc needs libseccomp-dev: apt-get install libseccomp-dev"
		log "installing libseccomp-dev (runc links libseccomp) ..."
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q libseccomp-dev >&2 ||
			{ apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libseccomp-dev >&2; } ||
			die "could not install libseccomp-dev"
	fi
fi
CGO_ENABLED=1 TAGS=seccomp build "$HERE/go/runc" "-X main.version=${RUNC_VERSION#v}" runc=github.com/opencontainers/runc

CNI_PLUGINS=github.com/containernetworking/plugins
BIN=$NODE_BIN/cni build "$HERE/go/cni" "-X $CNI_PLUGINS/pkg/utils/buildversion.BuildVersion=$CNI_VERSION" \
	bridge=$CNI_PLUGINS/plugins/main/bridge \
	host-local=$CNI_PLUGINS/plugins/ipam/host-local \
	loopback=$CNI_PLUGINS/plugins/main/loopback

# The test images change with testapp's sources: their tag is the sources' hash, stale ones are removed.
TESTAPP_HASH=$(cd "$HERE/go/testapp" && LC_ALL=C ls *.go go.mod | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16)
build "$HERE/go/testapp" "" testapp-$TESTAPP_HASH=.
for image in testapp pause; do
	tarball=$BIN/$image-$TESTAPP_HASH.tar
	[[ -s $tarball ]] && continue
	entrypoint=(/testapp run)
	[[ $image == pause ]] && entrypoint=(/testapp pause)
	"$BIN/testapp-$TESTAPP_HASH" image --name "kubectl-safety.test/$image:$TESTAPP_HASH" --out "$tarball" \
		-- "${entrypoint[@]}" ||
		die "could not write the $image image"
	log "wrote $tarball"
done
find "$BIN" -maxdepth 1 \( -name 'testapp-*' -o -name 'pause-*' \) \
	! -name "*-$TESTAPP_HASH" ! -name "*-$TESTAPP_HASH.tar" -delete

# The engines' drain oracles (tests only), like the oracle: named after their sources' hash.
if $ENGINES; then
	BIN=$ENGINES_BIN
	mkdir -p "$BIN"
	for engine in capi karpenter; do
		hash=$(cd "$HERE/engines/$engine" && LC_ALL=C ls *.go go.mod go.sum | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16)
		build "$HERE/engines/$engine" "" "$engine-drain-$hash=."
		find "$BIN" -maxdepth 1 -name "$engine-drain-*" ! -name "$engine-drain-$hash" -mtime +7 -delete
	done
fi

echo "$CONTROL_PLANE_BIN"
