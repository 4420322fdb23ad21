//go:build !linux

package controlplane

import "syscall"

// sysProcAttr has no parent-death signal outside Linux; Stop must be called.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// processAlive cannot tell without a portable probe, so it keeps every
// directory.
func processAlive(int) bool { return true }
