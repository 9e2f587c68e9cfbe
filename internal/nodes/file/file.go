// Package file implements the file nodes: read-file, write-file, copy-file,
// move-file and delete-file.
//
// Paths: ~ is expanded and a relative path resolves against the workflow
// file's directory (the process's working directory when there is none).
// Failures the workflow should see (missing file, destination exists,
// permission denied) are error results with a message saying what to do;
// params the node cannot use fail the step once, never retried (no retry
// changes them); unexpected I/O errors are Go errors, retried by the
// runtime (3 attempts, 0.1 s apart).
package file

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/sink"
	"github.com/pflow-go/pflow/internal/value"
)

const (
	attempts  = 3
	retryWait = 100 * time.Millisecond
	group     = "file"
)

// Specs returns the file node types.
func Specs() []*node.Spec {
	return []*node.Spec{ReadSpec(), WriteSpec(), CopySpec(), MoveSpec(), DeleteSpec()}
}

func spec(typ string, i node.Interface, run node.Func) *node.Spec {
	return &node.Spec{Type: typ, Group: group, Interface: i, Attempts: attempts, RetryWait: retryWait, Node: node.FailParamsOnce(run)}
}

var errorOutput = node.Field{Key: "error", Type: "str", Description: "Why the step failed and how to fix it; only set on failure."}

const pathHelp = "~ is expanded; a relative path resolves against the workflow file's directory (the current directory when there is none). A template value may not make a '..' segment (set allow_parent_paths to let it)."

// allowParentParam lets template values in the step's paths climb out of
// the folder written around them (see sink.Path).
var allowParentParam = node.Field{Key: sink.AllowParentPathsParam, Type: "bool", Default: false,
	Description: "Let a template value in the paths make a '..' segment (out/${name} with name ../x). Off: such a value fails the step before anything is read or written, so data stays inside the folders the workflow names."}

var encodingParam = node.Field{Key: "encoding", Type: "str", Default: "utf-8", Enum: []any{"utf-8", "utf-8-sig", "latin-1", "ascii"},
	Description: "Text encoding: utf-8 (default), utf-8-sig (UTF-8 with a byte-order mark), latin-1 or ascii."}

// pathParam is the path in param key, resolved; a path through a symlink
// another user may have planted is refused (see fsutil.PlantedLinkError).
func pathParam(req *node.Request, key string) (string, error) {
	return pathParamFollow(req, key, true)
}

// pathParamFollow is pathParam; without followLast, the path's last
// element is not followed (a link there is the file itself).
func pathParamFollow(req *node.Request, key string, followLast bool) (string, error) {
	raw, err := node.RequireString(req.Params, key)
	if err != nil {
		return "", err
	}
	p, err := node.ResolvePath(raw, req.WorkflowDir)
	if err != nil {
		return "", &node.ParamError{Param: key, Message: err.Error()}
	}
	followed := p
	if !followLast {
		followed = filepath.Dir(p)
	}
	if _, err := resolveLinks(followed); err != nil {
		return "", &node.ParamError{Param: key, Message: err.Error()}
	}
	return p, nil
}

func notExist(what, p string) string {
	return fmt.Sprintf("%s '%s' does not exist. Check the path; relative paths resolve against the workflow's directory.", what, p)
}

// ioFailure maps an error from the file system to a failure result when it
// is one the user must fix, or to a Go error (retried) otherwise.
func ioFailure(err error, verb, p string, out map[string]any) (*node.Result, error) {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return node.Fail(notExist("File", p), out), nil
	case errors.Is(err, fs.ErrPermission):
		return node.Fail(fmt.Sprintf("Permission denied %s '%s'. Check the file's permissions or choose another path.", verb, p), out), nil
	case errors.Is(err, syscall.ENOSPC):
		return node.Fail(fmt.Sprintf("No space left on the device while %s '%s'. Free some space and run again.", verb, p), out), nil
	case errors.Is(err, syscall.EROFS):
		return node.Fail(fmt.Sprintf("Cannot write '%s': the file system is read-only.", p), out), nil
	case errors.Is(err, syscall.ENOTDIR):
		return node.Fail(fmt.Sprintf("A parent of '%s' is a file, not a directory. Check the path.", p), out), nil
	}
	return nil, fmt.Errorf("error %s '%s': %v", verb, p, unwrapPathError(err))
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// ---- read-file ----

