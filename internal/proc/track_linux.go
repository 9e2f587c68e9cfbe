//go:build linux

package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// killRounds bounds the scan → SIGKILL → wait loop of KillMarked: a
	// process may fork between a scan and the kill, so one round is not
	// always enough, but a tree cannot outgrow SIGKILL for long.
	killRounds = 20
	// killWait bounds how long one round waits for its SIGKILLs to take
	// effect (a process in uninterruptible sleep dies when it wakes).
	killWait = 5 * time.Second
	// blankRescans bounds the scans again when a process's environment
	// read as empty (mid-exec) and no marked process was found.
	blankRescans = 5
)

// marked is a process found by a scan.
type marked struct {
	pid, pgid int
}

// environOf reads a process's environment (replaceable by tests).
var environOf = func(pid string) ([]byte, error) { return os.ReadFile("/proc/" + pid + "/environ") }

// readMarker returns the TrackingVar value in the environment of process
// pid (a /proc entry name). Only processes of pflow's own user are read;
// any error (the process is gone, a zombie, unreadable) yields false.
// blank reports an environment read as empty: a process in the middle of
// an exec shows none for an instant, so it cannot be told apart yet.
func readMarker(pid string) (v string, ok, blank bool) {
	if st, err := os.Stat("/proc/" + pid); err != nil {
		return "", false, false
	} else if s, ok := st.Sys().(*syscall.Stat_t); !ok || int(s.Uid) != os.Geteuid() {
		return "", false, false
	}
	env, err := environOf(pid)
	if err != nil {
		return "", false, false
	}
	prefix := []byte(TrackingVar + "=")
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok {
			return string(v), true, false
		}
	}
	return "", false, len(env) == 0
}

// statFields returns the fields of /proc/<pid>/stat after "(comm)":
// state(0) ppid(1) pgrp(2) … starttime(19) vsize(20) rss(21).
func statFields(pid string) ([][]byte, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, false
	}
	f := bytes.Fields(b[i+1:])
	return f, len(f) >= 22
}

// selfStart is pflow's own start time in clock ticks after boot. A process
// started before pflow cannot be one pflow marked, so a scan reads the
// environment only of younger processes: on a desktop with hundreds of
// processes that is a handful.
var selfStart = sync.OnceValue(func() uint64 {
	f, ok := statFields("self")
	if !ok {
		return 0
	}
	n, _ := strconv.ParseUint(string(f[19]), 10, 64)
	return n
})

// scan lists the live processes whose TrackingVar lists one of tokens.
// Zombies are dead already and are not listed.
func scan(tokens map[string]bool) []marked {
	out, _ := scanBlank(tokens)
	return out
}

// pfKthread is the kernel-thread flag of /proc/<pid>/stat's flags.
const pfKthread = 0x00200000

// scanBlank is scan, and also counts the processes of pflow's user, younger
// than pflow, whose environment read as empty (most likely mid-exec: read
// again, they may carry a token).
func scanBlank(tokens map[string]bool) (out []marked, blank int) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, 0
	}
	self, since := os.Getpid(), selfStart()
	for _, e := range ents {
		name := e.Name()
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		f, ok := statFields(name)
		if !ok || f[0][0] == 'Z' || f[0][0] == 'X' {
			continue
		}
		if start, _ := strconv.ParseUint(string(f[19]), 10, 64); start < since {
			continue
		}
		v, ok, empty := readMarker(name)
		if empty {
			if flags, _ := strconv.ParseUint(string(f[6]), 10, 64); flags&pfKthread == 0 {
				blank++
			}
		}
		if !ok || !hasToken(v, tokens) {
			continue
		}
		m := marked{pid: pid}
		m.pgid, _ = strconv.Atoi(string(f[2]))
		out = append(out, m)
	}
	return out, blank
}

