package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// encodings are the ways a secret reaches pflow's output: as written, or
// encoded by pflow, a node, a tool or a server.
var encodings = []struct {
	name string
	enc  func(string) string
}{
	{"raw", func(s string) string { return s }},
	{"query-escape", url.QueryEscape},
	{"path-escape", url.PathEscape},
	{"json", func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }},
	{"json-no-html", func(s string) string {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		b := bytes.TrimSpace(buf.Bytes())
		return string(b[1 : len(b)-1])
	}},
	{"json-in-json", func(s string) string {
		// A JSON document holding the secret, quoted again as a string (a
		// tool's JSON text inside pflow's JSON envelope).
		inner, _ := json.Marshal(map[string]string{"v": s})
		outer, _ := json.Marshal(string(inner))
		return string(outer)
	}},
	{"python-json", asciiJSONEscape},
	{"base64-std", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }},
	{"base64-url", func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) }},
	{"base64-std-raw", func(s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) }},
	{"base64-url-raw", func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }},
	{"basic-auth", func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+s)) }},
	{"basic-auth-long-user", func(s string) string { return base64.StdEncoding.EncodeToString([]byte("alice.smith:" + s)) }},
	{"basic-auth-url-alphabet", func(s string) string { return base64.URLEncoding.EncodeToString([]byte("ab:" + s + "?>")) }},
}

// TestRedactorMasksEveryEncoding plants each secret in each encoding inside
// ordinary text and checks that neither the encoded form nor the secret
// survives, and that the surrounding text does.
func TestRedactorMasksEveryEncoding(t *testing.T) {
	secrets := []string{
		"ghp_PlainAlnumToken1234567890",
		`p@ss/w+rd&q=1 "quoted" <tag> \back`,
		"pässwörd-ünïcode-€-𝄞",
		"abcd",     // the shortest maskable value
		"Sh0rt!pw", // exactly minEmbeddedLen
	}
	for _, secret := range secrets {
		r := NewRedactor()
		r.AddSecret("SECRET", secret)
		for _, e := range encodings {
			if len(secret) < minEmbeddedLen && strings.HasPrefix(e.name, "basic-auth") {
				continue // documented: embedded base64 needs 8+ bytes
			}
			t.Run(e.name+"/"+secret, func(t *testing.T) {
				enc := e.enc(secret)
				text := "before " + enc + " after"
				got := r.String(text)
				if strings.Contains(got, enc) {
					t.Fatalf("%s form %q survives: %q", e.name, enc, got)
				}
				if !strings.Contains(got, Redacted) || !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") {
					t.Fatalf("%q", got)
				}
				// The same through a Writer.
				var buf bytes.Buffer
				if n, err := r.Writer(&buf).Write([]byte(text)); err != nil || n != len(text) {
					t.Fatalf("Write: %d %v", n, err)
				}
				if strings.Contains(buf.String(), enc) {
					t.Fatalf("writer: %q", buf.String())
				}
			})
		}
	}
}

func TestRedactorIgnoresShortAndNumericValues(t *testing.T) {
	cases := []struct {
		value string
		masks bool
	}{
		{"abc", false}, // shorter than MinSecretLen
		{"   ", false},
		{"8080", false}, // numbers would break counts and JSON
		{"12345678", false},
		{"3.14159", false},
		{"true", false},
		{"null", false},
		{"abcd", true},
		{"1234abcd", true},
	}
	for _, c := range cases {
		r := NewRedactor()
		r.AddSecret("X", c.value)
		text := `{"n": ` + c.value + `, "s": "` + c.value + `"}`
		masked := r.String(text) != text
		if masked != c.masks {
			t.Errorf("%q: masked=%v, want %v (%q)", c.value, masked, c.masks, r.String(text))
		}
		if Maskable(c.value) != c.masks {
			t.Errorf("Maskable(%q) = %v", c.value, !c.masks)
		}
	}
	// A number under a secret-looking name is still masked by its key.
	r := NewRedactor()
	got := r.Value(map[string]any{"pin_password": int64(1234), "port": int64(8080)}).(map[string]any)
	if got["pin_password"] != Redacted || got["port"] != int64(8080) {
		t.Fatalf("%v", got)
	}
}

func TestRedactorReplacesTheLongestSecretWhole(t *testing.T) {
	r := NewRedactor()
	r.AddSecret("A", "abcd")
	r.AddSecret("B", "abcdefgh-long")
	if got := r.String("x abcdefgh-long y abcd z"); got != "x <REDACTED> y <REDACTED> z" {
		t.Fatalf("%q", got)
	}
}

