//go:build tools

// Package tools pins the CNI plugins' packages so `go mod tidy` keeps their dependencies.
package tools

import (
	_ "github.com/containernetworking/plugins/pkg/ip"
	_ "github.com/containernetworking/plugins/plugins/ipam/host-local/backend/allocator"
)
