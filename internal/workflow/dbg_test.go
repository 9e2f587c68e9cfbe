package workflow

import (
	"encoding/json"
	"os"
	"testing"
)

func TestDbg(t *testing.T) {
	f := os.Getenv("DBG")
	if f == "" {
		t.Skip()
	}
	w, err := ParseFile(f)
	if err != nil {
		t.Fatalf("%#v\n%v", err, err)
	}
	b, _ := json.MarshalIndent(w, "", "  ")
	t.Logf("%s\nsource=%+v\nerrs=%v", b, *w.Source, w.CheckStructure())
}
