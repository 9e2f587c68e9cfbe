package reliability

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// hostileURLValues would add a path segment or query parameter, change the
// host or add a header if pflow pasted them into a URL or a header.
var hostileURLValues = []string{
	"a&admin=1",
	"../../etc",
	"x#frag",
	"evil.com/",
	"@evil.com",
	"%2e%2e",
	"a b",
	"ünï/cödé",
	"a\r\nX-Injected: 1",
	"?x=1",
	"a/b",
	`\evil`,
	"${x}",
}

// TestHostileValuesInURLsAndHeaders sends hostile values from a CLI input
// and from an HTTP response into the path, the query and a header of http
// steps (see docs/decisions.md, "Template values are data"): on the server each
// value arrives intact in its part,
// the host and the other parameters are unchanged, and a value with a line
// break never reaches the server as a header.
func TestHostileValuesInURLsAndHeaders(t *testing.T) {
	var mu sync.Mutex
	var headerHits, injected int
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/value" {
			i, _ := strconv.Atoi(r.URL.Query().Get("i"))
			json.NewEncoder(w).Encode(map[string]any{"v": hostileURLValues[i]})
			return
		}
		var segs []string
		for _, s := range strings.Split(r.URL.EscapedPath(), "/") {
			d, _ := url.PathUnescape(s)
			segs = append(segs, d)
		}
		mu.Lock()
		if r.URL.Path == "/h" {
			headerHits++
		}
		if r.Header.Get("X-Injected") != "" {
			injected++
		}
		mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"segments": segs, "query": r.URL.Query(), "host": r.Host, "title": r.Header.Get("X-Title")})
	}))
	t.Cleanup(api.Close)
	host := strings.TrimPrefix(api.URL, "http://")

	steps := func(expr string) string {
		return "### path\nIn the path.\n- type: http\n- url: ${api}/items/" + expr + "/end\n\n" +
			"### query\nIn the query.\n- type: http\n- url: ${api}/q?a=" + expr + "&b=2\n\n" +
			"### header\nIn a header.\n- type: http\n- url: ${api}/h\n- headers: {X-Title: \"" + expr + "\"}\n\n"
	}
	const outputs = "## Outputs\n\n### path\nSeen.\n- source: ${path.response}\n\n### query\nSeen.\n- source: ${query.response}\n\n### header\nSeen.\n- source: ${header.response}\n"
	const declAPI = "### api\nThe API.\n- type: string\n\n"
	paths := []struct{ name, inputs, steps string }{
		{"cli input", declAPI + "### v\nThe value.\n- type: string\n\n", steps("${v}")},
		{"http response", declAPI + "### i\nIts index.\n- type: integer\n\n", "### src\nGet it.\n- type: http\n- url: ${api}/value?i=${i}\n\n" + steps("${src.response.v}")},
	}
	root := t.TempDir()
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			body := "# URL injection via " + p.name + "\nHostile data.\n\n## Inputs\n\n" + p.inputs + "## Steps\n\n" + p.steps + outputs
			wf := writeFile(t, filepath.Join(t.TempDir(), "url.pflow.md"), body)
			for i, v := range hostileURLValues {
				args := []string{"--output-format", "json", "--no-trace", wf, "api=" + api.URL}
				if p.name == "cli input" {
					args = append(args, "v="+v)
				} else {
					args = append(args, "i="+strconv.Itoa(i))
				}
				mu.Lock()
				before := headerHits
				mu.Unlock()
				r := pflowIn(t, root, t.TempDir(), nil, "", args...)
				if strings.ContainsAny(v, "\r\n") {
					mu.Lock()
					hits := headerHits - before
					mu.Unlock()
					if r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, "Header 'X-Title' contains a line break") || hits != 0 {
						t.Errorf("value %q: want the header step refused before sending (exit %d, %d requests)\nstdout: %s\nstderr: %s", v, r.Code, hits, r.Stdout, r.Stderr)
					}
					continue
				}
				if r.Code != 0 {
					t.Fatalf("value %q: exit %d\nstdout: %s\nstderr: %s", v, r.Code, r.Stdout, r.Stderr)
				}
				var env struct {
					Result map[string]struct {
						Segments []string            `json:"segments"`
						Query    map[string][]string `json:"query"`
						Host     string              `json:"host"`
						Title    string              `json:"title"`
					} `json:"result"`
				}
				if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil {
					t.Fatalf("stdout is not JSON: %v\n%s", err, r.Stdout)
				}
				for step, got := range env.Result {
					if got.Host != host {
						t.Errorf("value %q, %s: the request went to %q", v, step, got.Host)
					}
				}
				if got, want := env.Result["path"].Segments, []string{"", "items", v, "end"}; !reflect.DeepEqual(got, want) {
					t.Errorf("value %q: path segments %q, want %q", v, got, want)
				}
				if got, want := env.Result["query"].Query, map[string][]string{"a": {v}, "b": {"2"}}; !reflect.DeepEqual(got, want) {
					t.Errorf("value %q: query %v, want %v", v, got, want)
				}
				if got := env.Result["header"].Title; got != v {
					t.Errorf("value %q: header X-Title = %q", v, got)
				}
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if injected != 0 {
		t.Errorf("%d requests carried an injected header", injected)
	}
}
