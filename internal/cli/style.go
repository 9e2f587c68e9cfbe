package cli

import (
	"os"

	"github.com/fatih/color"
	"golang.org/x/term"
)

// Style decorates the text written to one stream: colour only on a
// terminal, and never when the user asked for none. Symbols (✓ ✗ ⚠) are
// plain text and written everywhere; pflow prints no emoji.
type Style struct {
	color bool
}

// colorWanted applies the conventions, strongest first: NO_COLOR (any
// value) and --no-color turn colour off; CLICOLOR_FORCE (not "0") turns
// it on even when the stream is not a terminal; TERM=dumb turns it off;
// otherwise a terminal gets colour and anything else does not.
func colorWanted(tty, noColorFlag bool, getenv func(string) string) bool {
	switch {
	case getenv("NO_COLOR") != "" || noColorFlag:
		return false
	case getenv("CLICOLOR_FORCE") != "" && getenv("CLICOLOR_FORCE") != "0":
		return true
	case getenv("TERM") == "dumb":
		return false
	}
	return tty
}

func (s Style) paint(attr color.Attribute, text string) string {
	if !s.color || text == "" {
		return text
	}
	c := color.New(attr)
	c.EnableColor()
	return c.Sprint(text)
}

// Success is for what went well (✓ lines).
func (s Style) Success(t string) string { return s.paint(color.FgGreen, t) }

// Failure is for errors (✗ lines, "Error:").
func (s Style) Failure(t string) string { return s.paint(color.FgRed, t) }

// Warning is for warnings (⚠ lines).
func (s Style) Warning(t string) string { return s.paint(color.FgYellow, t) }

// Hint is for fixes and secondary text.
func (s Style) Hint(t string) string { return s.paint(color.FgCyan, t) }

// Bold is for headings.
func (s Style) Bold(t string) string { return s.paint(color.Bold, t) }

// isTerminal reports whether f is a terminal (not merely a character
// device: /dev/null is one too).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
