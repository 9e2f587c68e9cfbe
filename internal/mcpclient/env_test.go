package mcpclient

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func lookupFrom(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TestExpandEnvDefaults covers the Python pflow's ${VAR:-default} cases and
// their edge cases.
func TestExpandEnvDefaults(t *testing.T) {
	env := map[string]string{
		"SET": "value", "EMPTY": "", "SPACES": "   ", "V1": "val1", "V3": "val3",
		"lower_var": "low", "_PRIVATE_VAR": "priv", "VAR123": "n", "MY_VAR_NAME": "u",
		"GITHUB_TOKEN": "ghp_real", "OPENAI_API_KEY": "sk-real", "URL_OVERRIDE": "https://real",
	}
	cases := []struct {
		name, in, want string
		missing        []string
	}{
		{"simple_var_with_default_when_missing", "${NOPE:-fallback}", "fallback", nil},
		{"simple_var_with_default_when_present", "${SET:-fallback}", "value", nil},
		{"empty_env_var_uses_empty_not_default", "${EMPTY:-default}", "", nil},
		{"default_with_spaces", "${NOPE:-a b c}", "a b c", nil},
		{"default_with_special_chars", "${NOPE:-key_123-@#$%}", "key_123-@#$%", nil},
		{"empty_default", "${NOPE:-}", "", nil},
		{"multiple_vars_in_string", "${V1:-x}/${NOPE2:-default2}", "val1/default2", nil},
		{"url_with_default", "${NOPE:-https://api.example.com}/v1", "https://api.example.com/v1", nil},
		{"url_with_env_override", "${URL_OVERRIDE:-https://api.example.com}/v1", "https://real/v1", nil},
		{"github_token_pattern_default", "${NOPE_TOKEN:-ghp_default}", "ghp_default", nil},
		{"github_token_pattern_real", "${GITHUB_TOKEN:-ghp_default}", "ghp_real", nil},
		{"composio_pattern", "Bearer ${NOPE_KEY:-test_key}", "Bearer test_key", nil},
		{"no_expansion_for_regular_syntax", "${SET}", "value", nil},
		{"regular_var_missing_gets_empty", "${MISSING_VAR}", "", []string{"MISSING_VAR"}},
		{"mixed_syntax_in_same_string", "here_${NOPE:-default}_${MISSING_B}", "here_default_", []string{"MISSING_B"}},
		{"default_with_colons", "${NOPE:-http://localhost:8080}", "http://localhost:8080", nil},
		{"default_with_curly_braces", `${CONFIG:-{"key":"value"}}`, `{"key":"value"}`, nil},
		{"lowercase_variable_names_expanded", "${lower_var:-x}", "low", nil},
		{"variable_starting_with_number_not_expanded", "${123VAR:-default}", "${123VAR:-default}", nil},
		{"underscore_prefix_allowed_set", "${_PRIVATE_VAR:-secret}", "priv", nil},
		{"underscore_prefix_allowed_missing", "${_NOPE_VAR:-secret}", "secret", nil},
		{"variable_with_numbers_allowed", "${VAR123}", "n", nil},
		{"variable_with_underscores_allowed", "${MY_VAR_NAME}", "u", nil},
		{"single_dash_not_default_syntax", "${VAR-default}", "${VAR-default}", nil},
		{"single_colon_not_default_syntax", "${VAR:default}", "${VAR:default}", nil},
		{"no_variable_name_not_expanded", "${:-default}", "${:-default}", nil},
		{"unclosed_brace_not_expanded", "${VAR:-default", "${VAR:-default", nil},
		{"no_braces_not_expanded", "$VAR", "$VAR", nil},
		{"default_with_closing_brace_stops_at_first", "${NOPE:-nested}value}", "nestedvalue}", nil},
		{"double_closing_brace", "${NOPE:-}}", "}", nil},
		{"nested_variable_in_default_not_expanded", "${MISSING:-${OTHER}}", "${OTHER}", nil},
		{"nested_default_in_default_not_expanded", "${A_NOPE:-${B:-x}}", "${B:-x}", nil},
		{"escaped_characters_in_default", `${NOPE:-\}escaped}`, `\escaped}`, nil},
		{"default_with_minus_flag", "${DEBUG:--verbose}", "-verbose", nil},
		{"default_with_equals_sign", "${NOPE:-key=value}", "key=value", nil},
		{"default_with_quotes", `${NOPE:-'single' "double"}`, `'single' "double"`, nil},
		{"default_with_newlines", `${NOPE:-line1\nline2}`, `line1\nline2`, nil},
		{"multiple_expansions_complex", "prefix-${V1}/${N2:-def2}/${V3}/${N4:-def4}-suffix", "prefix-val1/def2/val3/def4-suffix", nil},
		{"openai_api_key_pattern_default", "Bearer ${NOPE_OPENAI:-sk-default}", "Bearer sk-default", nil},
		{"openai_api_key_pattern_env", "Bearer ${OPENAI_API_KEY:-sk-default}", "Bearer sk-real", nil},
		{"database_url_pattern", "${DB_NOPE:-postgresql://user:pass@localhost:5432/db?sslmode=disable}", "postgresql://user:pass@localhost:5432/db?sslmode=disable", nil},
		{"proxy_configuration_pattern", "${NO_PROXY_X:-${HTTP_PROXY:-http://proxy.local:8080}}", "${HTTP_PROXY:-http://proxy.local:8080}", nil},
		{"whitespace_only_env_var", "${SPACES:-default}", "   ", nil},
		{"empty_string_vs_missing_env_var", "${EMPTY:-d}|${NOPE:-d}", "|d", nil},
		{"command_injection_not_a_reference", "${VAR;rm -rf /}", "${VAR;rm -rf /}", nil},
		{"backticks_and_subshell_kept", "`id` $(id)", "`id` $(id)", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &Expander{Lookup: lookupFrom(env)}
			if got := e.ExpandString(c.in); got != c.want {
				t.Fatalf("ExpandString(%q) = %q, want %q", c.in, got, c.want)
			}
			if got := e.Missing(); !reflect.DeepEqual(got, c.missing) && !(len(got) == 0 && len(c.missing) == 0) {
				t.Fatalf("missing = %v, want %v", got, c.missing)
			}
		})
	}
}