// ReadSpec returns the read-file node type. It changes nothing (a resume
// may run it again) but is not cached by default: files change. Its
// fingerprint (the file's size and modification time) makes a resume read a
// file again when it changed, and keys the step cache of a step that opts in.
func ReadSpec() *node.Spec {
	s := readSpec()
	s.Effects = node.Effects{ReadOnly: true}
	s.Fingerprint = readFingerprint
	s.MainOutput = "content"
	return s
}

// readFingerprint describes the version of the file a read-file request
// will read (fsutil.VersionOf: size, mtime, ctime, inode — an edit of the
// same size with its mtime put back, as 'cp -p' or touch leave it, still
// changes the ctime), so a resume or the step cache does not serve what an
// earlier version held.
func readFingerprint(req *node.Request) string {
	p, err := pathParam(req, "file_path")
	if err != nil {
		return "unresolved"
	}
	st, err := os.Stat(p)
	if err != nil {
		return "missing:" + p
	}
	v := fsutil.VersionOf(st)
	return fmt.Sprintf("%s:%d:%d:%d:%d", p, v.Size, v.MTime, v.CTime, v.Ino)
}

func readSpec() *node.Spec {
	return spec("read-file", node.Interface{
		Description: "Read a file's content. Text is returned as-is (set line_numbers to prefix each line with its number); " +
			"binary files (images, PDFs, archives, or content that is not valid in the encoding) are returned base64-encoded with content_is_binary set.",
		Params: []node.Field{
			{Key: "file_path", Type: "str", Required: true, Sink: node.SinkPath, Description: "Path of the file to read. " + pathHelp},
			encodingParam,
			{Key: "line_numbers", Type: "bool", Default: false, Description: "Prefix every line with its 1-based number (\"1: first line\"), e.g. to quote line numbers to an LLM."},
			allowParentParam,
		},
		Outputs: []node.Field{
			{Key: "content", Type: "str", Description: "The file's text, or its base64 encoding when content_is_binary is true."},
			{Key: "content_is_binary", Type: "bool", Description: "True when content is base64-encoded binary data."},
			{Key: "file_path", Type: "str", Description: "Absolute path of the file read."},
			errorOutput,
		},
		Actions: []string{"default", "error"},
	}, runRead)
}

// binaryExt are extensions read as binary even when the bytes happen to be
// valid text. Built on first use, not at start-up.
var binaryExt = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, e := range strings.Fields(`png jpg jpeg gif bmp ico webp tif tiff psd heic avif pdf zip gz tgz tar bz2 xz zst 7z rar
		mp3 mp4 m4a wav ogg flac aac avi mov mkv webm exe dll so dylib bin class jar war whl pyc o a wasm
		woff woff2 ttf otf eot sqlite sqlite3 db parquet avro pkl npy npz docx xlsx pptx odt ods`) {
		m["."+e] = true
	}
	return m
})

