// Package redact finds secrets and masks them in everything pflow shows or
// stores: which key names and URL query parameters hold a secret
// (IsSecretKey, IsSecretQueryParam), and the Redactor, which masks each
// registered secret in its raw, URL-encoded, JSON-escaped and base64 forms.
// It sits below every package that shows or stores data and imports none of
// pflow's engine.
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Redacted replaces a secret, in every form, everywhere pflow writes.
const Redacted = "<REDACTED>"

// MinSecretLen is the shortest value that is masked as a secret. Shorter
// values ("1", "on", "dev") would wipe out ordinary words, numbers and
// punctuation everywhere while protecting nothing: a 3-character secret
// can be guessed.
const MinSecretLen = 4

// minEmbeddedLen is the shortest secret whose base64 form is also found
// inside a longer base64 text (base64("user:"+secret) in a Basic auth
// header). Shorter secrets make base64 fragments of 5 characters or less,
// which turn up by chance in any large base64 payload.
const minEmbeddedLen = 8

// Redactor removes secret values from data before it is shown or stored.
// Each registered value is masked in its raw form and in the forms it takes
// when pflow or a tool encodes it (see Forms). A Redactor is safe for
// concurrent use; secrets are only ever added.
type Redactor struct {
	mu       sync.RWMutex
	values   map[string]bool // registered raw values
	patterns map[string]bool // every form of every value
	names    map[string]bool
	replace  *strings.Replacer
	// minLen is the length of the shortest pattern: a shorter string holds
	// no secret and is returned as is, without a scan.
	minLen int
	// gen counts the changes to the set of patterns (see Generation).
	gen uint64
	// masker is replace and minLen, for String and Masker without a lock
	// (nil: nothing to mask).
	masker atomic.Pointer[Masker]
}

// NewRedactor returns an empty redactor.
func NewRedactor() *Redactor {
	return &Redactor{values: map[string]bool{}, patterns: map[string]bool{}, names: map[string]bool{}}
}

// Fork returns a new redactor that starts with every secret r holds. What is
// added to the fork later stays in the fork: a long-lived process forks its
// redactor per request, so a request's secrets are masked in its outputs
// without piling up for the life of the process.
func (r *Redactor) Fork() *Redactor {
	f := NewRedactor()
	if r == nil {
		return f
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for k := range r.values {
		f.values[k] = true
	}
	for k := range r.patterns {
		f.patterns[k] = true
	}
	for k := range r.names {
		f.names[k] = true
	}
	f.replace, f.minLen, f.gen = r.replace, r.minLen, r.gen // immutable; rebuilt when the fork gains a pattern
	f.masker.Store(r.masker.Load())
	return f
}

// Maskable reports whether v is masked when registered as a secret: it has
// at least MinSecretLen bytes and is not a number or a JSON literal (true,
// false, null). Masking "8080" or "true" in free text would break counts,
// line numbers and JSON documents; such values are still masked under a
// secret-looking name (see Value).
func Maskable(v string) bool {
	t := strings.TrimSpace(v)
	if len(t) < MinSecretLen {
		return false
	}
	switch strings.ToLower(t) {
	case "true", "false", "null", "none", "nil":
		return false
	}
	if _, err := strconv.ParseFloat(t, 64); err == nil {
		return false
	}
	return true
}

// Forms returns the strings v is masked as: v itself; URL-encoded as a query
// value and as a path segment; JSON-escaped as inside a JSON string literal
// (with and without HTML escaping, ASCII-only as Python writes it, and
// escaped twice as in JSON text quoted inside JSON) and Go-quoted; base64 in
// the standard and URL alphabets, padded and not; and, for values of 8
// bytes or more, the part of its base64 form that is the same wherever the
// value sits inside a longer base64 text (so base64("user:"+v) is masked
// too). Forms of a value that is not Maskable is nil.
func Forms(v string) []string {
	if !Maskable(v) {
		return nil
	}
	out := []string{v, url.QueryEscape(v), url.PathEscape(v), asciiJSONEscape(v)}
	for _, html := range []bool{true, false} {
		once := jsonEscape(v, html)
		out = append(out, once, jsonEscape(once, html)) // and JSON text inside a JSON string
	}
	if q := strconv.Quote(v); len(q) >= 2 {
		out = append(out, q[1:len(q)-1])
	}
	b := []byte(v)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		out = append(out, enc.EncodeToString(b))
	}
	if len(b) >= minEmbeddedLen {
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			for off := 0; off < 3; off++ {
				out = append(out, embeddedBase64(enc, b, off))
			}
		}
	}
	seen := map[string]bool{}
	uniq := out[:0]
	for _, f := range out {
		if len(f) >= MinSecretLen && !seen[f] {
			seen[f] = true
			uniq = append(uniq, f)
		}
	}
	return uniq
}

