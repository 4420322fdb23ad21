package controlplane

import "syscall"

// sysProcAttr asks the kernel to kill the child when its parent goes away,
// so control planes never outlive the test or program that started them.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// processAlive reports whether a process with this pid exists (EPERM means it
// exists but belongs to someone else).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
