// Package settings reads and writes $PFLOW_HOME/settings.json: API keys and
// other values in "env", the node allow/deny filter, runtime and LLM
// defaults. Writes are atomic, locked and 0600 (the file holds secrets).
package settings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/value"
)

// Version is the settings file format version.
const Version = "1.0.0"

// Output modes of 'pflow registry run'.
const (
	OutputSmart     = "smart"
	OutputStructure = "structure"
	OutputFull      = "full"
)

// Template resolution modes.
const (
	ResolutionStrict     = "strict"
	ResolutionPermissive = "permissive"
)

// Settings is the content of settings.json.
type Settings struct {
	Version  string            `json:"version"`
	Registry RegistrySettings  `json:"registry"`
	Runtime  RuntimeSettings   `json:"runtime"`
	LLM      LLMSettings       `json:"llm"`
	Env      map[string]string `json:"env"`
	// Retention bounds the per-run files pflow keeps (traces in debug/, run
	// records in runs/).
	Retention Retention `json:"retention"`
	// Network widens where the http node and remote MCP servers may
	// connect (internal/netpolicy).
	Network NetworkSettings `json:"network"`
}

// NetworkSettings: in a run an agent starts through pflow mcp serve, an
// http redirect may not lead to a loopback, private or link-local address,
// and no request may go to a link-local (cloud metadata) address; in every
// run, no redirect may lead to a link-local address, and no MCP server is
// reached at one. AllowPrivate lifts the loopback and private rule;
// AllowHosts lifts every rule for the hosts it names (a host name, an IP
// address or a CIDR range such as 10.0.0.0/8).
type NetworkSettings struct {
	AllowPrivate bool     `json:"allow_private,omitempty"`
	AllowHosts   []string `json:"allow_hosts,omitempty"`
}

// Retention says how many per-run files pflow keeps in each of its per-run
// directories ($PFLOW_HOME/debug/ for traces): the newest MaxCount, none
// older than MaxAgeDays. Zero means no limit. Old files are removed when a
// new one is written.
type Retention struct {
	MaxCount   int `json:"max_count"`
	MaxAgeDays int `json:"max_age_days"`
}

// Default retention: the last 100 runs, none older than 30 days.
const (
	DefaultRetentionCount = 100
	DefaultRetentionDays  = 30
)

// MaxAge is MaxAgeDays as a duration (0: no limit).
func (r Retention) MaxAge() time.Duration { return time.Duration(r.MaxAgeDays) * 24 * time.Hour }

// Validate reports a negative limit, saying how to fix it.
func (r Retention) Validate() error {
	if r.MaxCount < 0 || r.MaxAgeDays < 0 {
		return fmt.Errorf("retention limits must be 0 (no limit) or more, got max_count %d, max_age_days %d", r.MaxCount, r.MaxAgeDays)
	}
	return nil
}

// RegistrySettings configures which nodes are usable and how registry run prints.
type RegistrySettings struct {
	Nodes            NodeFilter `json:"nodes"`
	OutputMode       string     `json:"output_mode,omitempty"`
	IncludeTestNodes bool       `json:"include_test_nodes,omitempty"`
}

// NodeFilter holds fnmatch-style glob patterns (*, ?, [abc]) matched against
// a node's candidate names (see Candidates). See NodeAllowed for precedence.
type NodeFilter struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
}

// RuntimeSettings configures the engine.
type RuntimeSettings struct {
	TemplateResolutionMode string `json:"template_resolution_mode,omitempty"`
}

// LLMSettings names default models.
type LLMSettings struct {
	DefaultModel   string `json:"default_model,omitempty"`
	DiscoveryModel string `json:"discovery_model,omitempty"`
	FilteringModel string `json:"filtering_model,omitempty"`
}

// DefaultDeny hides the deprecated git/github node packages unless allowed.
var DefaultDeny = []string{"pflow.nodes.git.*", "pflow.nodes.github.*"}

// Default returns the settings used when there is no file.
func Default() *Settings {
	return &Settings{
		Version: Version,
		Registry: RegistrySettings{
			Nodes:      NodeFilter{Allow: []string{"*"}, Deny: append([]string(nil), DefaultDeny...)},
			OutputMode: OutputSmart,
		},
		Runtime:   RuntimeSettings{TemplateResolutionMode: ResolutionStrict},
		Env:       map[string]string{},
		Retention: Retention{MaxCount: DefaultRetentionCount, MaxAgeDays: DefaultRetentionDays},
	}
}

// decode parses settings JSON on top of the defaults (absent keys keep
// their defaults; an explicit empty list stays empty).
func decode(data []byte) (*Settings, error) {
	s := Default()
	if err := json.Unmarshal(data, s); err != nil {
		return nil, describeJSONError(data, err)
	}
	if s.Env == nil {
		s.Env = map[string]string{}
	}
	if s.Version == "" {
		s.Version = Version
	}
	if s.Registry.Nodes.Allow == nil {
		s.Registry.Nodes.Allow = []string{}
	}
	if s.Registry.Nodes.Deny == nil {
		s.Registry.Nodes.Deny = []string{}
	}
	return s, nil
}

// describeJSONError adds a line number to JSON syntax errors.
func describeJSONError(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return err
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	return fmt.Errorf("line %d: %v", line, err)
}

// Load reads settings.json. A missing file gives the defaults. A corrupt file
// gives a warning on log and the defaults. A file readable by group or others
// that holds env values gives a warning with the chmod fix.
func Load(path string, log io.Writer) (*Settings, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return nil, pferr.Newf(pferr.Config, "cannot read settings: %v", err).WithWhere(path).
			WithHint("Check the file's permissions (it should be yours, mode 600).")
	}
	return fromData(path, data, log), nil
}

