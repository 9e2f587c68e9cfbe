// Package reliability holds pflow's reliability suite (see docs/decisions.md,
// "Measured targets"). It has
// no production code: everything is in its tests, which drive a real pflow
// binary (built once per run), fakemcpd (the fake MCP server) and, for tight
// write loops, loopwriterd (./loopwriter), all built without the race
// detector (docs/decisions.md, "The race detector runs in process"); a few
// helper processes (a hostile MCP server, another user) are the test
// binary run again.
//
//   - kill -9 mid-write (killwrite_test.go): registry.json,
//     mcp-servers.json, settings.json and a saved workflow are written in a
//     loop and SIGKILLed at random points; every file is always the old or
//     the new version, never a broken one.
//   - concurrency (concurrent_test.go): 20 concurrent `pflow mcp add`,
//     `mcp sync`, `workflow save` and `settings set-env` processes lose
//     nothing and leave valid files.
//   - secret leaks (secrets_test.go): secrets in the process env,
//     settings.json and MCP server headers never appear in stdout, stderr,
//     traces, saved files or MCP responses.
//   - hostile MCP client (hostile_test.go): malformed frames, unknown
//     methods, a 10 MB argument, path-traversal names and 50 concurrent calls
//     against `pflow mcp serve`; the server answers each and stays up.
//   - another user of the machine (multiuser_test.go): run as root (as CI
//     does), the tests play user nobody against root's home — it reads no
//     file there nor a step's value in TMPDIR, gets 401 from `mcp serve
//     --http`, cannot make root's pflow use a home, a working directory or
//     a /tmp symlink of theirs — and check that data stays inside
//     --allow-dir. Without root they are skipped.
//   - hostile MCP server (hostileserver_test.go): control characters in
//     its descriptions, errors and stderr reach the terminal escaped.
//
// What a crash may leave behind: fsutil.WriteFileAtomic writes a temp file
// named .<file>.<random>.tmp next to the target and renames it into place.
// A process killed between the two leaves that temp file (at most one per
// killed process, since writes are sequential within a process); nothing
// reads them, and a later write of the same file removes those older than
// 10 minutes. Lock files
// (<file>.lock, workflows/.locks/<name>) stay too, by design: an flock is
// released by the kernel when its holder dies, so a stale lock file never
// blocks anyone.
//
// The default run bounds each kill loop to a few seconds. Longer runs:
//
//	go test ./internal/reliability -reliability.long
//	PFLOW_LONG_TESTS=1 go test ./internal/reliability
package reliability