func runRead(ctx context.Context, req *node.Request) (*node.Result, error) {
	p, err := pathParam(req, "file_path")
	if err != nil {
		return nil, err
	}
	enc, err := encodingOf(req.Params)
	if err != nil {
		return nil, err
	}
	lineNumbers, err := node.Bool(req.Params, "line_numbers", false)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"file_path": p}
	st, err := os.Stat(p)
	if err != nil {
		return ioFailure(err, "reading", p, out)
	}
	if st.IsDir() {
		return node.Fail(fmt.Sprintf("'%s' is a directory, not a file. Give the path of a file inside it (a shell step with ls lists its entries).", p), out), nil
	}
	data, err := fsutil.ReadFileUnplanted(p) // the link rule again, where it is opened
	if err != nil {
		var pl *fsutil.PlantedLinkError
		if errors.As(err, &pl) {
			return nil, &node.ParamError{Param: "file_path", Message: err.Error()}
		}
		return ioFailure(err, "reading", p, out)
	}
	text, ok := "", false
	if !binaryExt()[strings.ToLower(filepath.Ext(p))] {
		text, ok = decode(data, enc)
	}
	if !ok {
		out["content"] = base64.StdEncoding.EncodeToString(data)
		out["content_is_binary"] = true
		return node.Ok(out), nil
	}
	if lineNumbers {
		text = numberLines(text)
	}
	out["content"] = text
	out["content_is_binary"] = false
	return node.Ok(out), nil
}

func numberLines(s string) string {
	if s == "" {
		return s
	}
	trailing := strings.HasSuffix(s, "\n")
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	var b strings.Builder
	b.Grow(len(s) + len(lines)*4)
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteString(": ")
		b.WriteString(l)
	}
	if trailing {
		b.WriteByte('\n')
	}
	return b.String()
}

// ---- encodings ----

type encoding string

func encodingOf(p map[string]any) (encoding, error) {
	e := strings.ToLower(strings.TrimSpace(node.String(p, "encoding", "utf-8")))
	switch e {
	case "", "utf-8", "utf8":
		return "utf-8", nil
	case "utf-8-sig", "utf8-sig":
		return "utf-8-sig", nil
	case "latin-1", "latin1", "iso-8859-1", "iso8859-1":
		return "latin-1", nil
	case "ascii", "us-ascii":
		return "ascii", nil
	}
	return "", &node.ParamError{Param: "encoding", Message: fmt.Sprintf("%q is not supported; use utf-8, utf-8-sig, latin-1 or ascii", e)}
}

const bom = "\xef\xbb\xbf"

// decode converts file bytes to text; ok is false when they are not valid in
// the encoding (the caller then treats the file as binary).
func decode(data []byte, enc encoding) (string, bool) {
	switch enc {
	case "latin-1":
		r := make([]rune, len(data))
		for i, c := range data {
			r[i] = rune(c)
		}
		return string(r), true
	case "ascii":
		for _, c := range data {
			if c >= 0x80 {
				return "", false
			}
		}
		return string(data), true
	case "utf-8-sig":
		s := strings.TrimPrefix(string(data), bom)
		return s, utf8.ValidString(s)
	default:
		return string(data), utf8.Valid(data)
	}
}

// encode converts text to file bytes.
func encode(s string, enc encoding) ([]byte, error) {
	switch enc {
	case "latin-1", "ascii":
		limit := rune(0xff)
		if enc == "ascii" {
			limit = 0x7f
		}
		b := make([]byte, 0, len(s))
		for i, r := range s {
			if r > limit {
				return nil, fmt.Errorf("character %q at byte %d cannot be written as %s; use encoding utf-8", r, i, enc)
			}
			b = append(b, byte(r))
		}
		return b, nil
	case "utf-8-sig":
		return []byte(bom + strings.TrimPrefix(s, bom)), nil
	}
	return []byte(s), nil
}

// ---- write-file ----

// WriteSpec returns the write-file node type: piped data is the content
// written.
func WriteSpec() *node.Spec {
	s := writeSpec()
	s.Check = checkWrite
	s.StdinParam = "content"
	s.MainOutput = "file_path"
	return s
}

