package sink

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// hostileURLValues would add a path segment, a query parameter, a fragment,
// change the host or break the request line if they were pasted into a URL.
var hostileURLValues = []string{
	"a&admin=1",
	"../../etc",
	"x#frag",
	"evil.com/",
	"@evil.com",
	"%2e%2e",
	"%2F",
	"a b",
	"ünï/cödé 🚀",
	"a\r\nX-Injected: 1",
	"?x=1",
	"a/b",
	"a+b=c;d,e:f$g",
	`\evil`,
	"${x}",
	"..x",
	"http://evil.com/",
}

// received is the request a test server saw.
type received struct {
	host, path, escapedPath, rawQuery string
	query                             url.Values
	user, pass                        string
	hasAuth                           bool
}

func recorder(t *testing.T) (*httptest.Server, func() received) {
	var mu sync.Mutex
	var last received
	// A bare handler: no ServeMux, so nothing cleans or redirects the path.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		mu.Lock()
		last = received{r.Host, r.URL.Path, r.URL.EscapedPath(), r.URL.RawQuery, r.URL.Query(), u, p, ok}
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv, func() received {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

// send renders tmpl with v bound to ${v} and sends a GET to the result.
func send(t *testing.T, tmpl string, root map[string]any) (string, error) {
	t.Helper()
	out, unresolved, err := URL(tmpl, root)
	if err != nil {
		return "", err
	}
	if len(unresolved) > 0 {
		t.Fatalf("URL(%q): unresolved %v", tmpl, unresolved)
	}
	out = strings.TrimSpace(out) // as the http node does
	resp, err := http.Get(out)
	if err != nil {
		t.Fatalf("GET %q (from %q): %v", out, tmpl, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return out, nil
}

func segments(escapedPath string) []string {
	var out []string
	for _, s := range strings.Split(escapedPath, "/") {
		d, err := url.PathUnescape(s)
		if err != nil {
			d = "<bad escape " + s + ">"
		}
		out = append(out, d)
	}
	return out
}

// TestURLValuesStayInTheirPart sends every hostile value into each part of a
// URL and checks on the server that the value arrived intact in that part
// and nothing else about the request changed.
func TestURLValuesStayInTheirPart(t *testing.T) {
	srv, last := recorder(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	positions := []struct {
		name  string
		tmpl  string
		check func(t *testing.T, v, out string, r received)
	}{
		{"path segment", srv.URL + "/items/${v}/end", func(t *testing.T, v, out string, r received) {
			if got, want := segments(r.escapedPath), []string{"", "items", v, "end"}; !reflect.DeepEqual(got, want) {
				t.Errorf("path segments = %q, want %q (raw path %q)", got, want, r.escapedPath)
			}
			if r.path != "/items/"+v+"/end" || r.rawQuery != "" {
				t.Errorf("path %q query %q", r.path, r.rawQuery)
			}
		}},
		{"path with text", srv.URL + "/items/id-${v}.json", func(t *testing.T, v, out string, r received) {
			if got, want := segments(r.escapedPath), []string{"", "items", "id-" + v + ".json"}; !reflect.DeepEqual(got, want) {
				t.Errorf("path segments = %q, want %q", got, want)
			}
		}},
		{"query value", srv.URL + "/q?a=${v}&b=2", func(t *testing.T, v, out string, r received) {
			if want := (url.Values{"a": {v}, "b": {"2"}}); !reflect.DeepEqual(r.query, want) {
				t.Errorf("query = %v, want %v (raw %q)", r.query, want, r.rawQuery)
			}
			if r.path != "/q" {
				t.Errorf("path = %q", r.path)
			}
		}},
		{"query key", srv.URL + "/q?${v}=1", func(t *testing.T, v, out string, r received) {
			if want := (url.Values{v: {"1"}}); !reflect.DeepEqual(r.query, want) {
				t.Errorf("query = %v, want %v (raw %q)", r.query, want, r.rawQuery)
			}
		}},
		{"fragment", srv.URL + "/f?k=1#${v}", func(t *testing.T, v, out string, r received) {
			if r.path != "/f" || r.rawQuery != "k=1" {
				t.Errorf("path %q query %q", r.path, r.rawQuery)
			}
			u, err := url.Parse(out)
			if err != nil || u.Fragment != v {
				t.Errorf("fragment of %q = %q (%v), want %q", out, u.Fragment, err, v)
			}
		}},
		{"password", "http://u:${v}@" + host + "/u", func(t *testing.T, v, out string, r received) {
			if !r.hasAuth || r.user != "u" || r.pass != v {
				t.Errorf("basic auth = %q:%q (%v), want u:%q", r.user, r.pass, r.hasAuth, v)
			}
			if r.path != "/u" {
				t.Errorf("path = %q", r.path)
			}
		}},
	}
	positions = append(positions, struct {
		name  string
		tmpl  string
		check func(t *testing.T, v, out string, r received)
	}{"user name", "http://${v}:pw@" + host + "/u", func(t *testing.T, v, out string, r received) {
		if !r.hasAuth || r.user != v || r.pass != "pw" {
			t.Errorf("basic auth = %q:%q (%v), want %q:pw", r.user, r.pass, r.hasAuth, v)
		}
	}})
	for _, p := range positions {
		t.Run(p.name, func(t *testing.T) {
			for _, v := range hostileURLValues {
				if p.name == "user name" && strings.Contains(v, ":") {
					// Basic auth splits user:password at the first ':'.
					if _, _, err := URL(p.tmpl, map[string]any{"v": v}); err == nil || !strings.Contains(err.Error(), "contains ':'") {
						t.Errorf("user name %q: err = %v, want a refusal", v, err)
					}
					continue
				}
				out, err := send(t, p.tmpl, map[string]any{"v": v})
				if err != nil {
					t.Errorf("value %q: %v", v, err)
					continue
				}
				r := last()
				if r.host != host {
					t.Errorf("value %q: the request went to host %q, want %q", v, r.host, host)
				}
				p.check(t, v, out, r)
			}
		})
	}
}

// TestURLHostValues: a value after "//" must be a host or host:port.
func TestURLHostValues(t *testing.T) {
	srv, last := recorder(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	hostname, port, _ := strings.Cut(host, ":")
	for _, tc := range []struct{ tmpl, want string }{
		{"http://${h}/x", host},
		{"http://${name}:${port}/x", host},
		{"http://127.0.0.${last}:${port}/x", host},
	} {
		if _, err := send(t, tc.tmpl, map[string]any{"h": host, "name": hostname, "port": port, "last": "1"}); err != nil {
			t.Fatalf("%s: %v", tc.tmpl, err)
		}
		if r := last(); r.host != tc.want || r.path != "/x" {
			t.Errorf("%s: host %q path %q", tc.tmpl, r.host, r.path)
		}
	}

	refused := map[string]string{
		"evil.com/":           `contains '/'`,
		"@evil.com":           `contains '@'`,
		"evil.com?x=":         `contains '?'`,
		"evil.com#":           `contains '#'`,
		`evil.com\x`:          `contains '\\'`,
		"a b":                 "contains a space",
		"a\r\nX-Injected: 1":  "contains a line break",
		"a\x00b":              "contains a control character",
		"":                    "is empty",
		"evil.com:80:90":      "not of the form host or host:port",
		"%65vil.com":          `contains '%'`,
		"user:pw@evil.com":    `contains '@'`,
		"127.0.0.1:1/../x":    `contains '/'`,
		"evil.com:x":          "not of the form host or host:port",
		"[::1":                "not of the form host or host:port",
		"127.0.0.1:1\\@b.com": `contains '\\'`,
	}
	for v, want := range refused {
		_, _, err := URL("http://${h}/x", map[string]any{"h": v})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("host %q: err = %v, want it to contain %q", v, err, want)
			continue
		}
		p := err.(*Problem)
		if p.Template != "${h}" || !strings.Contains(p.Message, "${h}") || p.Hint == "" {
			t.Errorf("host %q: problem = %+v", v, p)
		}
	}
	// A host value that is valid on its own but breaks the host it is part of.
	if _, _, err := URL("http://${h}.example.com/", map[string]any{"h": "a:80"}); err == nil {
		t.Error("a port in the middle of a host name was accepted")
	}
}

// TestURLBase: a template that starts the URL is a trusted base URL; the
// result must still be an http(s) URL with a host.
func TestURLBase(t *testing.T) {
	srv, last := recorder(t)
	for _, tc := range []struct {
		tmpl string
		root map[string]any
		path string
		q    url.Values
	}{
		{"${next}", map[string]any{"next": srv.URL + "/page?cursor=a%26b"}, "/page", url.Values{"cursor": {"a&b"}}},
		{"${api}/items/${id}", map[string]any{"api": srv.URL + "/v1", "id": "a/b"}, "/v1/items/a/b", url.Values{}},
		{"${api.base}/x?q=${q}", map[string]any{"api": map[string]any{"base": srv.URL}, "q": "1&admin=1"}, "/x", url.Values{"q": {"1&admin=1"}}},
		{"${next}&limit=${n}", map[string]any{"next": srv.URL + "/p?c=1", "n": "5&x=1"}, "/p", url.Values{"c": {"1"}, "limit": {"5&x=1"}}},
		{"  ${next}", map[string]any{"next": srv.URL + "/t"}, "/t", url.Values{}},
	} {
		out, err := send(t, tc.tmpl, tc.root)
		if err != nil {
			t.Errorf("%s: %v", tc.tmpl, err)
			continue
		}
		if r := last(); r.path != tc.path || !reflect.DeepEqual(r.query, tc.q) {
			t.Errorf("%s → %s: path %q query %v, want %q %v", tc.tmpl, out, r.path, r.query, tc.path, tc.q)
		}
	}
	// The value after a base is one path segment: its '/' is encoded.
	if out, _, _ := URL("${api}/items/${id}", map[string]any{"api": "https://h", "id": "a/b"}); out != "https://h/items/a%2Fb" {
		t.Errorf("out = %q", out)
	}

	refused := map[string]string{
		"javascript:alert(1)": "does not start with http:// or https://",
		"file:///etc/passwd":  "does not start with http:// or https://",
		"ftp://h/x":           "does not start with http:// or https://",
		"//evil.com/x":        "does not start with http:// or https://",
		"evil.com":            "does not start with http:// or https://",
		"https://":            "has no host",
		"https://h\r\n/":      "is not valid",
		"https://a b/":        "is not valid",
	}
	for v, want := range refused {
		_, _, err := URL("${base}/x", map[string]any{"base": v})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("base %q: err = %v, want it to contain %q", v, err, want)
		}
	}
}

// TestURLRefusals: templates that would change the structure whatever their
// value, and path values that servers would resolve to another path.
func TestURLRefusals(t *testing.T) {
	for _, tc := range []struct {
		tmpl string
		root map[string]any
		want string
	}{
		{"http${s}://h/", map[string]any{"s": "s"}, "inside the URL's scheme"},
		{"https://h/a/${v}/b", map[string]any{"v": ".."}, `path segment ".."`},
		{"https://h/a/${v}", map[string]any{"v": "."}, `path segment "."`},
		{"https://h/a/${v}/b", map[string]any{"v": ""}, "path segment empty"},
		{"https://h/a/${v}", map[string]any{"v": ""}, "path segment empty"},
		{"https://h/a/${v}${w}/b", map[string]any{"v": ".", "w": "."}, `path segment ".."`},
		{"https://h/a/%2e${v}/b", map[string]any{"v": "."}, `path segment ".."`},
		{"https://h/a/${v}?x=1", map[string]any{"v": ".."}, `path segment ".."`},
	} {
		_, _, err := URL(tc.tmpl, tc.root)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: err = %v, want %q", tc.tmpl, tc.root, err, tc.want)
		}
	}
	// Dots that are not a whole segment, and empty values outside the path,
	// are data.
	for _, tc := range []struct {
		tmpl string
		root map[string]any
		want string
	}{
		{"https://h/a/${v}.json", map[string]any{"v": ".."}, "https://h/a/...json"},
		{"https://h/a/x${v}", map[string]any{"v": ""}, "https://h/a/x"},
		{"https://h/a?q=${v}", map[string]any{"v": ""}, "https://h/a?q="},
		{"https://h/a/${v}", map[string]any{"v": "..."}, "https://h/a/..."},
	} {
		out, _, err := URL(tc.tmpl, tc.root)
		if err != nil || out != tc.want {
			t.Errorf("%s %v = %q, %v; want %q", tc.tmpl, tc.root, out, err, tc.want)
		}
	}
}

func TestURLRendering(t *testing.T) {
	root := map[string]any{
		"id":    int64(42),
		"items": []any{"a b", "c/d"},
		"i":     int64(1),
		"flag":  true,
	}
	for _, tc := range []struct {
		tmpl, want string
		unresolved []string
	}{
		{"https://h/x", "https://h/x", nil},
		{"https://h/$${id}/${id}", "https://h/${id}/42", nil},
		{"https://h/${items[${i}]}?f=${flag}", "https://h/c%2Fd?f=true", nil},
		{"https://h/${items[0]}?q=${items[0]}#${items[0]}", "https://h/a%20b?q=a+b#a%20b", nil},
		{"https://h/${missing}/${id}?q=${missing}", "https://h/$%7Bmissing%7D/42?q=%24%7Bmissing%7D", []string{"${missing}"}},
		{"${base}/x", "${base}/x", []string{"${base}"}},
		{"https://${host}/x", "https://${host}/x", []string{"${host}"}},
	} {
		out, unresolved, err := URL(tc.tmpl, root)
		if err != nil || out != tc.want || !reflect.DeepEqual(unresolved, tc.unresolved) {
			t.Errorf("URL(%q) = %q, %v, %v; want %q, %v", tc.tmpl, out, unresolved, err, tc.want, tc.unresolved)
		}
	}
}

// A long URL in a message is cut at a rune boundary (it was cut at byte 77
// even inside a character of an opaque URL, which String leaves as it is).
func TestShortURLCutsAtARune(t *testing.T) {
	u := &url.URL{Scheme: "x", Opaque: strings.Repeat("a", 74) + "é and more"}
	if got, want := shortURL(u), "x:"+strings.Repeat("a", 74)+"..."; got != want {
		t.Errorf("shortURL = %q, want %q", got, want)
	}
}
