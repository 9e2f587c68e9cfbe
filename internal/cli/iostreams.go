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
	// Getenv reads the colour conventions (NO_COLOR, CLICOLOR_FORCE, TERM);
	// nil means none is set.
	Getenv func(string) string
	// NoColor is the --no-color flag.
	NoColor bool
}

func (s *IOStreams) getenv(k string) string {
	if s.Getenv == nil {
		return ""
	}
	return s.Getenv(k)
}

// liveProgress reports whether stderr can show a line that is redrawn in
// place (a terminal that is not TERM=dumb).
func (s *IOStreams) liveProgress() bool { return s.ErrTTY && s.getenv("TERM") != "dumb" }

// OutStyle decorates stdout.
func (s *IOStreams) OutStyle() Style { return Style{color: colorWanted(s.OutTTY, s.NoColor, s.getenv)} }

// ErrStyle decorates stderr.
func (s *IOStreams) ErrStyle() Style { return Style{color: colorWanted(s.ErrTTY, s.NoColor, s.getenv)} }

// System returns the streams of this process.
func System() *IOStreams {
	s := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, Getenv: os.Getenv}
	s.InTTY = isTerminal(os.Stdin)
	s.OutTTY = isTerminal(os.Stdout)
	s.ErrTTY = isTerminal(os.Stderr)
	s.StdinPiped = stdinHasData(os.Stdin)
	return s
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
