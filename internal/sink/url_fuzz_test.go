package sink

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzURL: whatever a value holds, a template in the path, the query or the
// fragment of a fixed URL never changes the host, and its value comes back
// intact from exactly the part it was put in; rendering never panics.
func FuzzURL(f *testing.F) {
	for _, v := range hostileURLValues {
		f.Add(v)
	}
	f.Add("..")
	f.Add("")
	f.Add("%zz")
	f.Fuzz(func(t *testing.T, v string) {
		out, unresolved, err := URL("https://api.example.com/a/${v}/b?k=${v}&z=1#${v}", map[string]any{"v": v})
		if len(unresolved) > 0 {
			t.Fatalf("unresolved %v", unresolved)
		}
		if err != nil {
			if _, ok := err.(*Problem); !ok {
				t.Fatalf("error is not a *Problem: %T %v", err, err)
			}
			if seg, _ := url.PathUnescape(url.PathEscape(v)); seg != "" && seg != "." && seg != ".." {
				t.Fatalf("value %q refused: %v", v, err)
			}
			return
		}
		u, perr := url.Parse(out)
		if perr != nil {
			t.Fatalf("%q does not parse: %v", out, perr)
		}
		if u.Host != "api.example.com" || u.Scheme != "https" {
			t.Fatalf("value %q changed the host: %q", v, out)
		}
		segs := strings.Split(u.EscapedPath(), "/")
		if len(segs) != 4 || segs[1] != "a" || segs[3] != "b" {
			t.Fatalf("value %q changed the path: %q", v, u.EscapedPath())
		}
		if got, _ := url.PathUnescape(segs[2]); got != v {
			t.Fatalf("path segment %q, want %q", got, v)
		}
		q := u.Query()
		if len(q) != 2 || len(q["k"]) != 1 || q.Get("k") != v || q.Get("z") != "1" {
			t.Fatalf("value %q changed the query: %v", v, q)
		}
		if u.Fragment != v {
			t.Fatalf("fragment %q, want %q", u.Fragment, v)
		}
	})
}
