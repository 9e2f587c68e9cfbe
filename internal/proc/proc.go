// Package proc runs child processes that must never outlive their run: the
// shell node's commands, the code node's interpreter and stdio MCP servers.
//
// Every child leads its own process group (SetProcessGroup), so that a
// timeout, a Ctrl-C or the end of a run can signal the child together with
// everything it started (KillGroup, Terminate). Run wraps the whole lifecycle:
// start, wait, timeout and cancellation with SIGTERM → grace → SIGKILL to the
// group, and draining of the output pipes, which a backgrounded grandchild
// may hold open long after the child itself has exited (the classic hang of
// `sh -c 'sleep 300 &'`).
//
// A descendant can leave the group (setsid, a double fork, Node's detached:
// true), so every child is also marked through its environment (TrackingVar,
// MarkCmd) and found again by a scan of /proc on Linux: Run stops the marked
// descendants of its child with the group, a Tracker (Track) stops whatever
// is left of a whole run when it ends, and MemoryMeter measures a marked tree.
//
// Why not exec.Cmd's Cancel and WaitDelay: they stop and
// drain a single process, and Cmd.Wait drains the output before it returns.
// A step's child that exits while a background job of its group still holds
// stdout would then make every such step wait the full WaitDelay, because
// the group can only be killed after Wait returns; and WaitDelay's SIGKILL
// reaches the leader, not the group nor the descendants that left it. Run
// therefore reaps the child, kills what is left of its group and its marked
// descendants, and only then drains its own pipes (bounded by WaitDelay):
// `sh -c 'sleep 300 & echo done'` returns at once with "done".
//
// CappedBuffer and TailBuffer capture output without unbounded memory: the
// first N bytes (a node's stdout) and the last N lines (a server's stderr for
// error messages).
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// DefaultGrace is how long a process group gets between SIGTERM and SIGKILL.
const DefaultGrace = 2 * time.Second

// DefaultWaitDelay bounds how long Run keeps reading output after the child
// has exited and its process group has been killed; only a descendant that
// escaped the group (setsid) can hold the pipes that long.
const DefaultWaitDelay = 2 * time.Second

// TimeoutError reports that Run stopped a process because its own Timeout
// expired (as opposed to the caller's context being cancelled).
type TimeoutError struct {
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("process timed out after %s", e.Timeout)
}

// Is makes errors.Is(err, context.DeadlineExceeded) true for a timeout.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// CanceledError reports that Run stopped a process because the caller's
// context was done (Ctrl-C, the run's own deadline, the run ending). It wraps
// the context's cause, so errors.Is(err, context.Canceled) works.
type CanceledError struct {
	Cause error
}

func (e *CanceledError) Error() string { return fmt.Sprintf("process stopped: %v", e.Cause) }

// Unwrap returns the context's cause.
func (e *CanceledError) Unwrap() error { return e.Cause }

// StartError reports that the process could not be started at all (binary
// missing, not executable, bad working directory).
type StartError struct {
	Path string
	Err  error
}

func (e *StartError) Error() string { return fmt.Sprintf("could not start %s: %v", e.Path, e.Err) }

// Unwrap returns the underlying error.
func (e *StartError) Unwrap() error { return e.Err }

// Options tune Run.
type Options struct {
	// Timeout stops the process after this long (0: no timeout of its own).
	// Run then returns a *TimeoutError.
	Timeout time.Duration
	// Grace is the pause between SIGTERM and SIGKILL to the group when the
	// process is stopped (0: DefaultGrace).
	Grace time.Duration
	// WaitDelay bounds how long output is still read after the process has
	// exited and its group was killed (0: DefaultWaitDelay).
	WaitDelay time.Duration
	// KeepGroup leaves the child's descendants running after the child
	// exits normally. By default Run kills every process left in the group
	// (background jobs the command started), so nothing outlives the step;
	// a marked descendant that left the group (setsid, double fork) is
	// stopped by the tracker of ctx when it closes (the end of the run), or
	// at once when ctx has no tracker. With KeepGroup all of them are left
	// to the tracker of ctx, if any.
	KeepGroup bool
}

