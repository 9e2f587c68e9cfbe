package app

import "testing"

func TestRedactorUsesSecretEnvButNotTheWorkingDirectory(t *testing.T) {
	a := New([]string{"PWD=/home/me/project", "OLDPWD=/home/me", "GITHUB_TOKEN=ghp_abcdef123", "PATH=/usr/bin"}, nil)
	r := a.Redactor(nil)
	got := r.String("cd /home/me/project && curl -H 'token ghp_abcdef123'")
	if got != "cd /home/me/project && curl -H 'token <REDACTED>'" {
		t.Fatalf("%q", got)
	}
}