func writeSpec() *node.Spec {
	return spec("write-file", node.Interface{
		Description: "Write text (or base64-decoded binary data) to a file, creating parent directories. " +
			"A write replaces the file atomically: readers see the old or the new content, never a mix. " +
			"With append, content is added to the end of the file instead.",
		Params: []node.Field{
			{Key: "file_path", Type: "str", Required: true, Sink: node.SinkPath, Description: "Path of the file to write. " + pathHelp},
			{Key: "content", Type: "str", Required: true, Also: []string{"text", "data", "body", "contents"}, Description: "Content to write; a dict or list is written as JSON. May be empty."},
			{Key: "append", Type: "bool", Default: false, Description: "Append to the file instead of replacing it."},
			encodingParam,
			{Key: "content_is_binary", Type: "bool", Default: false, Description: "content is base64 (e.g. from read-file or an http binary response); decode it and write the bytes."},
			allowParentParam,
		},
		Outputs: []node.Field{
			{Key: "written", Type: "bool", Description: "True when the content was written."},
			{Key: "file_path", Type: "str", Description: "Absolute path of the file written."},
			{Key: "bytes", Type: "int", Description: "Number of bytes written."},
			errorOutput,
		},
		Actions: []string{"default", "error"},
	}, runWrite)
}

// checkWrite is write-file's static check: literal content the run could
// not write in the step's encoding (or, with content_is_binary, that is
// not base64), refused by the same code.
func checkWrite(_ context.Context, params map[string]any) []node.Problem {
	p := node.Literal(params)
	raw, ok := p["content"]
	if !ok || raw == nil {
		return nil
	}
	if _, ok := params["content_is_binary"]; ok && p["content_is_binary"] == nil {
		return nil // templated: known when the step runs
	}
	if _, ok := params["encoding"]; ok && p["encoding"] == nil {
		return nil
	}
	isBinary, err := node.Bool(p, "content_is_binary", false)
	if err != nil {
		return nil // validation's type check
	}
	enc, err := encodingOf(p)
	if err != nil {
		return nil // validation's enum check
	}
	if _, err := contentBytes(value.Stringify(raw), isBinary, enc); err != nil {
		hint := "Write content in the step's encoding, or set '- encoding: utf-8'."
		if isBinary {
			hint = "Give content as base64 (e.g. ${read.content} of a binary file), or remove '- content_is_binary: true' to write the text as it is."
		}
		return []node.Problem{{Param: "content", Message: err.Error(), Hint: hint}}
	}
	return nil
}

// contentBytes are the bytes write-file writes for content.
func contentBytes(content string, isBinary bool, enc encoding) ([]byte, error) {
	if isBinary {
		data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(content))
		if err != nil {
			return nil, &node.ParamError{Param: "content", Message: fmt.Sprintf("content_is_binary is true but content is not valid base64 (%v)", err)}
		}
		return data, nil
	}
	data, err := encode(content, enc)
	if err != nil {
		return nil, &node.ParamError{Param: "content", Message: err.Error()}
	}
	return data, nil
}

func runWrite(ctx context.Context, req *node.Request) (*node.Result, error) {
	p, err := pathParam(req, "file_path")
	if err != nil {
		return nil, err
	}
	raw, present := req.Params["content"]
	if !present || raw == nil {
		return nil, &node.ParamError{Param: "content", Message: "is required but missing. Add '- content: ...' to the step (an empty string writes an empty file)"}
	}
	content := value.Stringify(raw)
	appendMode, err := node.Bool(req.Params, "append", false)
	if err != nil {
		return nil, err
	}
	isBinary, err := node.Bool(req.Params, "content_is_binary", false)
	if err != nil {
		return nil, err
	}
	enc, err := encodingOf(req.Params)
	if err != nil {
		return nil, err
	}
	data, err := contentBytes(content, isBinary, enc)
	if err != nil {
		return nil, err
	}

	out := map[string]any{"written": false, "file_path": p, "bytes": int64(0)}
	// Write through a symlink to its target, as editors and shells do (not
	// through one another user planted: pathParam refused it).
	target, err := resolveLinks(p)
	if err != nil {
		return nil, &node.ParamError{Param: "file_path", Message: err.Error()}
	}
	if st, err := os.Stat(target); err == nil && st.IsDir() {
		return node.Fail(fmt.Sprintf("'%s' is a directory. Give a file path inside it, e.g. '%s'.", p, filepath.Join(p, "output.txt")), out), nil
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return ioFailure(err, "creating the directory for", p, out)
	}
	if appendMode {
		// target has no link left to follow: one that appears meanwhile is
		// not followed either.
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			return ioFailure(err, "writing", p, out)
		}
		_, werr := f.Write(data)
		cerr := f.Close()
		if werr == nil {
			werr = cerr
		}
		if werr != nil {
			return ioFailure(werr, "writing", p, out)
		}
	} else {
		perm := fs.FileMode(0o644)
		if st, err := os.Stat(target); err == nil {
			perm = st.Mode().Perm()
		}
		if err := fsutil.WriteFileAtomic(target, data, perm); err != nil {
			return ioFailure(err, "writing", p, out)
		}
	}
	out["written"] = true
	out["bytes"] = int64(len(data))
	return node.Ok(out), nil
}

