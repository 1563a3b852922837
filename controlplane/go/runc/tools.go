//go:build tools

// Package tools pins runc so `go mod tidy` keeps its dependencies.
package tools

import _ "github.com/opencontainers/runc/libcontainer"
