// Command hello is the start-up floor of the benchmarks: the time to start
// a bare Go binary that prints one line.
package main

import "os"

func main() { os.Stdout.WriteString("hello\n") }
