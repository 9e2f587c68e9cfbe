package workflow

import (
	"regexp"
	"strconv"
	"strings"
)

// The patterns of MappingForm, compiled when a message needs them (an
// error path: no start-up cost).
const (
	// pairPattern is one "name=value" (or name: value, name -> value) of a
	// string written where a mapping belongs.
	pairPattern = `^[\s,;]*([A-Za-z_][\w.-]*)\s*(?:=>|->|=|:)\s*("[^"]*"|'[^']*'|[^\s,;]+)[\s,;]*`
	// onePairPattern is a single "Name: value with spaces".
	onePairPattern = `^\s*([A-Za-z_][\w.-]*)\s*:\s*(\S.*?)\s*$`
	// plainPattern is a value YAML reads as the text it is.
	plainPattern = `^[\w./@+-]+$`
)

// MappingForm reads a string written where a mapping belongs ("a=19 b=23",
// "a: 19, b: 23", "error -> fix", "Authorization: Bearer x") as the
// name/value pairs it lists, and returns them in YAML flow form,
// "{a: 19, b: 23}", for a message to show the line that works. ok is false
// when the string is not such a list of pairs.
func MappingForm(s string) (form string, ok bool) {
	pairRe := regexp.MustCompile(pairPattern)
	var pairs [][2]string
	rest := strings.TrimSpace(s)
	for rest != "" {
		m := pairRe.FindStringSubmatch(rest)
		if m == nil {
			pairs = nil
			break
		}
		pairs = append(pairs, [2]string{m[1], unquote(m[2])})
		rest = rest[len(m[0]):]
	}
	if len(pairs) == 0 {
		m := regexp.MustCompile(onePairPattern).FindStringSubmatch(s)
		if m == nil {
			return "", false
		}
		pairs = [][2]string{{m[1], unquote(m[2])}}
	}
	var b strings.Builder
	b.WriteString("{")
	for i, p := range pairs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p[0] + ": " + flowScalar(p[1]))
	}
	b.WriteString("}")
	return b.String(), true
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// flowScalar writes v for a YAML flow mapping: as it is when YAML reads it
// back the same, quoted otherwise.
func flowScalar(v string) string {
	if regexp.MustCompile(plainPattern).MatchString(v) || strings.HasPrefix(v, "${") && strings.HasSuffix(v, "}") && !strings.ContainsAny(v, " ,") {
		return v
	}
	return strconv.Quote(v)
}

// stringMapping is MappingForm of v when v is a string.
func stringMapping(v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return "", false
	}
	return MappingForm(s)
}
