package app

import "testing"

func TestExtractPlannedMarkdown(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"whole answer", "# T\nd\n", "# T\nd\n"},
		{"markdown fence with prose", "Here:\n```markdown\n# T\n## Steps\n```\nDone.", "# T\n## Steps\n"},
		{"four-backtick fence keeps inner fences", "````markdown\n# T\n```shell command\necho hi\n```\n````\n", "# T\n```shell command\necho hi\n```\n"},
		{"three-backtick fence with inner fences", "```markdown\n# T\n```shell command\necho hi\n```\n```\n", "# T\n```shell command\necho hi\n```\n"},
		{"md tag", "```md\n# T\n```", "# T\n"},
		{"unterminated", "```markdown\n# T\n", "# T\n"},
	} {
		if got := ExtractPlannedMarkdown(c.in); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestIsPlanRequest(t *testing.T) {
	for in, want := range map[string]bool{"find python files": true, "shell": false, " shell ": false, "a\tb": true, "# T\nA b.\n": false, `{"nodes": []}`: false} {
		if IsPlanRequest(in) != want {
			t.Errorf("IsPlanRequest(%q) = %v", in, !want)
		}
	}
}
