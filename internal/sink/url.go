package sink

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
)

// urlPart is where in a URL a template lands.
type urlPart int

const (
	partBase     urlPart = iota // the start of the URL: a whole base URL, trusted
	partScheme                  // inside the scheme ("http${s}://"): refused
	partUser                    // user info before its first ':'
	partPassword                // user info after its first ':'
	partHost                    // the host or port
	partPath                    // a path segment
	partQuery                   // a query key or value
	partFragment                // after '#'
)

// urlSlot is one template of a URL.
type urlSlot struct {
	ref   *template.Ref
	part  urlPart
	at    int    // offset of the template's placeholder in the skeleton
	val   string // the value as text (the template itself when unresolved)
	found bool
	// start and end of the rendered value in the output
	start, end int
}

// URL renders a URL param: each template's value is encoded for the part of
// the URL it lands in, so that no value can add a path segment, a query
// parameter or a fragment, or change the host (see docs/decisions.md, "Template
// values are data"):
//
//   - a template that starts the URL ("${next_page}", "${api}/items") is a
//     base URL and is used as it is: this is the one place where a value may
//     set the scheme and host, because the author chose to start the URL
//     with it. The finished URL must parse and use http or https;
//   - after "scheme://" and before the host ends ("https://${host}:${port}/")
//     the value must be a host name, IP address or port (no '/', '?', '#',
//     '@', '\', '%', spaces or control characters);
//   - before an '@' in the authority (user info) every byte outside
//     A-Z a-z 0-9 - . _ ~ is percent-encoded; a user name value may not
//     contain ':' (basic auth would split it into the password);
//   - in the path the value is one path segment (url.PathEscape: '/', '?',
//     '#' are encoded). A segment made only of values that would be empty,
//     "." or ".." after decoding is refused: servers and proxies collapse or
//     resolve such segments, which would move the request to another path;
//   - in the query the value is url.QueryEscape'd (it cannot add "&x=1");
//   - in the fragment it is url.PathEscape'd.
//
// A template inside the scheme ("http${s}://") is refused. Templates whose
// path does not resolve are returned in order, deduplicated; their own text
// stands in for the value (encoded like one) and the checks that need every
// value are skipped, so the caller can report them.
func URL(raw string, root map[string]any) (string, []string, error) {
	parts := template.Parts(raw)
	var unresolved []string
	slots := make([]*urlSlot, 0, 4)
	base := -1 // index in parts of the base template, if any
	for i, p := range parts {
		if p.Ref != nil {
			base = i
			break
		}
		if strings.TrimSpace(p.Text) != "" {
			break
		}
	}

	// The skeleton is the URL with the base value in place and each other
	// template replaced by one placeholder byte that is no URL delimiter:
	// it tells each template's part from the author's text around it.
	var sk strings.Builder
	for i, p := range parts {
		if p.Ref == nil {
			sk.WriteString(p.Text)
			continue
		}
		s := &urlSlot{ref: p.Ref}
		v, found := template.Value(root, *p.Ref)
		if found {
			s.val, s.found = value.Stringify(v), true
		} else {
			s.val = p.Ref.Raw
			if !containsStr(unresolved, p.Ref.Raw) {
				unresolved = append(unresolved, p.Ref.Raw)
			}
		}
		if i == base {
			s.part = partBase
			sk.WriteString(s.val)
		} else {
			s.at = sk.Len()
			s.part = -1
			sk.WriteByte('x')
		}
		slots = append(slots, s)
	}
	if len(slots) == 0 {
		return rawLiteral(parts), nil, nil
	}
	reg := scanURL(sk.String())
	for _, s := range slots {
		if s.part == -1 {
			s.part = reg.partAt(s.at)
		}
	}

	// Render.
	var b strings.Builder
	k := 0
	for _, p := range parts {
		if p.Ref == nil {
			b.WriteString(p.Text)
			continue
		}
		s := slots[k]
		k++
		s.start = b.Len()
		switch s.part {
		case partBase:
			b.WriteString(s.val)
		case partScheme:
			return "", nil, &Problem{Template: s.ref.Raw, Offset: s.ref.Start,
				Message: fmt.Sprintf("template %s is inside the URL's scheme, where a value could turn the URL into another kind of link", s.ref.Raw),
				Hint:    "Write the scheme yourself (https://...), or start the URL with a template that holds a whole base URL (${base}/path)."}
		case partUser:
			if s.found && strings.Contains(s.val, ":") {
				return "", nil, &Problem{Template: s.ref.Raw, Offset: s.ref.Start,
					Message: fmt.Sprintf("the value of %s is the user name of the URL but contains ':', which would move the rest of it into the password", s.ref.Raw),
					Hint:    "A user name cannot contain ':' (HTTP basic auth splits on it). Check the value, or send credentials with the auth_token or headers params."}
			}
			b.WriteString(escapeStrict(s.val))
		case partPassword:
			b.WriteString(escapeStrict(s.val))
		case partHost:
			if s.found {
				if why := hostProblem(s.val); why != "" {
					return "", nil, &Problem{Template: s.ref.Raw, Offset: s.ref.Start,
						Message: fmt.Sprintf("the value of %s lands in the URL's host, but %s, so it is not a host name, IP address or port", s.ref.Raw, why),
						Hint:    "Only a host (optionally :port) may come from a value after '//'. To send the value as data, put it in the path (https://api.example.com/items/" + s.ref.Raw + ") or in the query (?q=" + s.ref.Raw + "); to take a whole base URL from a value, start the URL with the template (" + s.ref.Raw + "/items)."}
				}
			}
			b.WriteString(s.val)
		case partPath:
			b.WriteString(url.PathEscape(s.val))
		case partQuery:
			b.WriteString(url.QueryEscape(s.val))
		case partFragment:
			b.WriteString(url.PathEscape(s.val))
		}
		s.end = b.Len()
	}
	out := b.String()
	if len(unresolved) > 0 {
		return out, unresolved, nil
	}
	if err := checkPathSegments(out, slots); err != nil {
		return "", nil, err
	}
	if err := checkWhole(out, slots); err != nil {
		return "", nil, err
	}
	return out, nil, nil
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// rawLiteral joins literal parts (a URL without templates, with "$${"
// escapes rendered).
func rawLiteral(parts []template.Part) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// urlRegions are the byte ranges of a URL's parts (ends exclusive).
type urlRegions struct {
	schemeEnd          int // 0 when there is no scheme
	authStart, authEnd int // equal when there is no authority
	userEnd            int // end of user info ('@' position); authStart when none
	nameEnd            int // end of the user name (first ':' of the user info, or userEnd)
	pathEnd            int
	queryEnd           int // == pathEnd when there is no query
}

// scanURL finds the parts of s the way url.Parse does, without decoding.
func scanURL(s string) urlRegions {
	var r urlRegions
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ':' && i > 0 {
			r.schemeEnd = i + 1
			break
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			break
		}
	}
	r.authStart, r.authEnd = r.schemeEnd, r.schemeEnd
	if strings.HasPrefix(s[r.schemeEnd:], "//") {
		r.authStart = r.schemeEnd + 2
		r.authEnd = indexAnyFrom(s, "/?#", r.authStart)
	}
	r.userEnd = r.authStart
	if at := strings.LastIndexByte(s[r.authStart:r.authEnd], '@'); at >= 0 {
		r.userEnd = r.authStart + at
	}
	r.nameEnd = indexAnyFrom(s[:r.userEnd], ":", r.authStart)
	r.pathEnd = indexAnyFrom(s, "?#", r.authEnd)
	r.queryEnd = r.pathEnd
	if r.pathEnd < len(s) && s[r.pathEnd] == '?' {
		r.queryEnd = indexAnyFrom(s, "#", r.pathEnd)
	}
	return r
}

