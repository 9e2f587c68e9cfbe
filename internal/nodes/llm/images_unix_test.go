//go:build unix

package llm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
)

// An image path through a symlink another user planted in a shared sticky
// folder is refused, as the file steps refuse it: the image would be
// another of the user's files, sent to the model. (As root the link is
// nobody's; otherwise the test takes us for another user.)
func TestImageThroughPlantedLinkIsRefused(t *testing.T) {
	mine := t.TempDir()
	secret := filepath.Join(mine, "secret.png")
	if err := os.WriteFile(secret, []byte("\x89PNG private"), 0o600); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(shared, "cat.png")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		t.Skip("giving the link to another user needs root (CI runs as root)")
	}
	if err := os.Lchown(link, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := loadImages([]any{link}, "")
	var pe *node.ParamError
	if !errors.As(err, &pe) || pe.Param != "images" {
		t.Fatalf("want a ParamError on images, got %v", err)
	}
	if !containsAll(pe.Message, link, "65534", "does not follow another user's link") {
		t.Fatalf("the refusal names the link and its owner: %v", pe.Message)
	}
	// The same image of one's own is read.
	own := filepath.Join(mine, "own.png")
	if err := os.WriteFile(own, []byte("\x89PNG mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if imgs, err := loadImages([]any{own}, ""); err != nil || len(imgs) != 1 {
		t.Fatalf("own image: %v %v", imgs, err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
