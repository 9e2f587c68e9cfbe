package sink

import "testing"

func TestStdinReader(t *testing.T) {
	reads := map[string]string{
		"tr a-z A-Z":                      "tr",
		"tr -d ' '":                       "tr",
		"wc -l":                           "wc",
		"sort -u | head -n 3":             "sort",
		"sed 's/^/config: /'":             "sed",
		"sed -n -e 's/a/b/p' -e 's/c/d/'": "sed",
		"grep -v '^#'":                    "grep",
		"grep -e foo -e bar":              "grep",
		"jq -r '.items[0].id'":            "jq",
		"jq --arg x ${name} '.[$x]'":      "jq",
		"awk -F, '{print $2}'":            "awk",
		"cut -d, -f2":                     "cut",
		"head -5":                         "head",
		"cat":                             "cat",
		"cat -":                           "cat",
		"paste -sd, -":                    "paste",
		"xargs -n1 echo":                  "xargs",
		"while read line; do echo \"$line\"; done": "read",
		"test $(tr , '\\n' | wc -l) -ge 5":         "tr",
		"echo start; sort":                         "sort",
		"set -e\nsha256sum | cut -c1-8":            "sha256sum",
		"base64 -d > out.bin":                      "base64",
		"if grep -q x; then echo y; fi":            "grep",
		"{ cat; echo done; }":                      "cat",
	}
	for cmd, want := range reads {
		if got := StdinReader(cmd); got != want {
			t.Errorf("StdinReader(%q) = %q, want %q", cmd, got, want)
		}
	}
	none := []string{
		"echo hi | tr a-z A-Z",
		"cat '${path}'",
		"cat file.txt",
		"wc -l < ${file}",
		"sort data.txt",
		"grep -r TODO",
		"grep -rn TODO .",
		"grep foo ${file}",
		"sed -i 's/a/b/' f",
		"jq -n '{a: 1}'",
		"jq -nr '$ENV.HOME'",
		"jq . file.json",
		"jq --args '$ARGS' a b",
		"awk '{print}' data",
		"xargs -a list.txt echo",
		"read -u 3 line",
		"tr a-z A-Z <<< ${text}",
		"cat <<EOF\nhi\nEOF",
		"exec < in.txt\nsort",
		"f() { cat; }",
		"sort -X",      // an option it does not know
		"sort --weird", // a long one
		"sort & wait",
		"${cmd}",
		"printf '%s' '${line}' | wc -c | tr -d ' '",
		"seq ${lines} | paste -sd, - | sed 's/.*/[&]/'",
		"echo \"hello ${name}\"",
		"ls -la",
		"if then", // not shell
		"i=0",
	}
	for _, cmd := range none {
		if got := StdinReader(cmd); got != "" {
			t.Errorf("StdinReader(%q) = %q, want none", cmd, got)
		}
	}
}

func FuzzStdinReader(f *testing.F) {
	for _, s := range []string{"tr a-z A-Z", "i=0", "jq --arg", "sort -k", "grep -e", "head -n", "a | b", "while read x; do :; done < f", "x=$(cat) y", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		StdinReader(cmd) // never panics
	})
}
