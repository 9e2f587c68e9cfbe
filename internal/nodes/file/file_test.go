package file

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/node"
)

func specFor(t *testing.T, typ string) *node.Spec {
	t.Helper()
	for _, s := range Specs() {
		if s.Type == typ {
			return s
		}
	}
	t.Fatalf("no spec %q", typ)
	return nil
}

// call runs node typ with params in workflow directory dir and checks that
// every output written is declared.
func call(t *testing.T, typ, dir string, params map[string]any) (*node.Result, error) {
	t.Helper()
	s := specFor(t, typ)
	res, err := s.Node.Run(context.Background(), &node.Request{NodeID: "f", Type: typ, Params: params, WorkflowDir: dir})
	if res != nil {
		for k := range res.Outputs {
			if _, ok := s.Interface.Output(k); !ok {
				t.Errorf("%s writes undeclared output %q", typ, k)
			}
		}
	}
	return res, err
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readBack(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type tc struct {
	name   string
	typ    string
	setup  func(t *testing.T, dir string)
	params map[string]any
	action string         // "" default, "error", "refused" for params the node cannot use (a permanent error result), or "goerr" for a Go error
	want   map[string]any // outputs; "$DIR" in strings is replaced by the workflow dir
	errHas []string
	check  func(t *testing.T, dir string)
}

func runTable(t *testing.T, tests []tc) {
	for _, tt := range tests {
		t.Run(tt.typ+"/"+tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			res, err := call(t, tt.typ, dir, tt.params)
			var msg string
			if tt.action == "goerr" {
				if err == nil {
					t.Fatalf("want a Go error, got %+v", res)
				}
				msg = err.Error()
			} else if tt.action == "refused" {
				// No retry changes the params: the step fails once.
				if err != nil || res.Action != "error" || !res.Permanent {
					t.Fatalf("want a permanent failure, got %+v, %v", res, err)
				}
				msg, _ = res.Outputs["error"].(string)
			} else {
				if err != nil {
					t.Fatalf("Go error: %v", err)
				}
				if res.Action != tt.action {
					t.Fatalf("action = %q, want %q (outputs %v)", res.Action, tt.action, res.Outputs)
				}
				msg, _ = res.Outputs["error"].(string)
				for k, v := range tt.want {
					if s, ok := v.(string); ok {
						v = strings.ReplaceAll(s, "$DIR", dir)
					}
					if !reflect.DeepEqual(res.Outputs[k], v) {
						t.Errorf("%s = %#v, want %#v", k, res.Outputs[k], v)
					}
				}
			}
			for _, s := range tt.errHas {
				if s = strings.ReplaceAll(s, "$DIR", dir); !strings.Contains(msg, s) {
					t.Errorf("error %q does not contain %q", msg, s)
				}
			}
			if tt.check != nil {
				tt.check(t, dir)
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	runTable(t, []tc{
		{
			name:   "raw content, relative path resolves against workflow dir",
			typ:    "read-file",
			setup:  func(t *testing.T, dir string) { write(t, filepath.Join(dir, "notes", "a.txt"), "first\nsecond\n") },
			params: map[string]any{"file_path": "notes/a.txt"},
			want:   map[string]any{"content": "first\nsecond\n", "content_is_binary": false, "file_path": "$DIR/notes/a.txt"},
		},
		{
			name:   "line numbers on request",
			typ:    "read-file",
			setup:  func(t *testing.T, dir string) { write(t, filepath.Join(dir, "a.txt"), "first\nsecond\n") },
			params: map[string]any{"file_path": "a.txt", "line_numbers": true},
			want:   map[string]any{"content": "1: first\n2: second\n"},
		},
		{
			name:   "invalid UTF-8 is base64",
			typ:    "read-file",
			setup:  func(t *testing.T, dir string) { write(t, filepath.Join(dir, "b.dat"), "\xff\xfe\x00") },
			params: map[string]any{"file_path": "b.dat"},
			want:   map[string]any{"content": "//4A", "content_is_binary": true},
		},
		{
			name:   "binary extension is base64 even when valid text",
			typ:    "read-file",
			setup:  func(t *testing.T, dir string) { write(t, filepath.Join(dir, "x.PNG"), "abc") },
			params: map[string]any{"file_path": "x.PNG"},
			want:   map[string]any{"content": "YWJj", "content_is_binary": true},
		},
		{
			name:   "latin-1",
			typ:    "read-file",
			setup:  func(t *testing.T, dir string) { write(t, filepath.Join(dir, "l.txt"), "caf\xe9") },
			params: map[string]any{"file_path": "l.txt", "encoding": "latin-1"},
			want:   map[string]any{"content": "café", "content_is_binary": false},
		},
		{
			name:   "utf-8-sig strips BOM",
			typ:    "read-file",
			setup:  func(t *testing.T, dir string) { write(t, filepath.Join(dir, "b.txt"), "\xef\xbb\xbfhi") },
			params: map[string]any{"file_path": "b.txt", "encoding": "utf-8-sig"},
			want:   map[string]any{"content": "hi"},
		},
		{
			name:   "missing file",
			typ:    "read-file",
			params: map[string]any{"file_path": "nope.txt"},
			action: "error",
			errHas: []string{"File '$DIR/nope.txt' does not exist. Check the path; relative paths resolve against the workflow's directory."},
		},
		{
			name:   "directory",
			typ:    "read-file",
			params: map[string]any{"file_path": "."},
			action: "error",
			errHas: []string{"'$DIR' is a directory"},
		},
		{
			name:   "missing param",
			typ:    "read-file",
			params: map[string]any{},
			action: "refused",
			errHas: []string{"'file_path'", "required"},
		},
		{
			name:   "bad encoding",
			typ:    "read-file",
			setup:  func(t *testing.T, dir string) { write(t, filepath.Join(dir, "a.txt"), "x") },
			params: map[string]any{"file_path": "a.txt", "encoding": "ebcdic"},
			action: "refused",
			errHas: []string{"'encoding'", "utf-8"},
		},
	})
}

func TestReadFileAbsoluteAndHome(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "abs.txt")
	write(t, p, "x")
	res, err := call(t, "read-file", "/somewhere/else", map[string]any{"file_path": p})
	if err != nil || res.Outputs["content"] != "x" {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	t.Setenv("HOME", dir)
	res, err = call(t, "read-file", "/somewhere/else", map[string]any{"file_path": "~/abs.txt"})
	if err != nil || res.Outputs["content"] != "x" || res.Outputs["file_path"] != p {
		t.Fatalf("~ not expanded: res=%+v err=%v", res, err)
	}
}

func TestWriteFile(t *testing.T) {
	runTable(t, []tc{
		{
			name: "creates parents, atomic replace",
			typ:  "write-file",
			setup: func(t *testing.T, dir string) {
				write(t, filepath.Join(dir, "out", "a.txt"), "old content that is longer")
			},
			params: map[string]any{"file_path": "out/a.txt", "content": "new"},
			want:   map[string]any{"written": true, "bytes": int64(3), "file_path": "$DIR/out/a.txt"},
			check: func(t *testing.T, dir string) {
				if got := readBack(t, filepath.Join(dir, "out", "a.txt")); got != "new" {
					t.Errorf("file = %q", got)
				}
				entries, _ := os.ReadDir(filepath.Join(dir, "out"))
				if len(entries) != 1 {
					t.Errorf("temp files left behind: %v", entries)
				}
			},
		},
		{
			name:   "new nested file",
			typ:    "write-file",
			params: map[string]any{"file_path": "a/b/c.txt", "content": "x"},
			want:   map[string]any{"written": true},
			check: func(t *testing.T, dir string) {
				if readBack(t, filepath.Join(dir, "a/b/c.txt")) != "x" {
					t.Error("not written")
				}
			},
		},
		{
			name:   "append",
			typ:    "write-file",
			setup:  func(t *testing.T, dir string) { write(t, filepath.Join(dir, "log.txt"), "one\n") },
			params: map[string]any{"file_path": "log.txt", "content": "two\n", "append": true},
			want:   map[string]any{"written": true, "bytes": int64(4)},
			check: func(t *testing.T, dir string) {
				if got := readBack(t, filepath.Join(dir, "log.txt")); got != "one\ntwo\n" {
					t.Errorf("file = %q", got)
				}
			},
		},
		{
			name:   "empty content writes an empty file",
			typ:    "write-file",
			params: map[string]any{"file_path": "empty.txt", "content": ""},
			want:   map[string]any{"written": true, "bytes": int64(0)},
		},
		{
			name:   "dict content as JSON",
			typ:    "write-file",
			params: map[string]any{"file_path": "d.json", "content": map[string]any{"a": int64(1)}},
			check: func(t *testing.T, dir string) {
				if got := readBack(t, filepath.Join(dir, "d.json")); got != `{"a":1}` {
					t.Errorf("file = %q", got)
				}
			},
		},
		{
			name:   "binary from base64",
			typ:    "write-file",
			params: map[string]any{"file_path": "b.bin", "content": "//4A", "content_is_binary": true},
			want:   map[string]any{"bytes": int64(3)},
			check: func(t *testing.T, dir string) {
				if got := readBack(t, filepath.Join(dir, "b.bin")); got != "\xff\xfe\x00" {
					t.Errorf("file = %q", got)
				}
			},
		},
		{
			name:   "latin-1 encoding",
			typ:    "write-file",
			params: map[string]any{"file_path": "l.txt", "content": "café", "encoding": "latin-1"},
			check: func(t *testing.T, dir string) {
				if got := readBack(t, filepath.Join(dir, "l.txt")); got != "caf\xe9" {
					t.Errorf("file = %q", got)
				}
			},
		},
		{
			name:   "ascii cannot encode",
			typ:    "write-file",
			params: map[string]any{"file_path": "a.txt", "content": "café", "encoding": "ascii"},
			action: "refused",
			errHas: []string{"cannot be written as ascii"},
		},
		{
			name:   "invalid base64",
			typ:    "write-file",
			params: map[string]any{"file_path": "a.bin", "content": "not base64!", "content_is_binary": true},
			action: "refused",
			errHas: []string{"not valid base64"},
		},
		{
			name:   "missing content",
			typ:    "write-file",
			params: map[string]any{"file_path": "a.txt"},
			action: "refused",
			errHas: []string{"'content'", "required"},
		},
		{
			name:   "path is a directory",
			typ:    "write-file",
			setup:  func(t *testing.T, dir string) { os.Mkdir(filepath.Join(dir, "d"), 0o755) },
			params: map[string]any{"file_path": "d", "content": "x"},
			action: "error",
			errHas: []string{"'$DIR/d' is a directory"},
			want:   map[string]any{"written": false},
		},
		{
			name:   "parent is a file",
			typ:    "write-file",
			setup:  func(t *testing.T, dir string) { write(t, filepath.Join(dir, "f"), "x") },
			params: map[string]any{"file_path": "f/a.txt", "content": "x"},
			action: "error",
			errHas: []string{"$DIR/f/a.txt"},
		},
	})
}

func TestWriteFileKeepsModeAndFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "script.sh")
	write(t, target, "old")
	os.Chmod(target, 0o750)
	link := filepath.Join(dir, "link.sh")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	res, err := call(t, "write-file", dir, map[string]any{"file_path": "link.sh", "content": "new"})
	if err != nil || res.Action != "" {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if readBack(t, target) != "new" {
		t.Error("target not written")
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o750 {
		t.Errorf("mode = %v, want 0750 kept", fi.Mode().Perm())
	}
}

func TestCopyFile(t *testing.T) {
	src := func(t *testing.T, dir string) { write(t, filepath.Join(dir, "src.txt"), "payload") }
	runTable(t, []tc{
		{
			name:   "copy into new nested path",
			typ:    "copy-file",
			setup:  src,
			params: map[string]any{"source_path": "src.txt", "dest_path": "out/dst.txt"},
			want:   map[string]any{"copied": true, "bytes": int64(7), "source_path": "$DIR/src.txt", "dest_path": "$DIR/out/dst.txt"},
			check: func(t *testing.T, dir string) {
				if readBack(t, filepath.Join(dir, "out/dst.txt")) != "payload" || readBack(t, filepath.Join(dir, "src.txt")) != "payload" {
					t.Error("copy wrong")
				}
			},
		},
		{
			name:   "into existing directory keeps the name",
			typ:    "copy-file",
			setup:  func(t *testing.T, dir string) { src(t, dir); os.Mkdir(filepath.Join(dir, "d"), 0o755) },
			params: map[string]any{"source_path": "src.txt", "dest_path": "d"},
			want:   map[string]any{"dest_path": "$DIR/d/src.txt"},
		},
		{
			name:   "trailing slash means directory",
			typ:    "copy-file",
			setup:  src,
			params: map[string]any{"source_path": "src.txt", "dest_path": "newdir/"},
			want:   map[string]any{"dest_path": "$DIR/newdir/src.txt"},
		},
		{
			name:   "existing destination refused",
			typ:    "copy-file",
			setup:  func(t *testing.T, dir string) { src(t, dir); write(t, filepath.Join(dir, "dst.txt"), "keep") },
			params: map[string]any{"source_path": "src.txt", "dest_path": "dst.txt"},
			action: "error",
			errHas: []string{"Destination file '$DIR/dst.txt' already exists. Add '- overwrite: true' to the step to replace it."},
			check: func(t *testing.T, dir string) {
				if readBack(t, filepath.Join(dir, "dst.txt")) != "keep" {
					t.Error("destination overwritten")
				}
			},
		},
		{
			name:   "overwrite",
			typ:    "copy-file",
			setup:  func(t *testing.T, dir string) { src(t, dir); write(t, filepath.Join(dir, "dst.txt"), "old") },
			params: map[string]any{"source_path": "src.txt", "dest_path": "dst.txt", "overwrite": true},
			want:   map[string]any{"copied": true},
			check: func(t *testing.T, dir string) {
				if readBack(t, filepath.Join(dir, "dst.txt")) != "payload" {
					t.Error("not overwritten")
				}
			},
		},
		{
			name:   "missing source",
			typ:    "copy-file",
			params: map[string]any{"source_path": "nope", "dest_path": "x"},
			action: "error",
			errHas: []string{"Source file '$DIR/nope' does not exist"},
			want:   map[string]any{"copied": false},
		},
		{
			name:   "directory source refused",
			typ:    "copy-file",
			setup:  func(t *testing.T, dir string) { os.Mkdir(filepath.Join(dir, "d"), 0o755) },
			params: map[string]any{"source_path": "d", "dest_path": "e"},
			action: "error",
			errHas: []string{"is a directory; copy-file handles single files"},
		},
		{
			name:   "same file",
			typ:    "copy-file",
			setup:  src,
			params: map[string]any{"source_path": "src.txt", "dest_path": "./src.txt", "overwrite": true},
			action: "error",
			errHas: []string{"same file"},
		},
	})
}

func TestCopyFileKeepsModeAndTime(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.sh")
	write(t, p, "#!/bin/sh")
	os.Chmod(p, 0o755)
	mtime := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	os.Chtimes(p, mtime, mtime)
	if res, err := call(t, "copy-file", dir, map[string]any{"source_path": "run.sh", "dest_path": "copy.sh"}); err != nil || res.Action != "" {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	fi, err := os.Stat(filepath.Join(dir, "copy.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o755 || !fi.ModTime().Equal(mtime) {
		t.Errorf("mode %v mtime %v", fi.Mode().Perm(), fi.ModTime())
	}
}

func TestMoveFile(t *testing.T) {
	src := func(t *testing.T, dir string) { write(t, filepath.Join(dir, "src.txt"), "payload") }
	gone := func(t *testing.T, dir string) {
		if _, err := os.Stat(filepath.Join(dir, "src.txt")); !os.IsNotExist(err) {
			t.Error("source still exists")
		}
	}
	runTable(t, []tc{
		{
			name:   "move",
			typ:    "move-file",
			setup:  src,
			params: map[string]any{"source_path": "src.txt", "dest_path": "sub/dst.txt"},
			want:   map[string]any{"moved": true, "dest_path": "$DIR/sub/dst.txt"},
			check: func(t *testing.T, dir string) {
				gone(t, dir)
				if readBack(t, filepath.Join(dir, "sub/dst.txt")) != "payload" {
					t.Error("dest wrong")
				}
			},
		},
		{
			name:   "existing destination refused",
			typ:    "move-file",
			setup:  func(t *testing.T, dir string) { src(t, dir); write(t, filepath.Join(dir, "dst.txt"), "keep") },
			params: map[string]any{"source_path": "src.txt", "dest_path": "dst.txt"},
			action: "error",
			errHas: []string{"already exists", "overwrite: true"},
			check: func(t *testing.T, dir string) {
				if readBack(t, filepath.Join(dir, "dst.txt")) != "keep" || readBack(t, filepath.Join(dir, "src.txt")) != "payload" {
					t.Error("files changed")
				}
			},
		},
		{
			name:   "overwrite",
			typ:    "move-file",
			setup:  func(t *testing.T, dir string) { src(t, dir); write(t, filepath.Join(dir, "dst.txt"), "old") },
			params: map[string]any{"source_path": "src.txt", "dest_path": "dst.txt", "overwrite": true},
			want:   map[string]any{"moved": true},
			check: func(t *testing.T, dir string) {
				gone(t, dir)
				if readBack(t, filepath.Join(dir, "dst.txt")) != "payload" {
					t.Error("not overwritten")
				}
			},
		},
		{
			name:   "missing source",
			typ:    "move-file",
			params: map[string]any{"source_path": "nope", "dest_path": "x"},
			action: "error",
			errHas: []string{"Source file '$DIR/nope' does not exist"},
		},
		{
			name:   "missing dest param",
			typ:    "move-file",
			setup:  src,
			params: map[string]any{"source_path": "src.txt"},
			action: "refused",
			errHas: []string{"'dest_path'"},
		},
	})
}

func TestDeleteFile(t *testing.T) {
	runTable(t, []tc{
		{
			name:   "deletes with confirm",
			typ:    "delete-file",
			setup:  func(t *testing.T, dir string) { write(t, filepath.Join(dir, "a.txt"), "x") },
			params: map[string]any{"file_path": "a.txt", "confirm": true},
			want:   map[string]any{"deleted": true, "file_path": "$DIR/a.txt"},
			check: func(t *testing.T, dir string) {
				if _, err := os.Stat(filepath.Join(dir, "a.txt")); !os.IsNotExist(err) {
					t.Error("file still exists")
				}
			},
		},
		{
			name:   "missing file is success",
			typ:    "delete-file",
			params: map[string]any{"file_path": "nope.txt", "confirm": true},
			want:   map[string]any{"deleted": false},
		},
		{
			name:   "without confirm refused",
			typ:    "delete-file",
			setup:  func(t *testing.T, dir string) { write(t, filepath.Join(dir, "a.txt"), "x") },
			params: map[string]any{"file_path": "a.txt"},
			action: "refused",
			errHas: []string{"'confirm'", "'- confirm: true'"},
			check: func(t *testing.T, dir string) {
				readBack(t, filepath.Join(dir, "a.txt"))
			},
		},
		{
			name:   "confirm false refused",
			typ:    "delete-file",
			setup:  func(t *testing.T, dir string) { write(t, filepath.Join(dir, "a.txt"), "x") },
			params: map[string]any{"file_path": "a.txt", "confirm": false},
			action: "refused",
			errHas: []string{"must be true"},
		},
		{
			name:   "directory refused",
			typ:    "delete-file",
			setup:  func(t *testing.T, dir string) { os.Mkdir(filepath.Join(dir, "d"), 0o755) },
			params: map[string]any{"file_path": "d", "confirm": true},
			action: "error",
			errHas: []string{"'$DIR/d' is a directory", "rm -r"},
			check: func(t *testing.T, dir string) {
				if _, err := os.Stat(filepath.Join(dir, "d")); err != nil {
					t.Error("directory removed")
				}
			},
		},
		{
			name: "symlink removed, target kept",
			typ:  "delete-file",
			setup: func(t *testing.T, dir string) {
				write(t, filepath.Join(dir, "t.txt"), "x")
				os.Symlink(filepath.Join(dir, "t.txt"), filepath.Join(dir, "l"))
			},
			params: map[string]any{"file_path": "l", "confirm": true},
			want:   map[string]any{"deleted": true},
			check: func(t *testing.T, dir string) {
				readBack(t, filepath.Join(dir, "t.txt"))
			},
		},
	})
}

// permDirVar makes TestPermissionDenied, run again as an unprivileged user,
// read from the directory it names.
const permDirVar = "PFLOW_TEST_PERM_DIR"

func TestPermissionDenied(t *testing.T) {
	dir := os.Getenv(permDirVar)
	if dir == "" {
		dir = t.TempDir()
		write(t, filepath.Join(dir, "secret.txt"), "x")
		os.Chmod(filepath.Join(dir, "secret.txt"), 0)
		if os.Geteuid() == 0 {
			// Root reads any file: run this test again as nobody (setpriv,
			// from util-linux), which the permissions do stop.
			os.Chmod(dir, 0o755)
			for d := filepath.Dir(dir); d != "/" && d != "."; d = filepath.Dir(d) {
				if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o001 == 0 {
					os.Chmod(d, st.Mode().Perm()|0o011) // traversable, as /tmp's children usually are
				}
			}
			cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", os.Args[0], "-test.run=^TestPermissionDenied$", "-test.count=1")
			cmd.Env = append(os.Environ(), permDirVar+"="+dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("as nobody: %v\n%s", err, out)
			}
			return
		}
	}
	p := filepath.Join(dir, "secret.txt")
	res, err := call(t, "read-file", dir, map[string]any{"file_path": "secret.txt"})
	if err != nil || res.Action != "error" || !strings.Contains(res.Outputs["error"].(string), "Permission denied reading '"+p+"'") {
		t.Fatalf("res=%+v err=%v", res, err)
	}
}

func TestFileSpecs(t *testing.T) {
	want := []string{"read-file", "write-file", "copy-file", "move-file", "delete-file"}
	specs := Specs()
	if len(specs) != len(want) {
		t.Fatalf("%d specs", len(specs))
	}
	for i, s := range specs {
		if s.Type != want[i] || s.Group != "file" || s.Attempts != 3 || s.RetryWait != 100*time.Millisecond || s.Node == nil {
			t.Errorf("spec %+v", s)
		}
		if _, ok := s.Interface.Output("error"); !ok {
			t.Errorf("%s does not declare error", s.Type)
		}
		for _, f := range append(append([]node.Field{}, s.Interface.Params...), s.Interface.Outputs...) {
			if f.Type == "" || f.Description == "" {
				t.Errorf("%s.%s not fully declared", s.Type, f.Key)
			}
		}
	}
}

// TestFileChecksRefuseLiteralValues: write-file and delete-file refuse,
// before the run, the literal values the run would refuse (by the same
// code), and leave templated values alone.
func TestFileChecksRefuseLiteralValues(t *testing.T) {
	bad := []struct {
		typ         string
		params      map[string]any
		param, want string
	}{
		{"delete-file", map[string]any{"file_path": "a.txt", "confirm": false}, "confirm", "must be true to delete 'a.txt'"},
		{"delete-file", map[string]any{"file_path": "a.txt", "confirm": "no"}, "confirm", "must be true"},
		{"write-file", map[string]any{"file_path": "a", "content": "zz!", "content_is_binary": true}, "content", "not valid base64"},
		{"write-file", map[string]any{"file_path": "a", "content": "café", "encoding": "ascii"}, "content", "cannot be written as ascii"},
	}
	for _, c := range bad {
		probs := specFor(t, c.typ).Check(context.Background(), c.params)
		if len(probs) != 1 || probs[0].Param != c.param || !strings.Contains(probs[0].Message, c.want) || probs[0].Hint == "" {
			t.Errorf("%s Check(%v) = %+v, want one problem in %s saying %q, with a fix", c.typ, c.params, probs, c.param, c.want)
		}
	}
	fine := []struct {
		typ    string
		params map[string]any
	}{
		{"delete-file", map[string]any{"file_path": "a.txt", "confirm": true}},
		{"delete-file", map[string]any{"file_path": "a.txt", "confirm": "${sure}"}},
		{"write-file", map[string]any{"file_path": "a", "content": "${data}", "content_is_binary": true}},
		{"write-file", map[string]any{"file_path": "a", "content": "zz!", "content_is_binary": "${bin}"}},
		{"write-file", map[string]any{"file_path": "a", "content": "aGk=", "content_is_binary": true}},
		{"write-file", map[string]any{"file_path": "a", "content": "café"}},
	}
	for _, c := range fine {
		if probs := specFor(t, c.typ).Check(context.Background(), c.params); len(probs) != 0 {
			t.Errorf("%s Check(%v) = %+v, want none", c.typ, c.params, probs)
		}
	}
}

// The fingerprint of a read-file step (what a resume and the step cache
// compare) changes with an edit of the same size whose mtime is put back,
// as 'cp -p', rsync or touch -d leave it: the ctime still moves.
func TestReadFingerprintSeesAnEditWithTheOldMtime(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(path, []byte("version one"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	fp := specFor(t, "read-file").Fingerprint
	req := &node.Request{Params: map[string]any{"file_path": path}, WorkflowDir: dir}
	before := fp(req)
	// Written until the fingerprint shows it (the file system's clock is coarse).
	for deadline := time.Now().Add(10 * time.Second); fp(req) == before; {
		if time.Now().After(deadline) {
			t.Fatalf("an edit of the same size with the old mtime keeps the fingerprint %q", before)
		}
		time.Sleep(time.Millisecond)
		if err := os.WriteFile(path, []byte("version two"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	if after, _ := os.Stat(path); !after.ModTime().Equal(st.ModTime()) || after.Size() != st.Size() {
		t.Fatal("the edit must keep the size and the mtime")
	}
}
