package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/pflow-go/pflow/internal/mcpclient"
)

// jsonrpcHTTP makes the HTTP transport answer like the stdio one: a body
// over maxLine gets a size error (the same limit on both transports), a
// malformed frame gets its JSON-RPC error from checkMessage, and a method
// the server does not know gets a JSON-RPC -32601 error with the request's
// id instead of go-sdk's plain-text 400. It runs after authentication.
// An initialize beyond maxSessions open sessions gets 503. A 2026-07-28
// request goes to modern, every other to next (see Server.Handler).
func (s *Server) jsonrpcHTTP(next, modern http.Handler, maxSessions int) http.Handler {
	legacy := next
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			legacy.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxLine))
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, -32600, fmt.Sprintf("Invalid Request: message larger than %d MiB", maxLine>>20))
			return
		}
		if err != nil {
			http.Error(w, "cannot read the request body (the client stopped sending it, or sent it too slowly): "+err.Error(), http.StatusBadRequest)
			return
		}
		if code, msg := checkMessage(body); code != 0 {
			writeRPCError(w, http.StatusBadRequest, nil, code, msg)
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		r.Body = io.NopCloser(bytes.NewReader(body))
		next := legacy
		if isModern(r) {
			next = modern
		}
		if m.Method == "initialize" && r.Header.Get("Mcp-Session-Id") == "" {
			if n := s.sessionCount(); n >= maxSessions {
				w.Header().Set("Retry-After", "60")
				writeRPCError(w, http.StatusServiceUnavailable, m.ID, -32000, fmt.Sprintf(
					"too many MCP sessions: this server already has %d open, its limit; close clients you no longer use (a session unused for %s closes by itself) and try again", n, sessionTimeout))
				return
			}
		}
		if len(m.ID) == 0 || m.Method == "" {
			next.ServeHTTP(w, r)
			return
		}
		cw := &catch400{ResponseWriter: w}
		next.ServeHTTP(cw, r)
		if cw.caught {
			if strings.Contains(cw.body.String(), "not handled") || strings.Contains(cw.body.String(), "unsupported") {
				writeRPCError(w, http.StatusOK, m.ID, -32601, fmt.Sprintf("Method not found: %s", m.Method))
				return
			}
			// Another 400: pass it on as it was.
			for k, v := range cw.header {
				w.Header()[k] = v
			}
			w.WriteHeader(http.StatusBadRequest)
			w.Write(cw.body.Bytes())
		}
	})
}

// isModern reports whether a POST belongs to the 2026-07-28 revision: its
// MCP-Protocol-Version header names 2026-07-28 or later (a 2026 client
// sends it on every request, server/discover included).
func isModern(r *http.Request) bool {
	return r.Header.Get("Mcp-Protocol-Version") >= mcpclient.ModernVersion
}

// sessionCount is the number of open MCP sessions.
func (s *Server) sessionCount() int {
	n := 0
	for range s.mcp.Sessions() {
		n++
	}
	return n
}

// catch400 passes a response through, except a 400, which it keeps.
type catch400 struct {
	http.ResponseWriter
	caught bool
	header http.Header
	body   bytes.Buffer
}

func (c *catch400) WriteHeader(code int) {
	if code == http.StatusBadRequest {
		c.caught = true
		c.header = c.ResponseWriter.Header().Clone()
		return
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *catch400) Write(p []byte) (int, error) {
	if c.caught {
		return c.body.Write(p)
	}
	return c.ResponseWriter.Write(p)
}

// Flush keeps server-sent events streaming through the wrapper.
func (c *catch400) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok && !c.caught {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (c *catch400) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
