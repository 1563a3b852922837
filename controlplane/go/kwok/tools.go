//go:build tools

// Package tools pins kwok's commands so `go mod tidy` keeps their dependencies.
package tools

import (
	_ "sigs.k8s.io/kwok/pkg/kwok/cmd"
	_ "sigs.k8s.io/kwok/pkg/kwokctl/cmd"
)