// LoadShared is Load for readers that do not modify the Settings: while
// settings.json is unchanged, a long-lived process (pflow mcp serve), which
// reads it several times per request, decodes it once, and says what is
// wrong with it once. The Settings are shared: they must not be modified.
func LoadShared(path string, log io.Writer) (*Settings, error) {
	s, err := shared.Load(path, func(data []byte) (*Settings, error) { return fromData(path, data, log), nil })
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return sharedDefault(), nil
	case err != nil:
		return Load(path, log) // unreadable: as Load says
	}
	return s, nil
}

var (
	shared        fsutil.Memo[*Settings]
	sharedDefault = sync.OnceValue(Default)
)

// fromData is Load's settings from the file's content.
func fromData(path string, data []byte, log io.Writer) *Settings {
	if log == nil {
		log = io.Discard
	}
	s, err := decode(data)
	if err != nil {
		fmt.Fprintf(log, "Warning: %s is not valid settings JSON (%v); using default settings. Fix the file or delete it.\n", path, err)
		return Default()
	}
	if err := s.Retention.Validate(); err != nil {
		fmt.Fprintf(log, "Warning: %s: %v; using the defaults (%d runs, %d days). Fix it with: pflow settings retention --max-count N --max-age-days N\n",
			path, err, DefaultRetentionCount, DefaultRetentionDays)
		s.Retention = Default().Retention
	}
	if len(s.Env) > 0 {
		if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
			fmt.Fprintf(log, "Warning: %s holds secrets but is readable by other users (mode %04o). Run: chmod 600 %s\n", path, st.Mode().Perm(), path)
		}
	}
	return s
}

// Update takes the settings lock, loads the file (defaults when missing),
// calls fn and writes the result atomically with mode 0600. fn's error
// aborts without writing. A corrupt file is never overwritten: Update fails
// with an error that says where the file is broken.
func Update(ctx context.Context, path string, fn func(*Settings) error) error {
	lk, err := fsutil.LockFile(ctx, path, 30*time.Second)
	if err != nil {
		return pferr.Wrap(err, pferr.Config, "").WithWhere(path)
	}
	defer lk.Unlock()
	s := Default()
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return pferr.Newf(pferr.Config, "cannot read settings: %v", err).WithWhere(path)
	default:
		if s, err = decode(data); err != nil {
			return pferr.Newf(pferr.Config, "settings file is not valid JSON (%v); not overwriting it", err).WithWhere(path).
				WithHint("Fix the JSON by hand, or delete " + path + " to start from the defaults.")
		}
	}
	if err := fn(s); err != nil {
		return err
	}
	out, err := Marshal(s)
	if err != nil {
		return pferr.Newf(pferr.Internal, "encode settings: %v", err)
	}
	out = keepUnknownKeys(data, out)
	if err := fsutil.WriteFileAtomic(path, out, 0o600); err != nil {
		return pferr.Wrap(err, pferr.Config, "save settings").WithWhere(path)
	}
	return nil
}

// Marshal renders s as the indented JSON written to disk.
func Marshal(s *Settings) ([]byte, error) {
	c := *s
	if c.Env == nil {
		c.Env = map[string]string{}
	}
	if c.Registry.Nodes.Allow == nil {
		c.Registry.Nodes.Allow = []string{}
	}
	if c.Registry.Nodes.Deny == nil {
		c.Registry.Nodes.Deny = []string{}
	}
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// LookupEnv looks key up in the settings env, case-insensitively (an exact
// match wins over a case-insensitive one).
func (s *Settings) LookupEnv(key string) (string, bool) {
	if s == nil {
		return "", false
	}
	if v, ok := s.Env[key]; ok {
		return v, true
	}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		if strings.EqualFold(k, key) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "", false
	}
	sort.Strings(keys)
	return s.Env[keys[0]], true
}

// EnvKeys returns the settings env keys, sorted.
func (s *Settings) EnvKeys() []string {
	return value.SortedKeys(s.Env)
}

// Masked returns a copy of s whose env values are masked (for display).
func (s *Settings) Masked() *Settings {
	c := *s
	c.Env = make(map[string]string, len(s.Env))
	for k, v := range s.Env {
		c.Env[k] = Mask(v)
	}
	return &c
}

// Mask hides a secret: its first 3 characters + "***", or "***" when it is 3
// characters or shorter.
func Mask(value string) string {
	r := []rune(value)
	if len(r) <= 3 {
		return "***"
	}
	return string(r[:3]) + "***"
}

// knownKeys are the top-level keys Settings manages.
var knownKeys = map[string]bool{"version": true, "registry": true, "runtime": true, "llm": true, "env": true, "retention": true}

// keepUnknownKeys carries top-level keys pflow does not manage (written by
// another version or by hand) from the old file into the new one, so an
// update never drops them.
func keepUnknownKeys(old, updated []byte) []byte {
	if len(old) == 0 {
		return updated
	}
	var o map[string]json.RawMessage
	if json.Unmarshal(old, &o) != nil {
		return updated
	}
	extra := false
	for k := range o {
		if !knownKeys[k] {
			extra = true
		}
	}
	if !extra {
		return updated
	}
	var n map[string]json.RawMessage
	if json.Unmarshal(updated, &n) != nil {
		return updated
	}
	for k, v := range o {
		if !knownKeys[k] {
			n[k] = v
		}
	}
	b, err := json.MarshalIndent(n, "", "  ")
	if err != nil {
		return updated
	}
	return append(b, '\n')
}
