package value

import "testing"

// Every accepted spelling of a type has one canonical name (one
// place defines them; inputs, validation, the code sink and hints use it).
func TestCanonicalType(t *testing.T) {
	for in, want := range map[string]string{
		"string": "str", "str": "str", " String ": "str",
		"integer": "int", "INT": "int", "number": "float", "float": "float",
		"boolean": "bool", "bool": "bool", "object": "dict", "dict": "dict",
		"array": "list", "list": "list", "any": "any", "": "",
		"list[dict]": "list[dict]", "str|int": "str|int", "uuid": "uuid",
	} {
		if got := CanonicalType(in); got != want {
			t.Errorf("CanonicalType(%q) = %q, want %q", in, got, want)
		}
	}
}
