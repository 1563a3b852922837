//go:build tools

// Package tools pins etcd's server module so `go mod tidy` keeps its dependencies.
package tools

import _ "go.etcd.io/etcd/server/v3/etcdmain"
