package workflow

import (
	"strings"
	"testing"
)

// TestMappingForm: a string of name/value pairs written where a mapping
// belongs is shown as the mapping that works.
func TestMappingForm(t *testing.T) {
	cases := map[string]string{
		"a=19 b=23":                 "{a: 19, b: 23}",
		"a=19, b=23":                "{a: 19, b: 23}",
		"a: 19, b: 23":              "{a: 19, b: 23}",
		"error -> fix":              "{error: fix}",
		"error=fix; rate_limited=w": "{error: fix, rate_limited: w}",
		`name="Ada Lovelace" n=1`:   `{name: "Ada Lovelace", n: 1}`,
		"Authorization: Bearer xyz": `{Authorization: "Bearer xyz"}`,
		"url=https://x.example/a":   `{url: "https://x.example/a"}`,
		"x=${item}":                 "{x: ${item}}",
		"X-Key=1":                   "{X-Key: 1}",
	}
	for in, want := range cases {
		if got, ok := MappingForm(in); !ok || got != want {
			t.Errorf("MappingForm(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "Authorization", "a b c", "=1", "items=[1,2] as"} {
		if got, ok := MappingForm(in); ok {
			t.Errorf("MappingForm(%q) = %q; want no form", in, got)
		}
	}
}

// TestEdgeKeysGivenText: 'on', input_mappings and output_mappings given
// text show the mapping the text lists.
func TestEdgeKeysGivenText(t *testing.T) {
	for key, want := range map[string]string{
		"on":              "'- on: {error: fix}'",
		"input_mappings":  "'- input_mappings: {error: fix}'",
		"output_mappings": "'- output_mappings: {error: fix}'",
	} {
		src := "# W\nW.\n\n## Steps\n\n### a\nA.\n- type: shell\n- command: exit 1\n- " + key + ": \"error=fix\"\n\n### fix\nF.\n- type: shell\n- command: echo\n"
		_, err := ParseMarkdown([]byte(src), "w.pflow.md")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %s", key, err, want)
		}
	}
}