func (o Options) grace() time.Duration {
	if o.Grace > 0 {
		return o.Grace
	}
	return DefaultGrace
}

func (o Options) waitDelay() time.Duration {
	if o.WaitDelay > 0 {
		return o.WaitDelay
	}
	return DefaultWaitDelay
}

// Run starts cmd in its own process group and waits for it.
//
// cmd must not have been started. Its Stdin, Stdout and Stderr may be any
// reader/writer; Run feeds and drains them through its own pipes so that a
// grandchild holding a pipe can never block the return.
//
// The child is marked (MarkCmd) with the tokens of the trackers in ctx and a
// token of its own, which every descendant inherits, even one that leaves
// the group (setsid, a double fork).
//
// When ctx is done or opts.Timeout expires, the whole group and every marked
// descendant outside it get SIGTERM, then SIGKILL after opts.Grace if still
// running. Run returns only after the child has been reaped, the rest of its
// group killed (unless opts.KeepGroup; for marked descendants outside it,
// see KeepGroup) and its output copied (bounded by opts.WaitDelay).
//
// Errors: *StartError if the process could not start; *TimeoutError when the
// timeout stopped it; *CanceledError (wrapping the context's cause) when ctx
// did; otherwise cmd.Wait's error (*exec.ExitError for a non-zero exit).
// cmd.ProcessState is set whenever the process started.
func Run(ctx context.Context, cmd *exec.Cmd, opts Options) error {
	if err := ctx.Err(); err != nil {
		return &CanceledError{Cause: context.Cause(ctx)}
	}
	SetProcessGroup(cmd)
	token := MarkCmd(ctx, cmd)

	var (
		closeAfterStart []io.Closer // child's ends of our pipes
		closeAfterWait  []io.Closer // our ends, closed when copying must stop
		copiers         sync.WaitGroup
	)
	closeAll := func(cs []io.Closer) {
		for _, c := range cs {
			c.Close()
		}
	}

	// Stdin: copy from a non-file reader through our own pipe.
	if r := cmd.Stdin; r != nil {
		if _, isFile := r.(*os.File); !isFile {
			pr, pw, err := os.Pipe()
			if err != nil {
				return &StartError{Path: cmd.Path, Err: err}
			}
			cmd.Stdin = pr
			closeAfterStart = append(closeAfterStart, pr)
			closeAfterWait = append(closeAfterWait, pw)
			copiers.Add(1)
			go func() {
				defer copiers.Done()
				// A child that exits without reading all of stdin is fine
				// (EPIPE); so is one that never reads it.
				_, _ = io.Copy(pw, r)
				pw.Close()
			}()
		}
	}
	outPipe := func(w io.Writer) (*os.File, error) {
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		closeAfterStart = append(closeAfterStart, pw)
		closeAfterWait = append(closeAfterWait, pr)
		copiers.Add(1)
		go func() {
			defer copiers.Done()
			_, _ = io.Copy(w, pr)
		}()
		return pw, nil
	}
	// Stdout and stderr: drain into the caller's writers through our pipes.
	// The same writer for both gets one pipe, as os/exec does.
	var err error
	var stdoutFile *os.File
	if w := cmd.Stdout; w != nil {
		if _, isFile := w.(*os.File); !isFile {
			if stdoutFile, err = outPipe(w); err != nil {
				closeAll(closeAfterStart)
				closeAll(closeAfterWait)
				return &StartError{Path: cmd.Path, Err: err}
			}
			if interfaceEqual(cmd.Stderr, w) {
				cmd.Stderr = stdoutFile
			}
			cmd.Stdout = stdoutFile
		}
	}
	if w := cmd.Stderr; w != nil {
		if _, isFile := w.(*os.File); !isFile {
			f, err := outPipe(w)
			if err != nil {
				closeAll(closeAfterStart)
				closeAll(closeAfterWait)
				return &StartError{Path: cmd.Path, Err: err}
			}
			cmd.Stderr = f
		}
	}

	if err := cmd.Start(); err != nil {
		closeAll(closeAfterStart)
		closeAll(closeAfterWait)
		copiers.Wait()
		return &StartError{Path: cmd.Path, Err: err}
	}
	closeAll(closeAfterStart)
	pid := cmd.Process.Pid

	waitCh := make(chan error, 1)
	go func() { waitCh <- cmd.Wait() }()

	var timeoutC <-chan time.Time
	if opts.Timeout > 0 {
		t := time.NewTimer(opts.Timeout)
		defer t.Stop()
		timeoutC = t.C
	}

	var waitErr, stopErr error
	select {
	case waitErr = <-waitCh:
	case <-ctx.Done():
		stopErr = &CanceledError{Cause: context.Cause(ctx)}
	case <-timeoutC:
		stopErr = &TimeoutError{Timeout: opts.Timeout}
	}
	var graceEnd time.Time
	if stopErr != nil {
		// SIGTERM to the group and to the descendants that left it.
		_ = KillGroup(pid, sigTerm)
		signalMarked(token, sigTerm, pid)
		graceEnd = time.Now().Add(opts.grace())
		grace := time.NewTimer(opts.grace())
		select {
		case waitErr = <-waitCh:
		case <-grace.C:
			_ = KillGroup(pid, sigKill)
			waitErr = <-waitCh
		}
		grace.Stop()
	}
	// The child is reaped. Whatever is left in its group (background jobs,
	// children that ignored SIGTERM) goes too, and so does every descendant
	// that left the group (setsid, double fork), found by its token: nothing
	// outlives the step and nothing keeps our pipes open.
	if !opts.KeepGroup || stopErr != nil {
		_ = KillGroup(pid, sigKill)
		switch {
		case stopErr != nil:
			// The escaped descendants got SIGTERM with the group; they
			// have what is left of the grace to exit on their own.
			waitMarkedGone(token, time.Until(graceEnd))
			KillMarked(token)
		case !Tracked(ctx):
			KillMarked(token)
		}
		// Under a tracker (a run, a sync), a descendant that left the
		// group after a normal exit is stopped when the tracker closes:
		// one scan of the process table per run instead of one per step.
	}

	// Drain the output. Only a descendant that left the group can still
	// hold a pipe; don't wait for it longer than WaitDelay.
	drained := make(chan struct{})
	go func() { copiers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(opts.waitDelay()):
		closeAll(closeAfterWait)
		<-drained
	}
	closeAll(closeAfterWait)

	if stopErr != nil {
		return stopErr
	}
	return waitErr
}

// ExitCode returns the exit code of a finished command: the process's exit
// status, 128+N for a process killed by signal N (as shells report it), or -1
// when it never ran.
func ExitCode(cmd *exec.Cmd) int {
	if cmd == nil || cmd.ProcessState == nil {
		return -1
	}
	if sig, ok := signaled(cmd.ProcessState); ok {
		return 128 + sig
	}
	return cmd.ProcessState.ExitCode()
}

// Signal returns the number of the signal that killed cmd's process, if any.
func Signal(cmd *exec.Cmd) (int, bool) {
	if cmd == nil || cmd.ProcessState == nil {
		return 0, false
	}
	return signaled(cmd.ProcessState)
}

// IsTimeout reports whether err is (or wraps) a *TimeoutError.
func IsTimeout(err error) bool {
	var te *TimeoutError
	return errors.As(err, &te)
}

// IsCanceled reports whether err is (or wraps) a *CanceledError.
func IsCanceled(err error) bool {
	var ce *CanceledError
	return errors.As(err, &ce)
}

// interfaceEqual compares two writers without panicking on uncomparable
// dynamic types (as os/exec does).
func interfaceEqual(a, b any) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return a == b
}