// MarkedPIDs returns the pids of the live processes carrying token (see
// TrackingVar), read from /proc.
func MarkedPIDs(token string) []int {
	var pids []int
	for _, m := range scan(map[string]bool{token: true}) {
		pids = append(pids, m.pid)
	}
	return pids
}

// target is one process to signal, pinned by a pidfd where the kernel has
// them (Linux 5.3), so that a pid reused after the scan is never signalled.
type target struct {
	pid int
	fd  int // -1 without a pidfd
}

// pin opens pidfds for ps, keeping only those still carrying one of tokens
// once pinned (the check after pidfd_open rules out a reused pid).
func pin(ps []marked, tokens map[string]bool) []target {
	ts := make([]target, 0, len(ps))
	for _, p := range ps {
		fd, err := unix.PidfdOpen(p.pid, 0)
		if err != nil {
			if errors.Is(err, unix.ESRCH) {
				continue
			}
			ts = append(ts, target{pid: p.pid, fd: -1})
			continue
		}
		if v, ok, _ := readMarker(strconv.Itoa(p.pid)); !ok || !hasToken(v, tokens) {
			unix.Close(fd)
			continue
		}
		ts = append(ts, target{pid: p.pid, fd: fd})
	}
	return ts
}

func (t target) signal(sig syscall.Signal) {
	if t.fd >= 0 {
		_ = unix.PidfdSendSignal(t.fd, sig, nil, 0)
		return
	}
	_ = syscall.Kill(t.pid, sig)
}

func release(ts []target) {
	for _, t := range ts {
		if t.fd >= 0 {
			unix.Close(t.fd)
		}
	}
}