// ---- copy-file / move-file ----

func transferInterface(verb, past, extra string, outputs ...node.Field) node.Interface {
	outs := []node.Field{
		{Key: past, Type: "bool", Description: "True when the file was " + past + "."},
		{Key: "source_path", Type: "str", Description: "Absolute source path."},
		{Key: "dest_path", Type: "str", Description: "Absolute destination path (inside dest_path when it names a directory)."},
	}
	outs = append(outs, outputs...)
	outs = append(outs, errorOutput)
	return node.Interface{
		Description: strings.ToUpper(verb[:1]) + verb[1:] + " a single file, creating the destination's parent directories. " +
			"When dest_path is an existing directory the file keeps its name inside it. An existing destination is only replaced with overwrite. " + extra,
		Params: []node.Field{
			{Key: "source_path", Type: "str", Required: true, Sink: node.SinkPath, Description: "File to " + verb + ". " + pathHelp},
			{Key: "dest_path", Type: "str", Required: true, Sink: node.SinkPath, Description: "Destination file or existing directory. " + pathHelp},
			{Key: "overwrite", Type: "bool", Default: false, Description: "Replace the destination if it exists."},
			allowParentParam,
		},
		Outputs: outs,
		Actions: []string{"default", "error"},
	}
}

// CopySpec returns the copy-file node type.
func CopySpec() *node.Spec {
	return spec("copy-file", transferInterface("copy", "copied", "Permissions and modification time are kept; the copy appears atomically.",
		node.Field{Key: "bytes", Type: "int", Description: "Number of bytes copied."}), runCopy)
}

// MoveSpec returns the move-file node type.
func MoveSpec() *node.Spec {
	return spec("move-file", transferInterface("move", "moved", "Works across file systems (copy, then delete the source).",
		node.Field{Key: "warning", Type: "str", Description: "Set when the file was copied to another file system but the source could not be deleted."}), runMove)
}

type transfer struct {
	src, dst  string
	overwrite bool
	srcInfo   fs.FileInfo
	out       map[string]any
}

