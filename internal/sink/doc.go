// Package sink passes template values into params that are not plain data
// — a shell command, source code, a URL — so that a value can never change
// the structure of what it lands in (see docs/decisions.md, "Template values
// are data"). A shell command gets each
// value as an environment variable referenced from the command; source code
// refuses templates (values go through the code node's inputs); a URL gets
// each value percent-encoded for its part of the URL.
//
// The runtime calls the function of a param's node.Sink instead of pasting
// resolved values into the text; static validation calls the Check functions.
package sink
