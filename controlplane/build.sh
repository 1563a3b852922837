#!/usr/bin/env bash
# Build the local control-plane binaries (k8s, etcd, kwok) and the test oracle that are missing
# from the versioned cache. Idempotent; prints the bin dir on its last line (stdout).
#
#   KUBECTL_SAFETY_CACHE  cache root (default: ~/.cache/kubectl-safety)
set -euo pipefail

K8S_VERSION=v1.36.3
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${KUBECTL_SAFETY_CACHE:-$HOME/.cache/kubectl-safety}
BIN=$CACHE/k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}/bin

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false"

log() { echo "build.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

# build MODULE_DIR LDFLAGS NAME=PACKAGE... : build the missing NAMEs of one wrapper module.
build() {
	local dir=$1 ldflags=$2 spec name pkg start; shift 2
	for spec in "$@"; do
		name=${spec%%=*} pkg=${spec#*=}
		if [[ -x $BIN/$name ]]; then
			log "up to date: $name"
			continue
		fi
		log "building $name from $pkg (module controlplane/go/$dir) ..."
		start=$SECONDS
		(cd "$HERE/go/$dir" && go build -trimpath -ldflags "-s -w $ldflags" -o "$BIN/.$name.tmp" "$pkg") ||
			die "go build failed for $name (module controlplane/go/$dir; see the go output above)"
		mv "$BIN/.$name.tmp" "$BIN/$name"
		log "built $name in $((SECONDS - start))s"
	done
}

command -v go >/dev/null || die "go not found on PATH (need Go >= 1.26.0)"
log "$(go version); cache $BIN"
mkdir -p "$BIN"

K8S_VER=k8s.io/component-base/version
build k8s "-X $K8S_VER.gitVersion=$K8S_VERSION -X $K8S_VER.gitMajor=1 -X $K8S_VER.gitMinor=36 -X $K8S_VER.gitTreeState=clean" \
	kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver \
	kube-controller-manager=k8s.io/kubernetes/cmd/kube-controller-manager \
	kube-scheduler=k8s.io/kubernetes/cmd/kube-scheduler \
	kubectl=k8s.io/kubernetes/cmd/kubectl

build etcd "-X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION" etcd=go.etcd.io/etcd/server/v3

KWOK_CONSTS=sigs.k8s.io/kwok/pkg/consts
build kwok "-X $KWOK_CONSTS.Version=$KWOK_VERSION -X $KWOK_CONSTS.KubeVersion=$K8S_VERSION" \
	kwok=sigs.k8s.io/kwok/cmd/kwok \
	kwokctl=sigs.k8s.io/kwok/cmd/kwokctl

# The oracle (tests only) changes with its sources: its name carries their hash (the same
# hash tests/oracle.py computes), so an edited oracle is rebuilt and a stale one never used.
ORACLE_HASH=$(cd "$HERE/go/oracle" && LC_ALL=C ls *.go go.mod go.sum | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16)
build oracle "" oracle-$ORACLE_HASH=.
find "$BIN" -maxdepth 1 -name 'oracle-*' ! -name "oracle-$ORACLE_HASH" -delete

echo "$BIN"
