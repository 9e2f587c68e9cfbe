package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// maxLine bounds one JSON-RPC message on stdio (64 MiB).
const maxLine = 64 << 20

// lockedWriter serializes whole-message writes of the SDK and of the filter.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// filterInput returns a reader that passes on only well-formed JSON-RPC
// messages from in. Any other line (not JSON, not a JSON-RPC object, or
// longer than maxLine) is answered on out with a JSON-RPC -32700/-32600
// error and dropped, so one bad line cannot end the session (go-sdk's stdio
// transport stops reading for good at the first undecodable line).
func filterInput(in io.Reader, out io.Writer, logf func(string, ...any)) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := readLine(br)
			if len(bytes.TrimSpace(line)) > 0 {
				if code, msg := checkMessage(line); code != 0 {
					logf("dropped a malformed message on stdin: %s", msg)
					resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
					out.Write(append(resp, '\n'))
				} else if _, werr := pw.Write(append(line, '\n')); werr != nil {
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// readLine reads one line without its newline; a line longer than maxLine
// is consumed and returned as a marker that checkMessage rejects.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) <= maxLine {
			buf = append(buf, chunk...)
		} else {
			buf = []byte("\x00too-long")
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(buf, "\r\n"), err
	}
}

func checkMessage(line []byte) (int, string) {
	if bytes.Equal(line, []byte("\x00too-long")) {
		return -32600, "Invalid Request: message larger than 64 MiB"
	}
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		return -32700, "Parse error: the line is not valid JSON"
	}
	// A message is a request/notification (method) or a response (id with
	// result or error); anything else would be dropped silently by the SDK
	// and leave the client waiting.
	switch line[0] {
	case '{':
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			Method  string          `json:"method"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil || m.JSONRPC != "2.0" {
			return -32600, "Invalid Request: not a JSON-RPC 2.0 message"
		}
		if len(m.ID) > 0 {
			// MCP request ids are strings or integers, never null; go-sdk
			// ends the whole session on any other id, so it is answered
			// here and dropped.
			if msg := badID(m.ID); msg != "" {
				return -32600, "Invalid Request: " + msg
			}
		}
		if m.Method == "" && (len(m.ID) == 0 || (len(m.Result) == 0 && len(m.Error) == 0)) {
			return -32600, "Invalid Request: not a JSON-RPC 2.0 message"
		}
	case '[':
		// JSON-RPC batches are not part of MCP since protocol 2025-06-18
		// (and go-sdk ends the session on one); answered with one error.
		return -32600, "Invalid Request: JSON-RPC batches are not supported; send one message per line"
	default:
		return -32600, "Invalid Request: expected a JSON object"
	}
	return 0, ""
}

// badID says what is wrong with a request id, "" when it is a string or an
// integer.
func badID(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return ""
	case raw[0] == '"':
		return ""
	case raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'):
		if bytes.ContainsAny(raw, ".eE") {
			return "the id must be a string or an integer, not a fraction"
		}
		return ""
	case bytes.Equal(raw, []byte("null")):
		return "the id must be a string or an integer, not null"
	case raw[0] == '{':
		return "the id must be a string or an integer, not an object"
	case raw[0] == '[':
		return "the id must be a string or an integer, not an array"
	default:
		return "the id must be a string or an integer, not a boolean"
	}
}
