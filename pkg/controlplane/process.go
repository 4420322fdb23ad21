package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process runs one control-plane binary and can run it again with the same
// arguments, which is how restarts keep their ports and data.
type process struct {
	name    string
	path    string
	args    []string
	logPath string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when the current run has exited
	err  error         // the current run's exit error, set before done closes
}

// start runs the binary with its output appended to the log file.
//
// The child gets SIGKILL when its parent dies (Linux parent-death signal), so
// a killed test binary leaves no etcd or kube-apiserver behind. The kernel
// sends that signal when the OS thread that forked the child exits, not the
// process, so the fork happens on a goroutine locked to its thread that stays
// in Wait for the child's lifetime.
func (p *process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && !p.exited() {
		return fmt.Errorf("controlplane: %s is already running", p.name)
	}
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("controlplane: open %s log: %w", p.name, err)
	}
	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	done := make(chan struct{})
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer logFile.Close()
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("controlplane: start %s: %w", p.name, err)
			close(done)
			return
		}
		started <- nil
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	if err := <-started; err != nil {
		return err
	}
	p.cmd, p.done, p.err = cmd, done, nil
	return nil
}

// exited reports whether the current run has ended; callers hold p.mu.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitedChan returns a channel closed when the current run ends.
func (p *process) exitedChan() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// pid returns the current run's process id, or 0 when it is not running.
func (p *process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil || p.exited() {
		return 0
	}
	return p.cmd.Process.Pid
}

// stop ends the current run: SIGTERM first so the binary shuts down cleanly,
// SIGKILL when it has not exited after grace or when ctx ends.
func (p *process) stop(ctx context.Context, grace time.Duration) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-done:
		return
	case <-timer.C:
	case <-ctx.Done():
	}
	_ = cmd.Process.Kill()
	<-done
}

// exitError describes why the current run ended, with the last lines of its
// log, for errors about a process that exited when it should be serving.
func (p *process) exitError() error {
	p.mu.Lock()
	err := p.err
	p.mu.Unlock()
	if err == nil {
		err = errors.New("exited with status 0")
	}
	return fmt.Errorf("controlplane: %s exited early (%w); last lines of %s:\n%s", p.name, err, p.logPath, p.tail(20))
}

// tail returns up to n last lines of the log, indented for error messages.
func (p *process) tail(n int) string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return "    (no log: " + err.Error() + ")"
	}
	defer f.Close()
	const window = 16 << 10
	if info, err := f.Stat(); err == nil && info.Size() > window {
		_, _ = f.Seek(info.Size()-window, io.SeekStart)
	}
	data, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString("    ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// addressInUse reports whether the log says the binary could not bind a port,
// the one start failure that a new set of ports fixes.
func (p *process) addressInUse() bool {
	return strings.Contains(p.tail(50), "address already in use")
}
