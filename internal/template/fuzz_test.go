package template

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzRefs checks the reference extractor's invariants on arbitrary text:
// it never panics, every Ref delimits itself in the input, its parts agree,
// and every outer reference is a simple template on its own.
func FuzzRefs(f *testing.F) {
	for _, s := range []string{
		"", "${a}", "x ${a.b[0].c} y", "$${a}", "${a[${b}]}", "${a[${b}].c", "${", "${}", "${a",
		"${VAR:-x}", "${fetch-data.items[12].x}", "$$${a}", "${a}${b}", "${a[99999999999]}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range Refs(s) {
			if r.Start < 0 || r.End > len(s) || r.Start >= r.End || s[r.Start:r.End] != r.Raw {
				t.Fatalf("bad offsets %d:%d for %q in %q", r.Start, r.End, r.Raw, s)
			}
			if r.Raw != "${"+r.Path+"}" {
				t.Fatalf("Raw %q does not wrap Path %q", r.Raw, r.Path)
			}
			if r.Start > 0 && s[r.Start-1] == '$' && !r.Nested {
				t.Fatalf("escaped template %q reported as a reference in %q", r.Raw, s)
			}
			head, segs, err := ParsePath(r.Path)
			if err != nil {
				t.Fatalf("ParsePath(%q) failed for an extracted ref: %v", r.Path, err)
			}
			if head != r.Head || len(segs) != len(r.Segments) {
				t.Fatalf("ParsePath(%q) disagrees with Refs: %q %v vs %q %v", r.Path, head, segs, r.Head, r.Segments)
			}
			h2, segs2, err := ParsePath(JoinPath(head, segs))
			if err != nil || h2 != head || !reflect.DeepEqual(segs2, segs) {
				t.Fatalf("JoinPath round trip of %q failed: %q %v %v", r.Path, h2, segs2, err)
			}
			if _, ok := IsSimple(r.Raw); !ok {
				t.Fatalf("extracted ref %q is not simple", r.Raw)
			}
		}
	})
}

// FuzzResolve checks that resolution never panics, leaves text without "${"
// untouched, and reports exactly the references it could not resolve.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"", "plain", "${name}", "hi ${name}", "$${name}", "${missing} ${name}", "${fetch.response.items[0].id}",
		"${sh.stdout.items[0].name}", "${prev.results[${__index__}].stdout}", "${nothing.x}", "${arr.stdout[7]}",
	} {
		f.Add(s)
	}
	root := testRoot(f)
	f.Fuzz(func(t *testing.T, s string) {
		out, unresolved := Resolve(s, root)
		if !strings.Contains(s, "${") {
			if out != s || unresolved != nil {
				t.Fatalf("template-free %q changed: %#v %q", s, out, unresolved)
			}
			return
		}
		if ref, ok := IsSimple(s); ok {
			v, found := Lookup(root, ref.Path)
			if found != (len(unresolved) == 0) {
				t.Fatalf("Lookup found=%v but unresolved=%q", found, unresolved)
			}
			if !found && out != s {
				t.Fatalf("unresolved simple template must stay literal: %#v", out)
			}
			_ = v
		} else if _, isStr := out.(string); !isStr {
			t.Fatalf("text with templates must resolve to a string, got %T", out)
		}
		for _, u := range unresolved {
			if !strings.Contains(s, u) {
				t.Fatalf("unresolved %q does not occur in %q", u, s)
			}
			if _, ok := IsSimple(u); !ok {
				t.Fatalf("unresolved %q is not a template", u)
			}
		}
	})
}