func TestExpandNestedStructures(t *testing.T) {
	e := &Expander{Lookup: lookupFrom(map[string]string{"A": "a", "TOKEN": "t0k"})}
	in := map[string]any{
		"command": "${A}",
		"args":    []any{"x", "${A:-z}", []any{"${NOPE:-d}"}},
		"env":     map[string]any{"TOKEN": "${TOKEN}", "N": int64(3), "B": true, "Z": nil},
		"${A}":    "key not expanded",
		"auth":    map[string]any{"type": "bearer", "token": "${MISSING_TOKEN}"},
	}
	got := e.Expand(in).(map[string]any)
	want := map[string]any{
		"command": "a",
		"args":    []any{"x", "a", []any{"d"}},
		"env":     map[string]any{"TOKEN": "t0k", "N": int64(3), "B": true, "Z": nil},
		"${A}":    "key not expanded",
		"auth":    map[string]any{"type": "bearer", "token": ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Expand = %#v\nwant %#v", got, want)
	}
	if in["command"] != "${A}" {
		t.Fatal("Expand modified its input")
	}
	var buf bytes.Buffer
	e.WarnMissing(&buf, "github")
	out := buf.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "MISSING_TOKEN") || !strings.Contains(out, "pflow settings set-env MISSING_TOKEN=") || !strings.Contains(out, "export MISSING_TOKEN=") || !strings.Contains(out, "'github'") {
		t.Fatalf("warning = %q", out)
	}
}

func TestNoWarningWhenDefaultProvided(t *testing.T) {
	e := &Expander{}
	e.ExpandString("${X_NOPE:-d} ${Y_NOPE:-}")
	var buf bytes.Buffer
	e.WarnMissing(&buf, "s")
	if buf.Len() != 0 {
		t.Fatalf("unexpected warning %q", buf.String())
	}
}

func TestLookupChainSettingsCaseInsensitive(t *testing.T) {
	proc := lookupFrom(map[string]string{"SHARED": "from-env"})
	l := LookupChain(proc, map[string]string{"replicate_api_token": "r8", "SHARED": "from-settings"})
	if v, ok := l("REPLICATE_API_TOKEN"); !ok || v != "r8" {
		t.Fatalf("case-insensitive settings lookup = %q %v", v, ok)
	}
	if v, _ := l("SHARED"); v != "from-env" {
		t.Fatalf("process env must win over settings, got %q", v)
	}
	if _, ok := l("NOPE"); ok {
		t.Fatal("NOPE found")
	}
}

func FuzzExpandString(f *testing.F) {
	for _, s := range []string{"${A}", "${A:-x}", "${A:-}}", "$${}", "${:-}", "${A:-${B}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := &Expander{Lookup: lookupFrom(map[string]string{"A": "1"})}
		out := e.ExpandString(s)
		if !strings.Contains(s, "${") && out != s {
			t.Fatalf("string without references changed: %q -> %q", s, out)
		}
	})
}

// A stdio server gets what package runners need (caches, registries,
// proxies, CA bundles) so `npx -y` and `uvx` servers start as in a shell,
// and still no secret of pflow's own environment.
func TestChildEnvLetsPackageRunnersWork(t *testing.T) {
	pflowEnv := map[string]string{
		"PATH": "/usr/bin", "HOME": "/home/me", "XDG_CACHE_HOME": "/home/me/.cache",
		"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "localhost", "npm_config_registry": "https://npm.corp/",
		"NPM_CONFIG_CACHE": "/var/npm", "npm_config_https_proxy": "http://proxy:3128", "npm_config_cafile": "/etc/corp-ca.pem", "NODE_EXTRA_CA_CERTS": "/etc/corp-ca.pem", "UV_INDEX_URL": "https://pypi.corp/simple",
		"GITHUB_TOKEN": "ghp_secret", "OPENAI_API_KEY": "sk-secret", "AWS_SECRET_ACCESS_KEY": "aws-secret",
	}
	srv := &Server{Name: "s", Config: Config{Env: map[string]string{"GITHUB_TOKEN": "from-config"}}, ProcessEnv: func(k string) (string, bool) {
		v, ok := pflowEnv[k]
		return v, ok
	}}
	got := map[string]string{}
	for _, kv := range childEnv(srv) {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	for _, k := range []string{"PATH", "HOME", "XDG_CACHE_HOME", "HTTPS_PROXY", "NO_PROXY", "npm_config_registry", "NPM_CONFIG_CACHE", "npm_config_https_proxy", "npm_config_cafile", "NODE_EXTRA_CA_CERTS", "UV_INDEX_URL"} {
		if got[k] != pflowEnv[k] {
			t.Errorf("%s = %q, want %q", k, got[k], pflowEnv[k])
		}
	}
	if got["GITHUB_TOKEN"] != "from-config" {
		t.Errorf("the config's env wins: GITHUB_TOKEN = %q", got["GITHUB_TOKEN"])
	}
	for _, k := range []string{"OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s of pflow's environment reached the server", k)
		}
	}
}
