//go:build tools

// Package controlplane records the main packages this module builds, so
// `go mod tidy` keeps their dependencies.
package controlplane

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