// embeddedBase64 is the run of base64 characters that encodes only bytes
// of secret when secret starts off bytes (mod 3) into a longer input: the
// characters before and after it mix in the neighbouring bytes.
func embeddedBase64(enc *base64.Encoding, secret []byte, off int) string {
	buf := make([]byte, off+len(secret))
	copy(buf[off:], secret)
	s := enc.EncodeToString(buf)
	first := (8*off + 5) / 6            // first character whose 6 bits all lie in secret
	last := (8*(off+len(secret)))/6 - 1 // last such character
	if last >= len(s) {
		last = len(s) - 1
	}
	if first > last {
		return ""
	}
	return s[first : last+1]
}

func jsonEscape(v string, html bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	if enc.Encode(v) != nil {
		return v
	}
	s := strings.TrimSuffix(buf.String(), "\n")
	return s[1 : len(s)-1]
}

// asciiJSONEscape is v as Python's json.dumps writes it by default
// (ensure_ascii): every non-ASCII character as \uXXXX (surrogate pairs
// beyond the BMP).
func asciiJSONEscape(v string) string {
	esc := jsonEscape(v, false)
	var b strings.Builder
	for _, r := range esc {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// AddSecret registers a secret value under a name ("" when it has none).
// Values that are not Maskable are ignored (the name is still recorded).
func (r *Redactor) AddSecret(name, v string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if name != "" {
		r.names[name] = true
	}
	if r.values[v] {
		return
	}
	forms := Forms(v)
	if len(forms) == 0 {
		return
	}
	r.values[v] = true
	added := false
	for _, f := range forms {
		if !r.patterns[f] {
			r.patterns[f] = true
			added = true
		}
	}
	if added {
		r.rebuild()
	}
}

// Merge adds every secret o holds (values and names) to r, rebuilding r's
// replacer once, and only when o has a pattern r lacks.
func (r *Redactor) Merge(o *Redactor) {
	if r == nil || o == nil || r == o {
		return
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range o.names {
		r.names[k] = true
	}
	for k := range o.values {
		r.values[k] = true
	}
	added := false
	for k := range o.patterns {
		if !r.patterns[k] {
			r.patterns[k] = true
			added = true
		}
	}
	if added {
		r.rebuild()
	}
}

// rebuild makes the replacer; r.mu is held.
func (r *Redactor) rebuild() {
	all := make([]string, 0, len(r.patterns))
	for p := range r.patterns {
		all = append(all, p)
	}
	// Longest first: at one position the first pattern in argument order
	// wins, so a secret containing another is replaced whole.
	sort.Slice(all, func(i, j int) bool {
		if len(all[i]) != len(all[j]) {
			return len(all[i]) > len(all[j])
		}
		return all[i] < all[j]
	})
	pairs := make([]string, 0, 2*len(all))
	for _, x := range all {
		pairs = append(pairs, x, Redacted)
	}
	r.replace = strings.NewReplacer(pairs...)
	if len(all) > 0 {
		r.minLen = len(all[len(all)-1])
	}
	r.gen++
	r.masker.Store(&Masker{replace: r.replace, minLen: r.minLen})
}

// Generation changes whenever a secret is added (it counts the changes):
// text masked at one generation needs masking again only when the
// generation has moved on since.
func (r *Redactor) Generation() uint64 {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.gen
}

// maxURLScan bounds the strings AddSecretsIn searches for URLs: URLs with
// credentials sit in short params (url, command, connection strings), and a
// run's data (a 50 MB response passed on as a param) must not cost a scan
// per step and batch item.
const maxURLScan = 64 << 10

// AddSecretsIn registers the secrets found in a value (params, inputs, a
// config): every string under a secret-looking key (IsSecretKey, at
// any depth; a map under such a key is searched by its own keys), the
// credential of an "Authorization"-style value ("Bearer X" registers X as
// well; "Basic B64" registers the decoded password), and in any string the
// password of a URL (https://user:PASS@host), a token used as a URL's user
// name, and secret-looking query parameters (?api_key=, token=, key=, sig=)
// (strings up to 64 KiB).
func (r *Redactor) AddSecretsIn(v any) {
	if r == nil {
		return
	}
	r.collect("", v, false, 0)
}

func (r *Redactor) collect(name string, v any, secret bool, depth int) {
	if depth > 64 {
		return
	}
	switch x := v.(type) {
	case string:
		if secret {
			r.AddSecret(name, x)
			for _, c := range schemeCredentials(x) {
				r.AddSecret(name, c)
			}
		}
		if len(x) <= maxURLScan {
			for _, c := range URLSecrets(x) {
				r.AddSecret("", c)
			}
		}
	case map[string]any:
		for k, e := range x {
			r.collect(k, e, IsSecretKey(k), depth+1)
		}
	case []any:
		for _, e := range x {
			r.collect(name, e, secret, depth+1)
		}
	case []string:
		for _, e := range x {
			r.collect(name, e, secret, depth+1)
		}
	case map[string]string:
		for k, e := range x {
			r.collect(k, e, IsSecretKey(k), depth+1)
		}
	}
}

// authSchemes are the HTTP auth schemes whose credential follows a space.
var authSchemes = map[string]bool{"bearer": true, "basic": true, "token": true, "bot": true, "apikey": true, "api-key": true, "key": true}

// schemeCredentials returns the credential inside an auth header value:
// X of "Bearer X" / "token X", and for "Basic B64" the decoded "user:pass"
// and pass.
func schemeCredentials(v string) []string {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || !authSchemes[strings.ToLower(scheme)] {
		return nil
	}
	cred = strings.TrimSpace(cred)
	out := []string{cred}
	if strings.EqualFold(scheme, "basic") {
		if dec, err := base64.StdEncoding.DecodeString(cred); err == nil {
			out = append(out, string(dec))
			if _, pass, ok := strings.Cut(string(dec), ":"); ok {
				out = append(out, pass)
			}
		}
	}
	return out
}

var urlPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'<>\x60\\]+`)
})

// URLSecrets returns the credentials in the URLs found in s: each URL's
// password, its user name when it has no password and looks like a token
// (16+ characters mixing letters and digits: https://TOKEN@host), and the
// values of secret-looking query parameters.
func URLSecrets(s string) []string {
	if !strings.Contains(s, "://") {
		return nil
	}
	var out []string
	for _, m := range urlPattern().FindAllString(s, -1) {
		u, err := url.Parse(m)
		if err != nil {
			// A password with characters url.Parse refuses: take it by hand.
			out = append(out, rawPassword(m)...)
			continue
		}
		if u.User != nil {
			if p, ok := u.User.Password(); ok {
				out = append(out, p)
			} else if name := u.User.Username(); looksLikeToken(name) {
				out = append(out, name)
			}
		}
		for k, vs := range u.Query() {
			if IsSecretQueryParam(k) {
				out = append(out, vs...)
			}
		}
	}
	return out
}

// rawPassword extracts user:PASS@ from a URL url.Parse rejected.
func rawPassword(m string) []string {
	_, rest, _ := strings.Cut(m, "://")
	auth, _, ok := strings.Cut(rest, "@")
	if !ok || strings.ContainsAny(auth, "/?#") {
		return nil
	}
	if _, pass, ok := strings.Cut(auth, ":"); ok {
		if p, err := url.PathUnescape(pass); err == nil {
			return []string{pass, p}
		}
		return []string{pass}
	}
	return nil
}

func looksLikeToken(s string) bool {
	if len(s) < 16 {
		return false
	}
	letters, digits := false, false
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letters = true
		}
	}
	return letters && digits
}