func indexAnyFrom(s, chars string, from int) int {
	if i := strings.IndexAny(s[from:], chars); i >= 0 {
		return from + i
	}
	return len(s)
}

// partAt tells the part of the URL that byte offset o is in.
func (r urlRegions) partAt(o int) urlPart {
	switch {
	case o < r.schemeEnd:
		return partScheme
	case o >= r.authStart && o < r.authEnd:
		if o < r.nameEnd {
			return partUser
		}
		if o < r.userEnd {
			return partPassword
		}
		return partHost
	case o < r.pathEnd:
		return partPath
	case o < r.queryEnd:
		return partQuery
	default:
		return partFragment
	}
}

// escapeStrict percent-encodes every byte outside RFC 3986's unreserved set.
func escapeStrict(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// hostProblem says why v cannot be (part of) a host[:port], or "".
func hostProblem(v string) string {
	if v == "" {
		return "it is empty"
	}
	if !utf8.ValidString(v) {
		return "it is not valid UTF-8 text"
	}
	for _, c := range v {
		switch {
		case c == '\r' || c == '\n':
			return "it contains a line break"
		case unicode.IsSpace(c):
			return "it contains a space"
		case unicode.IsControl(c):
			return "it contains a control character"
		case strings.ContainsRune(`/?#@\%`, c):
			return fmt.Sprintf("it contains %q", c)
		}
	}
	if u, err := url.Parse("http://" + v + "/"); err != nil || u.Host != v {
		return "it is not of the form host or host:port"
	}
	return ""
}

// checkPathSegments refuses a path segment made only of values (and literal
// text) that reads as "", "." or ".." once decoded: such a segment is
// collapsed or resolved by servers and proxies, moving the request to
// another path.
func checkPathSegments(out string, slots []*urlSlot) error {
	reg := scanURL(out)
	start := reg.authEnd
	for start <= reg.pathEnd {
		end := indexAnyFrom(out[:reg.pathEnd], "/", start)
		seg := out[start:end]
		for _, s := range slots {
			if s.part != partPath || s.start < start || s.end > end {
				continue
			}
			dec, err := url.PathUnescape(seg)
			if err != nil {
				dec = seg
			}
			if dec == "" || dec == "." || dec == ".." {
				what := "empty"
				if dec != "" {
					what = strconv.Quote(dec)
				}
				return &Problem{Template: s.ref.Raw, Offset: s.ref.Start,
					Message: fmt.Sprintf("the value of %s makes the path segment %s, which servers collapse or resolve to another path", s.ref.Raw, what),
					Hint:    "A value in the path is one segment and must not be empty, \".\" or \"..\". Check where the value comes from, or send it in the query (?name=" + s.ref.Raw + ")."}
			}
			break
		}
		if end == reg.pathEnd {
			break
		}
		start = end + 1
	}
	return nil
}

// checkWhole parses the finished URL when a value set its start or its host:
// it must be a valid http or https URL with a host.
func checkWhole(out string, slots []*urlSlot) error {
	var first *urlSlot
	for _, s := range slots {
		if s.part == partBase || s.part == partHost || s.part == partUser || s.part == partPassword {
			first = s
			break
		}
	}
	if first == nil {
		return nil
	}
	hint := "A template that starts the URL must hold a whole base URL such as https://api.example.com/v1."
	if first.part != partBase {
		hint = "Check the host and port values."
	}
	u, err := url.Parse(strings.TrimSpace(out))
	if err != nil {
		msg := err.Error()
		var ue *url.Error
		if errors.As(err, &ue) {
			msg = ue.Err.Error()
		}
		return &Problem{Template: first.ref.Raw, Offset: first.ref.Start,
			Message: fmt.Sprintf("with the value of %s the URL is not valid (%s)", first.ref.Raw, msg), Hint: hint}
	}
	if first.part == partBase && u.Scheme != "http" && u.Scheme != "https" {
		return &Problem{Template: first.ref.Raw, Offset: first.ref.Start,
			Message: fmt.Sprintf("the value of %s starts the URL but does not start with http:// or https:// (it reads %q)", first.ref.Raw, shortURL(u)), Hint: hint}
	}
	if u.Host == "" {
		return &Problem{Template: first.ref.Raw, Offset: first.ref.Start,
			Message: fmt.Sprintf("with the value of %s the URL has no host (it reads %q)", first.ref.Raw, shortURL(u)), Hint: hint}
	}
	return nil
}

// shortURL shows u for messages: no user info, query or fragment, at most 80
// characters.
func shortURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	s := c.String()
	if len(s) > 80 {
		s = value.Truncate(s, 77, "...")
	}
	return s
}
