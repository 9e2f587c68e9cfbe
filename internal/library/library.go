// Package library is pflow's workflow library: saved workflows in
// $PFLOW_HOME/workflows/<name>.pflow.md with a YAML frontmatter block of
// metadata above the untouched markdown body, and drafts in
// $PFLOW_HOME/drafts/.
package library

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pflow-go/pflow/internal/suggest"

	"go.yaml.in/yaml/v3"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// Ext is the extension of saved workflows.
const Ext = ".pflow.md"

// MaxNameLen is the longest workflow name.
const MaxNameLen = 50

// MetadataVersion is the version written for new saves.
const MetadataVersion = "1.0.0"

// Reserved names cannot be used for saved workflows: they are pflow
// commands (or would be confusing). Checked case-insensitively.
var Reserved = []string{"cache", "completion", "help", "instructions", "mcp", "none", "null", "read-fields", "registry", "run", "runs", "serve", "settings", "skill", "test", "undefined", "worker", "workflow"}

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`) })

// Library is the set of saved workflows.
type Library struct {
	Dir       string // $PFLOW_HOME/workflows
	DraftsDir string // $PFLOW_HOME/drafts
	Log       io.Writer
}

// Metadata is the frontmatter of a saved workflow, in file order.
type Metadata struct {
	Description                     string         `yaml:"description,omitempty" json:"description,omitempty"`
	CreatedAt                       string         `yaml:"created_at,omitempty" json:"created_at,omitempty"`
	UpdatedAt                       string         `yaml:"updated_at,omitempty" json:"updated_at,omitempty"`
	Version                         string         `yaml:"version,omitempty" json:"version,omitempty"`
	ExecutionCount                  int            `yaml:"execution_count" json:"execution_count"`
	AverageExecutionDurationSeconds float64        `yaml:"average_execution_duration_seconds,omitempty" json:"average_execution_duration_seconds,omitempty"`
	LastExecutionTimestamp          string         `yaml:"last_execution_timestamp,omitempty" json:"last_execution_timestamp,omitempty"`
	LastExecutionSuccess            *bool          `yaml:"last_execution_success,omitempty" json:"last_execution_success,omitempty"`
	LastExecutionDurationSeconds    float64        `yaml:"last_execution_duration_seconds,omitempty" json:"last_execution_duration_seconds,omitempty"`
	LastExecutionParams             map[string]any `yaml:"last_execution_params,omitempty" json:"last_execution_params,omitempty"`
	// Extra keeps keys pflow does not manage (search_keywords, ...).
	Extra map[string]any `yaml:",inline" json:"-"`
}

// Saved is one saved workflow.
type Saved struct {
	Name        string
	Path        string
	Description string
	Workflow    *workflow.Workflow
	Meta        Metadata
}

// SaveOptions control Save.
type SaveOptions struct {
	// Force overwrites an existing workflow of the same name.
	Force bool
	// DeleteDraft removes SourcePath after saving when it is a file in DraftsDir.
	DeleteDraft bool
	// Description overrides the markdown description in listings.
	Description string
	// SourcePath is where the content came from (error locations, DeleteDraft).
	SourcePath string
}

// ValidateName checks a workflow name: a path-like name is a security error,
// anything else that breaks the naming rules is a validation error.
func ValidateName(name string) error {
	if name == "" {
		return pferr.New(pferr.Validation, "workflow name is empty").
			WithHint("Names use lowercase letters, numbers and single hyphens, e.g. 'release-notes'.")
	}
	if strings.ContainsAny(name, "/\\\x00") || strings.Contains(name, "..") || filepath.IsAbs(name) {
		return &pferr.Error{Kind: pferr.Security,
			Message: fmt.Sprintf("workflow name %q looks like a path; names cannot contain '/', '\\', '..' or NUL", name),
			Hint:    "Use a plain name such as 'release-notes'; pflow decides where the file lives."}
	}
	for _, r := range Reserved {
		if strings.EqualFold(name, r) {
			return &pferr.Error{Kind: pferr.Validation,
				Message: fmt.Sprintf("'%s' is a reserved workflow name. Reserved names: %s", name, strings.Join(Reserved, ", ")),
				Hint:    "Choose another name, e.g. 'my-" + strings.ToLower(name) + "'."}
		}
	}
	if len(name) > MaxNameLen {
		return &pferr.Error{Kind: pferr.Validation,
			Message: fmt.Sprintf("Workflow name cannot exceed %d characters (got %d)", MaxNameLen, len(name))}
	}
	if !nameRE().MatchString(name) {
		e := &pferr.Error{Kind: pferr.Validation,
			Message: fmt.Sprintf("invalid workflow name %q. Name must contain only lowercase letters, numbers, and single hyphens (no leading, trailing or double hyphens)", name)}
		if s := SuggestName(name); s != "" && s != name {
			e.Hint = fmt.Sprintf("Try '%s'.", s)
		}
		return e
	}
	return nil
}

// SuggestName turns arbitrary text into a valid workflow name ("" if none).
func SuggestName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > MaxNameLen {
		out = strings.TrimRight(out[:MaxNameLen], "-")
	}
	return out
}

// Path returns the file of a saved workflow (the name is not validated).
func (l *Library) Path(name string) string { return filepath.Join(l.Dir, name+Ext) }

// DraftPath returns the file of a draft.
func (l *Library) DraftPath(name string) string { return filepath.Join(l.DraftsDir, name+Ext) }

func (l *Library) log() io.Writer {
	if l.Log == nil {
		return io.Discard
	}
	return l.Log
}

// Exists reports whether a saved workflow exists.
func (l *Library) Exists(name string) bool {
	if ValidateName(name) != nil {
		return false
	}
	_, err := os.Stat(l.Path(name))
	return err == nil
}

// Load reads a saved workflow. A missing one is a NotFound error with
// did-you-mean suggestions.
func (l *Library) Load(name string) (*Saved, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	path := l.Path(name)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, l.notFound(name)
	}
	if err != nil {
		return nil, pferr.Newf(pferr.Config, "cannot read workflow '%s': %v", name, err).WithWhere(path)
	}
	return l.parse(name, path, data)
}

func (l *Library) notFound(name string) error {
	e := &pferr.Error{Kind: pferr.NotFound,
		Message: fmt.Sprintf("Workflow '%s' not found", name),
		Fixes: []pferr.Fix{
			{Text: "{do} to see the saved workflows.", Do: pferr.ListWorkflows()},
			{Text: "To save one, {do}.", Do: pferr.Run("workflow save <file> --name "+name, "workflow_save", map[string]any{"workflow_file": "<file>", "name": name})},
		},
	}
	names, _ := l.Names()
	if s := suggest.Near(name, names, 3, 2); len(s) > 0 {
		e.Suggestions = append(e.Suggestions, "Did you mean: "+strings.Join(s, ", ")+"?")
		e.Details = map[string]any{"suggestions": s}
	}
	return e
}

func (l *Library) parse(name, path string, data []byte) (*Saved, error) {
	meta, _, hasFM, err := SplitFrontmatter(data)
	if err != nil {
		return nil, pferr.Newf(pferr.Validation, "Invalid workflow '%s': %v", name, err).WithWhere(path + ":1").
			WithHint("Fix the YAML between the '---' lines at the top of the file, or remove that block (pflow rewrites it on the next save).")
	}
	w, err := workflow.ParseMarkdown(data, path)
	if err != nil {
		pe := parseErr(err, path)
		pe.Message = fmt.Sprintf("Invalid workflow '%s': %s", name, pe.Message)
		return nil, pe
	}
	s := &Saved{Name: name, Path: path, Workflow: w}
	if hasFM {
		s.Meta = meta
	}
	if w.Source != nil {
		s.Description = w.Source.Description
		if s.Description == "" {
			s.Description = w.Source.Title
		}
	}
	if s.Meta.Description != "" {
		s.Description = s.Meta.Description
	}
	return s, nil
}

// parseErr turns a parser error into a user-facing validation error.
func parseErr(err error, path string) *pferr.Error {
	pe := pferr.As(err)
	var we interface{ PFError() *pferr.Error }
	if errors.As(err, &we) {
		pe = we.PFError()
	}
	out := *pe
	if out.Kind == pferr.Internal {
		out.Kind = pferr.Validation
	}
	if out.Where == "" {
		out.Where = path
	}
	out.Err = err
	return &out
}

// Names lists the saved workflow names, sorted, without parsing them.
func (l *Library) Names() ([]string, error) {
	ents, err := os.ReadDir(l.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, pferr.Newf(pferr.Config, "cannot list saved workflows: %v", err).WithWhere(l.Dir)
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || strings.HasPrefix(n, ".") || !strings.HasSuffix(n, Ext) {
			continue
		}
		names = append(names, strings.TrimSuffix(n, Ext))
	}
	sort.Strings(names)
	return names, nil
}

// List returns the saved workflows whose name or description contain every
// word of filter (case-insensitive), sorted by name. Files that fail to
// parse are skipped with a warning on Log.
//
// Parses are cached in-process per file version (size, mtime, inode, ctime):
// every call reads the directory and stats every file, so the result is
// always what is on disk now, but only new or changed files are parsed
// again. The returned Saved values are copies; their Workflow is shared with
// the cache and must be treated as read-only.
func (l *Library) List(filter string) ([]*Saved, error) {
	out, _, err := l.ListCounted(filter)
	return out, err
}

// ListCounted is List that also returns how many workflow files the library
// holds (every <name>.pflow.md, parseable or not), from the same directory
// read.
func (l *Library) ListCounted(filter string) ([]*Saved, int, error) {
	names, err := l.Names()
	if err != nil {
		return nil, 0, err
	}
	dir := l.Dir
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	entries := make([]*parsed, len(names))
	var todo []int
	for i, n := range names {
		if err := ValidateName(n); err != nil {
			entries[i] = &parsed{err: err}
			continue
		}
		if fi, err := os.Stat(l.Path(n)); err == nil {
			if p, ok := cachedParse(dir, n, VersionOf(fi)); ok {
				entries[i] = p
				continue
			}
		}
		todo = append(todo, i)
	}
	// Parse the new and changed files on every core: that is the cost of a
	// listing.
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(todo)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := int(next.Add(1) - 1); j < len(todo); j = int(next.Add(1) - 1) {
				i := todo[j]
				s, key, err := l.loadKeyed(names[i])
				entries[i] = &parsed{key: key, saved: s, err: err}
			}
		}()
	}
	wg.Wait()
	keep := make(map[string]*parsed, len(names))
	words := strings.Fields(strings.ToLower(filter))
	var out []*Saved
	for i, n := range names {
		e := entries[i]
		if e.err == nil || e.key != (FileVersion{}) {
			keep[n] = e
		}
		if e.err != nil {
			if ValidateName(n) != nil {
				fmt.Fprintf(l.log(), "Warning: skipping %s: %q is not a valid workflow name\n", l.Path(n), n)
			} else {
				fmt.Fprintf(l.log(), "Warning: skipping saved workflow '%s': %v\n", n, e.err)
			}
			continue
		}
		hay := strings.ToLower(e.saved.Name + " " + e.saved.Description)
		ok := true
		for _, w := range words {
			if !strings.Contains(hay, w) {
				ok = false
				break
			}
		}
		if ok {
			c := *e.saved
			out = append(out, &c)
		}
	}
	storeParses(dir, keep)
	return out, len(names), nil
}

// SaveFile saves the workflow file at path under name (see Save).
func (l *Library) SaveFile(ctx context.Context, path, name string, opts SaveOptions) (*Saved, error) {
	if strings.HasSuffix(strings.ToLower(path), ".json") {
		return nil, pferr.Newf(pferr.Validation, "cannot save %s: the library stores .pflow.md files, not JSON IR", path).
			WithHint("Write the workflow as a .pflow.md file and save that.").
			WithFix(pferr.Fix{Text: "For step snippets, {do}.", Do: pferr.DescribeNode("<node>")})
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, pferr.Newf(pferr.NotFound, "workflow file not found: %s", path).
			WithHint("Check the path; it is relative to the current directory.")
	}
	if err != nil {
		return nil, pferr.Newf(pferr.Config, "cannot read %s: %v", path, err)
	}
	if opts.SourcePath == "" {
		opts.SourcePath = path
	}
	return l.Save(ctx, data, name, opts)
}

// Save validates content as a .pflow.md workflow and writes it to the
// library as name, with fresh metadata. An existing frontmatter block in
// content is replaced, never stacked. Without opts.Force an existing
// workflow is not overwritten. The write is atomic and locked.
func (l *Library) Save(ctx context.Context, content []byte, name string, opts SaveOptions) (*Saved, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	src := opts.SourcePath
	if src == "" {
		src = name + Ext
	}
	w, err := workflow.ParseMarkdown(content, src)
	if err != nil {
		return nil, parseErr(err, src)
	}
	if errs := w.CheckStructure(); len(errs) > 0 {
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Error())
		}
		return nil, &pferr.Error{Kind: pferr.Validation,
			Message: fmt.Sprintf("cannot save '%s': the workflow is invalid:\n%s", name, strings.Join(msgs, "\n")),
			Where:   src,
			Details: map[string]any{"errors": msgs}}
	}
	_, body, _, _ := SplitFrontmatter(content)
	body = strings.TrimLeft(body, "\r\n")

	path := l.Path(name)
	lk, err := l.lock(ctx, name)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()

	now := time.Now().UTC().Format(time.RFC3339Nano)
	meta := Metadata{Description: strings.TrimSpace(opts.Description), CreatedAt: now, UpdatedAt: now, Version: MetadataVersion}
	data, err := render(meta, body)
	if err != nil {
		return nil, err
	}
	if opts.Force {
		err = fsutil.WriteFileAtomic(path, data, 0o600)
	} else {
		err = fsutil.CreateFileAtomic(path, data, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return nil, &pferr.Error{Kind: pferr.Validation,
				Message: fmt.Sprintf("Workflow '%s' already exists", name),
				Where:   path,
				Fixes:   []pferr.Fix{overwriteFix}}
		}
	}
	if err != nil {
		return nil, pferr.Wrap(err, pferr.Config, fmt.Sprintf("cannot save workflow '%s'", name)).WithWhere(path)
	}
	if opts.DeleteDraft && opts.SourcePath != "" {
		l.deleteDraft(opts.SourcePath)
	}
	s := &Saved{Name: name, Path: path, Workflow: w, Meta: meta}
	if w.Source != nil {
		s.Description = w.Source.Description
		w.Source.Path = path
	}
	if meta.Description != "" {
		s.Description = meta.Description
	}
	return s, nil
}

// lock takes the per-workflow lock. Lock files live in a hidden .locks
// directory (never deleted: removing a lock file others wait on breaks the
// lock), so the library directory only holds workflows.
func (l *Library) lock(ctx context.Context, name string) (*fsutil.Lock, error) {
	p := filepath.Join(l.Dir, ".locks", name)
	lk, err := fsutil.LockFile(ctx, p, 30*time.Second)
	if err != nil {
		return nil, pferr.Wrap(err, pferr.Config, "").WithWhere(l.Path(name))
	}
	return lk, nil
}

// IsDraft reports whether path is a regular file (not a symlink) directly
// or indirectly inside DraftsDir.
func (l *Library) IsDraft(path string) bool {
	if l.DraftsDir == "" {
		return false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	dir, err := filepath.Abs(l.DraftsDir)
	if err != nil {
		return false
	}
	if rd, err := filepath.EvalSymlinks(dir); err == nil {
		dir = rd
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(dir, filepath.Join(parent, filepath.Base(abs)))
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return false
	}
	st, err := os.Lstat(abs)
	return err == nil && st.Mode().IsRegular()
}

func (l *Library) deleteDraft(path string) {
	if !l.IsDraft(path) {
		fmt.Fprintf(l.log(), "Note: not deleting %s: only regular files in %s are drafts\n", path, l.DraftsDir)
		return
	}
	if err := os.Remove(path); err != nil {
		fmt.Fprintf(l.log(), "Warning: saved, but could not delete the draft %s: %v\n", path, err)
	}
}

// Delete removes a saved workflow.
func (l *Library) Delete(name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	path := l.Path(name)
	lk, err := l.lock(context.Background(), name)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	if err := os.Remove(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return l.notFound(name)
		}
		return pferr.Newf(pferr.Config, "cannot delete workflow '%s': %v", name, err).WithWhere(path)
	}
	return nil
}

// RecordRun updates a saved workflow's metadata after a run. Only successful
// runs are recorded. params are stored sanitized: secretNames and secret-looking names are redacted, long strings
// truncated. The body is never modified.
func (l *Library) RecordRun(ctx context.Context, name string, success bool, d time.Duration, params map[string]any, secretNames []string) error {
	if !success {
		return nil
	}
	return l.RecordRuns(ctx, name, []RunStat{{At: time.Now(), Duration: d, Params: SanitizeParams(params, secretNames)}})
}

// RunStat is one successful run of a saved workflow, as its metadata keeps
// it (Params sanitized, see SanitizeParams).
type RunStat struct {
	At       time.Time
	Duration time.Duration
	Params   map[string]any
}

// RecordRuns is RecordRun of several runs, oldest first, in one update of
// the file: the metadata is what as many RecordRun calls make. A workflow
// deleted meanwhile stays deleted (the file is replaced only while it is
// there).
func (l *Library) RecordRuns(ctx context.Context, name string, runs []RunStat) error {
	if len(runs) == 0 {
		return nil
	}
	if err := ValidateName(name); err != nil {
		return err
	}
	path := l.Path(name)
	lk, err := l.lock(ctx, name)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return l.notFound(name)
	}
	if err != nil {
		return pferr.Newf(pferr.Config, "cannot read workflow '%s': %v", name, err).WithWhere(path)
	}
	meta, body, hasFM, err := SplitFrontmatter(data)
	if err != nil {
		return pferr.Newf(pferr.Validation, "cannot record the run of '%s': %v", name, err).WithWhere(path + ":1")
	}
	if !hasFM {
		body = "\n" + string(data)
	}
	for _, r := range runs {
		d, at := r.Duration, r.At.UTC()
		secs := round2(d.Seconds())
		meta.ExecutionCount++
		if meta.ExecutionCount == 1 {
			meta.AverageExecutionDurationSeconds = secs
		} else {
			old := meta.AverageExecutionDurationSeconds
			meta.AverageExecutionDurationSeconds = round2(old + (d.Seconds()-old)/float64(meta.ExecutionCount))
		}
		t := true
		meta.LastExecutionSuccess = &t
		meta.LastExecutionTimestamp = at.Format(time.RFC3339Nano)
		meta.LastExecutionDurationSeconds = secs
		meta.LastExecutionParams = r.Params
		if meta.CreatedAt == "" {
			meta.CreatedAt = at.Format(time.RFC3339Nano)
		}
	}
	if meta.Version == "" {
		meta.Version = MetadataVersion
	}
	meta.UpdatedAt = time.Now().UTC().Format(time.RFC3339Nano)
	out, err := renderRaw(meta, body)
	if err != nil {
		return err
	}
	if err := fsutil.ReplaceExisting(path, out, 0o600); errors.Is(err, fs.ErrNotExist) {
		return l.notFound(name) // deleted by hand meanwhile: not brought back
	} else if err != nil {
		return pferr.Wrap(err, pferr.Config, fmt.Sprintf("cannot record the run of '%s'", name)).WithWhere(path)
	}
	return nil
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// Redacted replaces secret values in saved parameters.
const Redacted = "<REDACTED>"

// SanitizeParams prepares run parameters for storage (see RecordRun).
func SanitizeParams(params map[string]any, secretNames []string) map[string]any {
	if len(params) == 0 {
		return nil
	}
	secret := map[string]bool{}
	for _, n := range secretNames {
		secret[n] = true
	}
	out := make(map[string]any, len(params))
	for k, v := range params {
		if secret[k] || redact.IsSecretKey(k) {
			out[k] = Redacted
			continue
		}
		v = value.Normalize(v)
		if s, ok := v.(string); ok && len([]rune(s)) > 100 {
			v = string([]rune(s)[:20]) + "...<truncated>"
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// SplitFrontmatter separates a leading '---' YAML block from the body. The
// body is everything after the closing '---' line, unchanged. Without a
// (closed) block, body is the whole text and has is false.
func SplitFrontmatter(data []byte) (meta Metadata, body string, has bool, err error) {
	text := string(data)
	first, rest, ok := strings.Cut(text, "\n")
	if !ok || strings.TrimRight(first, " \t\r") != "---" {
		return meta, text, false, nil
	}
	off := len(first) + 1
	for off <= len(text) {
		line, _, more := strings.Cut(text[off:], "\n")
		if strings.TrimRight(line, " \t\r") == "---" {
			yml := text[len(first)+1 : off]
			end := off + len(line)
			if more {
				end++
			}
			body = text[end:]
			if e := yaml.Unmarshal([]byte(yml), &meta); e != nil {
				return Metadata{}, body, true, fmt.Errorf("invalid YAML in frontmatter: %v", e)
			}
			if meta.LastExecutionParams != nil {
				if m, ok := value.Normalize(meta.LastExecutionParams).(map[string]any); ok {
					meta.LastExecutionParams = m
				}
			}
			return meta, body, true, nil
		}
		if !more {
			break
		}
		off += len(line) + 1
	}
	_ = rest
	return Metadata{}, text, false, nil
}

// render writes frontmatter, a blank line, then the body.
func render(meta Metadata, body string) ([]byte, error) {
	return renderRaw(meta, "\n"+body)
}

// renderRaw writes frontmatter followed by rest exactly as given.
func renderRaw(meta Metadata, rest string) ([]byte, error) {
	y, err := yaml.Marshal(&meta)
	if err != nil {
		return nil, pferr.Newf(pferr.Internal, "encode workflow metadata: %v", err)
	}
	return []byte("---\n" + string(y) + "---\n" + rest), nil
}

// overwriteFix is the fix of a save under a name that is taken.
var overwriteFix = pferr.Fix{Text: "{do} to overwrite it, or choose a different name.", Do: pferr.Force()}

// OverwriteFix is the fix of a save under a name that is taken.
func OverwriteFix() pferr.Fix { return overwriteFix }