// SecretNames lists the names of registered secrets.
func (r *Redactor) SecretNames() []string {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.names))
	for k := range r.names {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (r *Redactor) empty() bool {
	if r == nil {
		return true
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.replace == nil
}

// String removes secret values, in every form, from s.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	return r.Masker().String(s)
}

// Masker is the String of a Redactor with the secrets it knew when the
// Masker was made (Redactor.Masker): no lock is taken per string, for code
// that masks many strings in a row. The zero Masker masks nothing.
type Masker struct {
	replace *strings.Replacer
	minLen  int
}

// Masker returns a Masker for the secrets r knows now.
func (r *Redactor) Masker() Masker {
	if r == nil {
		return Masker{}
	}
	if m := r.masker.Load(); m != nil {
		return *m
	}
	return Masker{}
}

// String returns s with every secret the Masker knows replaced (see
// Redactor.String).
func (m Masker) String(s string) string {
	if m.replace == nil || len(s) < m.minLen {
		return s
	}
	return m.replace.Replace(s)
}

// Bytes is String for a byte slice: b itself when it holds no secret the
// Masker knows of (no copy), else a masked copy.
func (m Masker) Bytes(b []byte) []byte {
	if m.replace == nil || len(b) < m.minLen {
		return b
	}
	s := string(b)
	if r := m.replace.Replace(s); r != s {
		return []byte(r)
	}
	return b
}

// Value returns a copy of v with secret-looking keys and secret values redacted.
func (r *Redactor) Value(v any) any {
	switch x := v.(type) {
	case string:
		return r.String(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.Value(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if r.HidesKey(k, e) {
				out[k] = Redacted
				continue
			}
			out[k] = r.Value(e)
		}
		return out
	default:
		return v
	}
}

// Writer returns w with every secret masked in each Write.
func (r *Redactor) Writer(w io.Writer) *Writer { return &Writer{r: r, w: w} }

// Writer masks secrets in everything written through it. Each Write is
// redacted on its own: pflow writes whole messages, so a secret is never
// split between two Writes.
type Writer struct {
	r *Redactor
	w io.Writer
}

// Write writes p with its secrets masked; it reports len(p) on success.
func (x *Writer) Write(p []byte) (int, error) {
	if x.r.empty() {
		return x.w.Write(p)
	}
	s := x.r.String(string(p))
	if len(s) == len(p) && s == string(p) {
		return x.w.Write(p)
	}
	if _, err := io.WriteString(x.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap returns the underlying writer, for output that must stay byte-exact
// (a protocol stream whose every message is redacted before it is encoded)
// or that the user asked to see unmasked.
func (x *Writer) Unwrap() io.Writer { return x.w }

// Redactor returns the redactor the writer masks with.
func (x *Writer) Redactor() *Redactor { return x.r }

// HidesKey reports whether the value e of key k is replaced by Redacted as a
// whole: a non-empty value (other than an object, which is walked) of a
// secret-looking key.
func (r *Redactor) HidesKey(k string, e any) bool {
	if e == nil || e == "" || !IsSecretKey(k) {
		return false
	}
	_, isMap := e.(map[string]any)
	return !isMap
}

// Prefix returns String(s) cut to at most n bytes at a rune boundary, and
// whether anything was cut, redacting only a window of s a little longer
// than n: a 50 MB string costs a few kilobytes, not a 50 MB copy.
//
// Exactness: String replaces literal patterns (every form of every secret)
// left to right, so its output for a window of s differs from its output
// for s only in what it makes of the window's last (longest pattern − 1)
// bytes — at most 2.5× that ("<REDACTED>" for a 4-byte pattern). Prefix
// keeps a margin of 3× the longest pattern beyond n, so Prefix(s, n) is
// exactly the cut of String(s).
func (r *Redactor) Prefix(s string, n int) (string, bool) {
	margin := 3 * r.longestPattern()
	for w := n + margin; ; w *= 2 {
		if w >= len(s) {
			red := r.String(s)
			if len(red) <= n {
				return red, false
			}
			return cutRunes(red, n), true
		}
		if margin == 0 {
			return cutRunes(s, n), true
		}
		if red := r.String(s[:w]); len(red)-margin >= n {
			return cutRunes(red, n), true
		}
	}
}

// Suffix returns the end of String(s), at most n bytes, cut at a rune
// boundary, without a piece of a secret: a secret that straddles the cut is
// dropped whole (only a whole secret is masked, so the end of one cut
// in half would show). It masks only a window a little longer than n.
func (r *Redactor) Suffix(s string, n int) string {
	if len(s) <= n {
		return r.String(s)
	}
	l := r.longestPattern()
	for w := n + 3*l; ; w *= 2 {
		if w >= len(s) {
			return lastRunes(r.String(s), n)
		}
		// The window's first l-1 bytes may hold the end of a secret
		// that starts before it; they are dropped with the cut.
		if red := r.String(s[len(s)-w:]); len(red)-n >= l {
			return lastRunes(red, n)
		}
	}
}

// lastRunes is the end of s, at most n bytes, starting at a rune.
func lastRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// longestPattern is the length of the longest pattern String replaces (0:
// none).
func (r *Redactor) longestPattern() int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	n := 0
	for p := range r.patterns {
		n = max(n, len(p))
	}
	return n
}

// cutRunes cuts s to at most n bytes at a rune boundary.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
