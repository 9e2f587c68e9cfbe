package node

import (
	nethttp "net/http"
	"strconv"
	"strings"
	"time"
)

// ParseRetryAfter reads an HTTP Retry-After header: delay-seconds or an
// HTTP date (RFC 9110 §10.2.3), as a wait from now; 0 when absent,
// unreadable or already past.
func ParseRetryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if secs, err := strconv.Atoi(h); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := nethttp.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