// waitExited waits until every target has exited (a zombie counts as
// exited), at most d: on the pidfds where there are any, else by polling
// /proc. It reports whether all exited.
func waitExited(ts []target, d time.Duration) bool {
	deadline := time.Now().Add(d)
	var fds []unix.PollFd
	var pids []int
	for _, t := range ts {
		if t.fd >= 0 {
			fds = append(fds, unix.PollFd{Fd: int32(t.fd), Events: unix.POLLIN})
		} else {
			pids = append(pids, t.pid)
		}
	}
	for len(fds) > 0 {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err != nil && !errors.Is(err, unix.EINTR) {
			// Cannot poll: fall back to /proc for the rest.
			for _, t := range ts {
				if t.fd >= 0 {
					pids = append(pids, t.pid)
				}
			}
			break
		}
		if n <= 0 {
			continue
		}
		keep := fds[:0]
		for _, f := range fds {
			if f.Revents == 0 {
				keep = append(keep, f)
			}
		}
		fds = keep
	}
	poll := time.Millisecond
	for {
		alive := pids[:0]
		for _, pid := range pids {
			if Alive(pid) {
				alive = append(alive, pid)
			}
		}
		pids = alive
		if len(pids) == 0 {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(min(poll, time.Until(deadline)))
		poll = min(poll*2, 50*time.Millisecond)
	}
}

// killAny SIGKILLs every process carrying one of tokens, scanning again
// after each round until none is left (at most killRounds rounds), and
// returns how many it killed.
func killAny(tokens map[string]bool) int {
	n, rescans := 0, 0
	for range killRounds {
		found, blank := scanBlank(tokens)
		ts := pin(found, tokens)
		if len(ts) == 0 {
			// A process caught mid-exec shows no environment: look again
			// before saying none is left (a few times, briefly).
			if blank > 0 && rescans < blankRescans {
				rescans++
				time.Sleep(time.Duration(rescans) * time.Millisecond)
				continue
			}
			break
		}
		for _, t := range ts {
			t.signal(syscall.SIGKILL)
		}
		n += len(ts)
		waitExited(ts, killWait)
		release(ts)
	}
	return n
}

// KillMarked SIGKILLs every process carrying token (see TrackingVar) and
// repeats the scan until none is left, waiting for each round's kills to
// take effect. It returns how many processes it killed.
func KillMarked(token string) int {
	return killAny(map[string]bool{token: true})
}

// signalMarked sends sig to every process carrying token except those in
// process group skipPgid (which the caller signals as a group).
func signalMarked(token string, sig syscall.Signal, skipPgid int) {
	tokens := map[string]bool{token: true}
	var ps []marked
	for _, p := range scan(tokens) {
		if skipPgid <= 0 || p.pgid != skipPgid {
			ps = append(ps, p)
		}
	}
	ts := pin(ps, tokens)
	for _, t := range ts {
		t.signal(sig)
	}
	release(ts)
}

// waitMarkedGone polls /proc until no process carries token, at most d,
// and reports whether none is left.
func waitMarkedGone(token string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	tokens := map[string]bool{token: true}
	poll := time.Millisecond
	for {
		if len(scan(tokens)) == 0 {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(min(poll, time.Until(deadline)))
		poll = min(poll*2, 50*time.Millisecond)
	}
}

// ReapMarked stops every process carrying token: SIGTERM, up to grace for
// them to exit, then KillMarked for whatever is left (grace 0: SIGKILL at
// once). It returns how many processes had to be SIGKILLed.
func ReapMarked(token string, grace time.Duration) int {
	if grace > 0 {
		if len(scan(map[string]bool{token: true})) == 0 {
			return 0
		}
		signalMarked(token, syscall.SIGTERM, 0)
		waitMarkedGone(token, grace)
	}
	return KillMarked(token)
}

// MemoryMeter measures the resident memory of a process tree: the
// processes carrying a token (see TrackingVar) plus those of a process
// group. It remembers which processes it has already read, so that calling
// RSS often (a watchdog) reads each process's environment once.
type MemoryMeter struct {
	token string
	pgid  int
	seen  map[int]meterEntry
}

type meterEntry struct {
	start  string // starttime: tells a reused pid apart
	marked bool
}

// NewMemoryMeter returns a meter for the tree marked with token and the
// process group pgid (0: none).
func NewMemoryMeter(token string, pgid int) *MemoryMeter {
	return &MemoryMeter{token: token, pgid: pgid, seen: map[int]meterEntry{}}
}

// RSS returns the total resident memory of the tree in bytes: the sum of
// its processes' proportional set sizes (shared pages divided among their
// sharers; the plain RSS where smaps_rollup is not readable).
func (m *MemoryMeter) RSS() int64 {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	page := int64(os.Getpagesize())
	tokens := map[string]bool{m.token: true}
	next := make(map[int]meterEntry, len(m.seen))
	var total int64
	for _, e := range ents {
		name := e.Name()
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		f, ok := statFields(name)
		if !ok {
			continue
		}
		in := false
		if g, _ := strconv.Atoi(string(f[2])); m.pgid > 0 && g == m.pgid {
			in = true
		} else if m.token != "" {
			start := string(f[19])
			ent, ok := m.seen[pid]
			blank := false
			if !ok || ent.start != start {
				var v string
				var found bool
				v, found, blank = readMarker(name)
				ent = meterEntry{start: start, marked: found && hasToken(v, tokens)}
			}
			if !blank { // mid-exec: read it again next time
				next[pid] = ent
			}
			in = ent.marked
		}
		if in {
			if pss, ok := readPSS(name); ok {
				total += pss
			} else {
				rss, _ := strconv.ParseInt(string(f[21]), 10, 64)
				total += rss * page
			}
		}
	}
	m.seen = next
	return total
}

// readPSS returns a process's proportional set size in bytes: its resident
// memory with each shared page divided among the processes sharing it. A
// tree of processes that share most of their pages (a browser's renderers,
// forked workers) is counted once, where the sum of their RSS counts the
// shared pages once per process and a 300 MB browser looks like 1 GB.
func readPSS(pid string) (int64, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/smaps_rollup")
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("Pss:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			if err != nil {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}