func TestAddSecretsInFindsSecretsInParamsAndURLs(t *testing.T) {
	cases := []struct {
		name   string
		value  any
		secret string
	}{
		{"secret-named param", map[string]any{"auth_token": "tok-param-9f8e7d"}, "tok-param-9f8e7d"},
		{"nested secret name", map[string]any{"headers": map[string]any{"X-Api-Key": "hdr-key-5a4b3c"}}, "hdr-key-5a4b3c"},
		{"list under a secret name", map[string]any{"passwords": nil, "api_keys": []any{"first-key-111aaa"}}, ""},
		{"bearer credential alone", map[string]any{"Authorization": "Bearer bearer-cred-77xx"}, "bearer-cred-77xx"},
		{"basic credential decoded", map[string]any{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("bob:basic-pass-42zz"))}, "basic-pass-42zz"},
		{"URL password", map[string]any{"url": "https://bob:url-pass-31q@example.com/x"}, "url-pass-31q"},
		{"URL password in free text", map[string]any{"command": "psql postgres://app:pg-pass-8k2m@db:5432/app -c 'select 1'"}, "pg-pass-8k2m"},
		{"URL password with an encoded character", map[string]any{"url": "https://bob:enc%2Fpass-99@example.com"}, "enc/pass-99"},
		{"api_key query param", map[string]any{"url": "https://api.example.com/v1?q=go&api_key=qk-123abc456"}, "qk-123abc456"},
		{"key query param", map[string]any{"endpoint": "https://maps.example.com/geo?key=AIzaKey0987654"}, "AIzaKey0987654"},
		{"token query param", map[string]any{"u": []any{"wss://h.example/ws?token=ws-tok-5566"}}, "ws-tok-5566"},
		{"token as the user name", map[string]any{"repo": "https://ghp_UserNameToken123456@github.com/o/r.git"}, "ghp_UserNameToken123456"},
		{"input map", map[string]string{"db_password": "hunter2-db"}, "hunter2-db"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewRedactor()
			r.AddSecretsIn(c.value)
			if c.secret == "" {
				return
			}
			if got := r.String("[" + c.secret + "]"); got != "["+Redacted+"]" {
				t.Fatalf("%q not registered: %q", c.secret, got)
			}
		})
	}
	// Ordinary values stay visible.
	r := NewRedactor()
	r.AddSecretsIn(map[string]any{"url": "postgres://postgres@localhost/db?sslmode=disable", "max_tokens": "4096", "author": "alice-smith", "message": "hello world"})
	for _, s := range []string{"postgres", "localhost", "disable", "alice-smith", "hello world"} {
		if r.String(s) != s {
			t.Errorf("%q masked but it is not a secret", s)
		}
	}
}

func TestWriterPassesThroughAndUnwraps(t *testing.T) {
	var buf bytes.Buffer
	r := NewRedactor()
	w := r.Writer(&buf)
	w.Write([]byte("no secrets yet: s3cr3t-value\n"))
	r.AddSecret("", "s3cr3t-value")
	w.Write([]byte("now masked: s3cr3t-value\n"))
	if buf.String() != "no secrets yet: s3cr3t-value\nnow masked: <REDACTED>\n" {
		t.Fatalf("%q", buf.String())
	}
	if w.Unwrap() != &buf || w.Redactor() != r {
		t.Fatal("Unwrap/Redactor")
	}
}

func TestEmbeddedBase64MatchesAtEveryOffset(t *testing.T) {
	secret := []byte("0123456789-secret")
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for pre := 0; pre < 7; pre++ {
			for post := 0; post < 4; post++ {
				payload := append(append(bytes.Repeat([]byte{'x'}, pre), secret...), bytes.Repeat([]byte{'y'}, post)...)
				full := enc.EncodeToString(payload)
				raw := base64.RawStdEncoding
				if enc == base64.URLEncoding {
					raw = base64.RawURLEncoding
				}
				core := embeddedBase64(raw, secret, pre%3)
				if len(core) < 2*len(secret)*4/3/2 || !strings.Contains(full, core) {
					t.Fatalf("pre=%d post=%d: core %q not in %q", pre, post, core, full)
				}
			}
		}
	}
}

func TestForkKeepsItsOwnSecrets(t *testing.T) {
	base := NewRedactor()
	base.AddSecret("BASE", "base-secret-1")
	a, b := base.Fork(), base.Fork()
	a.AddSecret("", "request-a-secret")
	for _, c := range []struct {
		r    *Redactor
		text string
		want string
	}{
		{a, "base-secret-1 request-a-secret", "<REDACTED> <REDACTED>"},
		{b, "base-secret-1 request-a-secret", "<REDACTED> request-a-secret"},
		{base, "base-secret-1 request-a-secret", "<REDACTED> request-a-secret"},
	} {
		if got := c.r.String(c.text); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
	if names := a.SecretNames(); len(names) != 1 || names[0] != "BASE" {
		t.Errorf("%v", names)
	}
}

// The end of a long text never shows a piece of a secret, wherever the cut
// falls: a secret cut in half is dropped whole with the cut.
func TestSuffixNeverKeepsHalfASecret(t *testing.T) {
	const secret = "s3cr3t-t0ken-value-XYZ"
	r := NewRedactor()
	r.AddSecret("API_TOKEN", secret)
	text := strings.Repeat("a", 50) + secret + strings.Repeat("b", 30) + secret + strings.Repeat("c", 40)
	for n := 1; n < len(text)+5; n++ {
		got := r.Suffix(text, n)
		if len(got) > n {
			t.Fatalf("n=%d: %d bytes", n, len(got))
		}
		for i := 4; i < len(secret); i++ { // any piece of 4+ bytes
			for j := 0; j+i <= len(secret); j++ {
				if strings.Contains(got, secret[j:j+i]) {
					t.Fatalf("n=%d: %q shows %q", n, got, secret[j:j+i])
				}
			}
		}
		if want := r.String(text); len(want) <= n && got != want {
			t.Fatalf("n=%d: a text that fits is masked whole: %q", n, got)
		}
	}
	if got := r.Suffix(text, 45); !strings.HasSuffix(got, strings.Repeat("c", 40)) {
		t.Errorf("the end is kept: %q", got)
	}
}
