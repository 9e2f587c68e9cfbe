package cli

import (
	"io"
	"os"
)

// IOStreams are the process's standard streams. Nothing in pflow writes to
// os.Stdout directly; commands write to these so tests can capture them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// Terminal flags, decided once at start-up.
	InTTY, OutTTY, ErrTTY bool
	// StdinPiped is true when stdin is a pipe or file with data to read
	// (never a terminal, never /dev/null).
	StdinPiped bool
}

// System returns the streams of this process.
func System() *IOStreams {
	s := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	s.InTTY = isTerminal(os.Stdin)
	s.OutTTY = isTerminal(os.Stdout)
	s.ErrTTY = isTerminal(os.Stderr)
	s.StdinPiped = stdinHasData(os.Stdin)
	return s
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	if err != nil {
		return false
	}
	return st.Mode()&os.ModeCharDevice != 0
}

// stdinHasData reports whether stdin is a FIFO or a regular file (a
// redirect). Character devices (terminals, /dev/null, an agent's inherited
// stdin) are never read, so pflow never hangs waiting for input.
func stdinHasData(f *os.File) bool {
	st, err := f.Stat()
	if err != nil {
		return false
	}
	m := st.Mode()
	return m&os.ModeNamedPipe != 0 || m.IsRegular()
}
