package server

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
	check := func(raw json.RawMessage) bool {
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			Method  string          `json:"method"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if json.Unmarshal(raw, &m) != nil || m.JSONRPC != "2.0" {
			return false
		}
		return m.Method != "" || (len(m.ID) > 0 && (len(m.Result) > 0 || len(m.Error) > 0))
	}
	switch line[0] {
	case '{':
		if !check(line) {
			return -32600, "Invalid Request: not a JSON-RPC 2.0 message"
		}
	case '[':
		var batch []json.RawMessage
		if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
			return -32600, "Invalid Request: empty or malformed batch"
		}
		for _, m := range batch {
			if !check(m) {
				return -32600, "Invalid Request: not a JSON-RPC 2.0 message"
			}
		}
	default:
		return -32600, "Invalid Request: expected a JSON object"
	}
	return 0, ""
}