// prepareTransfer validates the params of copy-file and move-file; a non-nil
// result is a failure to return as-is.
func prepareTransfer(req *node.Request, typ, past string) (*transfer, *node.Result, error) {
	src, err := pathParam(req, "source_path")
	if err != nil {
		return nil, nil, err
	}
	dst, err := pathParam(req, "dest_path")
	if err != nil {
		return nil, nil, err
	}
	overwrite, err := node.Bool(req.Params, "overwrite", false)
	if err != nil {
		return nil, nil, err
	}
	t := &transfer{src: src, dst: dst, overwrite: overwrite}
	t.out = map[string]any{past: false, "source_path": src, "dest_path": dst}
	st, err := os.Stat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, node.Fail(notExist("Source file", src), t.out), nil
	}
	if err != nil {
		r, e := ioFailure(err, "reading", src, t.out)
		return nil, r, e
	}
	if st.IsDir() {
		return nil, node.Fail(fmt.Sprintf("Source '%s' is a directory; %s handles single files. Use a shell step (cp -r / mv) for directories.", src, typ), t.out), nil
	}
	if !st.Mode().IsRegular() {
		return nil, node.Fail(fmt.Sprintf("Source '%s' is not a regular file.", src), t.out), nil
	}
	t.srcInfo = st
	if dst := t.dst; strings.HasSuffix(node.String(req.Params, "dest_path", ""), "/") {
		if ds, err := os.Stat(dst); err != nil || !ds.IsDir() {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				r, e := ioFailure(err, "creating", dst, t.out)
				return nil, r, e
			}
		}
	}
	if ds, err := os.Stat(t.dst); err == nil && ds.IsDir() {
		t.dst = filepath.Join(t.dst, filepath.Base(src))
		t.out["dest_path"] = t.dst
	}
	if ds, err := os.Stat(t.dst); err == nil {
		if os.SameFile(st, ds) {
			return nil, node.Fail(fmt.Sprintf("Source and destination are the same file ('%s').", src), t.out), nil
		}
		if ds.IsDir() {
			return nil, node.Fail(fmt.Sprintf("Destination '%s' is a directory.", t.dst), t.out), nil
		}
		if !overwrite {
			return nil, node.Fail(existsMessage(t.dst), t.out), nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(t.dst), 0o755); err != nil {
		r, e := ioFailure(err, "creating the directory for", t.dst, t.out)
		return nil, r, e
	}
	return t, nil, nil
}

func existsMessage(p string) string {
	return fmt.Sprintf("Destination file '%s' already exists. Add '- overwrite: true' to the step to replace it.", p)
}

func runCopy(ctx context.Context, req *node.Request) (*node.Result, error) {
	t, res, err := prepareTransfer(req, "copy-file", "copied")
	if t == nil {
		return res, err
	}
	n, err := copyFile(ctx, t.src, t.dst, t.srcInfo, t.overwrite)
	if errors.Is(err, fs.ErrExist) {
		return node.Fail(existsMessage(t.dst), t.out), nil
	}
	if err != nil {
		return ioFailure(err, "copying to", t.dst, t.out)
	}
	t.out["copied"] = true
	t.out["bytes"] = n
	return node.Ok(t.out), nil
}

