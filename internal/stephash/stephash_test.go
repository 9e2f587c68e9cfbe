package stephash

import (
	"strings"
	"testing"
)

// Records of earlier builds hold HMAC-SHA256 digests, compared by Legacy
// when such a run is resumed: a change of the encoding or of how it is fed
// to the hash would make every step of those records look changed. These
// were computed by the first implementation (one hash write per field).
func TestLegacyDigestsAreStable(t *testing.T) {
	h := New([]byte("0123456789abcdef0123456789abcdef")).Legacy()
	big := strings.Repeat("xy", 100000) // larger than one flush
	vals := []any{nil, true, false, int64(7), 7, 7.0, "", "héllo", []any{int64(1), "a", nil},
		map[string]any{"b": int64(1), "a": map[string]any{"z": []any{1.5}, "y": "q"}}, big, map[string]any{"big": big, "k": []any{big}}}
	want := []string{
		"c2941498230ffd0a18cea4d68ba1b67fa7158ff0407b11df262a67f337f7684a",
		"8d213d3f8877287d19931f3dca4a6858c22d420a2e6c73f10234fd6e8e60cc80",
		"ec73b6e23aa6caa732a0b1f07c215ee554f68fd902b77e50b735d069bcb5bc95",
		"dbf3a01a546fece102c298f011800183d38056ca497f25c336a5b4b086bb8036",
		"dbf3a01a546fece102c298f011800183d38056ca497f25c336a5b4b086bb8036",
		"b9ea46f8e73dbf51b4f66ee4c65325fcd9ad81d7f44526578b7bf3d4a0f3c2fe",
		"a95472eb07898bd1c21a5a5545ab682364702ce06554b6e1f1df9f73dd4f9c4b",
		"72c341812cca9665cebd718a4286de417c4dd19fdac508974f447bb091b17b89",
		"fef44f4e7c8caf1093ed9a6b6728f464601242eaae48692069555769301a135a",
		"428cfd716c5cb0118827ef61098dd3f4f4844217312e8b8d0a58e190fc1dc614",
		"f677d655d82e18d3d9e755401a86ef1086c9fe811c02e7efa1884eaac5cc8545",
		"4d43451ce903c2cd952577967d8f220bf790e946b65a369f1ab5ad5236855f3a",
	}
	for i, v := range vals {
		if got := h.Value(v); got != want[i] {
			t.Errorf("Value #%d = %s, want %s", i, got, want[i])
		}
	}
	params := map[string]any{"message": "item 3", "data": int64(3), "_message_source_line": int64(20), "__workflow_file__": "/x/y.pflow.md",
		"__index__": int64(3), "nested": map[string]any{"b": []any{"c", map[string]any{"d": 2.5}}}}
	env := map[string]string{"B": "2", "A": "1"}
	for _, c := range []struct {
		name, got, want string
	}{
		{"Params", h.Params(params, env, "/x"), "51824b5b202965bb3722df37481ac60bf9b94544c28acfca6bcaddbf745ce60a"},
		{"AppendParams", string(h.AppendParams([]byte("x"), params, env, "/x")[1:]), "51824b5b202965bb3722df37481ac60bf9b94544c28acfca6bcaddbf745ce60a"},
		{"Params(nil)", h.Params(nil, nil, ""), "8c840300df611936d077551732e377385d9d48b75bce8f1dfa44097ffe7765aa"},
		{"Params(big)", h.Params(map[string]any{"big": big}, nil, "/d"), "ba1f37b27aaf45086cdfd7592b2625d409af4e4eaaf8f31f5e0cac50692de1b9"},
		{"Strings", h.Strings("a", "", "bc"), "ef86c98054f6dcbe771ebf9acf4afb7adaeec55d53197759d1e76ae33605d611"},
		{"Strings()", h.Strings(), "8e8a55049b55f2046287ff872286cdfc5677c08390c6bcf43e8991a98801b565"},
		{"Definition", h.Definition("echo", map[string]any{"message": "${a.b}", "count": int64(2)}, nil), "d6f58c5a1a60476b96dd9aaa71af5e05e980df5909a93798987de6401c636371"},
		{"Definition+mappings", h.Definition("shell", map[string]any{"command": "ls"}, map[string]string{"x": "${a}", "w": "${b.c}"}), "5f5bf9c18b443d5cef6f1429797ec0d209acdb5b137958975e99f9bff796f4c8"},
		{"Definition(nil)", h.Definition("echo", nil, map[string]string{}), "e9d1a8bcc4eb7cf2df35b3b7c18228b29935cf386e98456ea3804d715c7b6513"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
		}
	}
}