// copyFile copies src to dst through a temp file in dst's directory, keeping
// mode and modification time. Without overwrite an existing dst is never
// replaced (fs.ErrExist).
func copyFile(ctx context.Context, src, dst string, info fs.FileInfo, overwrite bool) (int64, error) {
	in, err := fsutil.OpenUnplanted(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.tmp")
	if err != nil {
		return 0, err
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	n, err := io.Copy(tmp, ctxReader{ctx, in})
	if err == nil {
		err = tmp.Chmod(info.Mode().Perm())
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	_ = os.Chtimes(tmpName, info.ModTime(), info.ModTime())
	if overwrite {
		return n, os.Rename(tmpName, dst)
	}
	if err := os.Link(tmpName, dst); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return 0, fs.ErrExist
		}
		// No hard links on this file system: check, then rename.
		if _, serr := os.Lstat(dst); serr == nil {
			return 0, fs.ErrExist
		}
		return n, os.Rename(tmpName, dst)
	}
	return n, nil
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func runMove(ctx context.Context, req *node.Request) (*node.Result, error) {
	t, res, err := prepareTransfer(req, "move-file", "moved")
	if t == nil {
		return res, err
	}
	if t.overwrite {
		err = os.Rename(t.src, t.dst)
	} else {
		// Link + unlink never replaces a destination that appeared meanwhile.
		err = os.Link(t.src, t.dst)
		switch {
		case err == nil:
			if rerr := os.Remove(t.src); rerr != nil {
				os.Remove(t.dst)
				return ioFailure(rerr, "removing", t.src, t.out)
			}
		case errors.Is(err, fs.ErrExist):
			return node.Fail(existsMessage(t.dst), t.out), nil
		case !errors.Is(err, syscall.EXDEV):
			// No hard links here (or not allowed): check, then rename.
			if _, serr := os.Lstat(t.dst); serr == nil {
				return node.Fail(existsMessage(t.dst), t.out), nil
			}
			err = os.Rename(t.src, t.dst)
		}
	}
	if errors.Is(err, syscall.EXDEV) {
		// Another file system: copy, then delete the source.
		if _, cerr := copyFile(ctx, t.src, t.dst, t.srcInfo, t.overwrite); cerr != nil {
			if errors.Is(cerr, fs.ErrExist) {
				return node.Fail(existsMessage(t.dst), t.out), nil
			}
			return ioFailure(cerr, "moving to", t.dst, t.out)
		}
		t.out["moved"] = true
		if rerr := os.Remove(t.src); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			t.out["warning"] = fmt.Sprintf("Copied to '%s' but could not delete the source '%s': %v. Delete it yourself.", t.dst, t.src, unwrapPathError(rerr))
		}
		return node.Ok(t.out), nil
	}
	if err != nil {
		return ioFailure(err, "moving to", t.dst, t.out)
	}
	t.out["moved"] = true
	return node.Ok(t.out), nil
}

// ---- delete-file ----

// DeleteSpec returns the delete-file node type.
func DeleteSpec() *node.Spec {
	s := spec("delete-file", node.Interface{
		Description: "Delete a single file. The step must say '- confirm: true'; a file that does not exist counts as deleted " +
			"(the step succeeds with deleted false). Directories are refused; a symlink is removed, not its target.",
		Params: []node.Field{
			{Key: "file_path", Type: "str", Required: true, Sink: node.SinkPath, Description: "File to delete. " + pathHelp},
			{Key: "confirm", Type: "bool", Required: true, Description: "Must be true: makes every deletion explicit in the workflow."},
			allowParentParam,
		},
		Outputs: []node.Field{
			{Key: "deleted", Type: "bool", Description: "True when a file was removed; false when it did not exist."},
			{Key: "file_path", Type: "str", Description: "Absolute path of the file."},
			errorOutput,
		},
		Actions: []string{"default", "error"},
	}, runDelete)
	s.Check = checkDelete
	return s
}

func unconfirmed(p string) error {
	return &node.ParamError{Param: "confirm", Message: fmt.Sprintf("must be true to delete '%s'. Add '- confirm: true' to the step to make the deletion explicit", p)}
}

// checkDelete is delete-file's static check: a literal confirm that is not
// true, which the run refuses.
func checkDelete(_ context.Context, params map[string]any) []node.Problem {
	p := node.Literal(params)
	if _, ok := p["confirm"]; !ok {
		return nil // missing (validation says so) or templated
	}
	if confirm, err := node.Bool(p, "confirm", false); err == nil && !confirm {
		return []node.Problem{{Param: "confirm", Message: unconfirmed(node.String(params, "file_path", "")).Error(),
			Hint: "Set '- confirm: true' on the step (a delete-file step runs only when it says so), or remove the step."}}
	}
	return nil
}

func runDelete(ctx context.Context, req *node.Request) (*node.Result, error) {
	p, err := pathParamFollow(req, "file_path", false) // a link is removed, not followed
	if err != nil {
		return nil, err
	}
	confirm, err := node.Bool(req.Params, "confirm", false)
	if err != nil {
		return nil, err
	}
	if !confirm {
		return nil, unconfirmed(p)
	}
	out := map[string]any{"deleted": false, "file_path": p}
	st, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return node.Ok(out), nil
	}
	if err != nil {
		return ioFailure(err, "deleting", p, out)
	}
	if st.IsDir() {
		return node.Fail(fmt.Sprintf("'%s' is a directory; delete-file removes single files. Use a shell step (rm -r) to remove a directory.", p), out), nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ioFailure(err, "deleting", p, out)
	}
	out["deleted"] = true
	return node.Ok(out), nil
}