// Digests computed at once from many goroutines are those computed alone
// (the pooled writers share nothing).
func TestDigestsConcurrent(t *testing.T) {
	h := New([]byte("k"))
	want := h.Params(map[string]any{"a": []any{"x", map[string]any{"b": int64(1)}}}, nil, "/d")
	done := make(chan string)
	for i := 0; i < 8; i++ {
		go func() {
			got := ""
			for j := 0; j < 200; j++ {
				got = h.Params(map[string]any{"a": []any{"x", map[string]any{"b": int64(1)}}}, nil, "/d")
				if got != want {
					break
				}
			}
			done <- got
		}()
	}
	for i := 0; i < 8; i++ {
		if got := <-done; got != want {
			t.Fatalf("concurrent digest %s, want %s", got, want)
		}
	}
}

// BenchmarkParams is the digest of one batch item's params, as the run
// record computes it for every item.
func BenchmarkParams(b *testing.B) {
	h := New(make([]byte, 32))
	p := map[string]any{"message": "item 1234", "data": int64(1234), "_message_source_line": int64(20), "_data_source_line": int64(21), "__workflow_file__": "/tmp/x/bench.pflow.md"}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = h.AppendParams(buf[:0], p, nil, "/tmp/x")
	}
}

// Digests are SipHash-2-4-128 (32 hex digits) under a key derived from the
// store's; For gives the Hasher whose digests compare with a recorded one.
// Definition is Value of the step's map; the values pinned here are what
// run records of this format hold.
func TestDigests(t *testing.T) {
	const pinnedParams = "e329cef822acecc48a5849d42f410934"
	h := New([]byte("0123456789abcdef0123456789abcdef"))
	params := map[string]any{"message": "item 3", "data": int64(3), "_message_source_line": int64(20)}
	got := h.Params(params, map[string]string{"A": "1"}, "/x")
	if len(got) != 32 {
		t.Fatalf("digest %q: want 32 hex digits", got)
	}
	if got != pinnedParams {
		t.Errorf("Params = %s, want %s (the digests of existing records would no longer match)", got, pinnedParams)
	}
	if again := string(h.AppendParams(nil, params, map[string]string{"A": "1"}, "/x")); again != got {
		t.Errorf("AppendParams %s != Params %s", again, got)
	}
	// Ignored annotations, and a changed value.
	if h.Params(map[string]any{"message": "item 3", "data": int64(3)}, map[string]string{"A": "1"}, "/x") != got {
		t.Error("a _<param>_source_line annotation changed the digest")
	}
	if h.Params(map[string]any{"message": "item 4", "data": int64(3)}, map[string]string{"A": "1"}, "/x") == got {
		t.Error("another value gave the same digest")
	}
	def := map[string]any{"message": "${a.b}"}
	if a, b := h.Definition("echo", def, map[string]string{"x": "${y}"}),
		h.Value(map[string]any{"type": "echo", "params": def, "input_mappings": map[string]any{"x": "${y}"}}); a != b {
		t.Errorf("Definition %s != Value of its map %s", a, b)
	}
	if New([]byte("another key")).Params(params, nil, "/x") == h.Params(params, nil, "/x") {
		t.Error("two keys gave the same digest")
	}
	legacy := h.Legacy().Value("x")
	if len(legacy) != 64 || h.For(legacy) != h.Legacy() || h.For(got) != h || h.For(legacy).Value("x") != legacy {
		t.Errorf("For: legacy %q", legacy)
	}
}
