package mcpserver

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/pferr"
)

// How ServeToken came by its token.
const (
	TokenCreated  = "created"  // there was no token file: a new token
	TokenReused   = "reused"   // the token file's token
	TokenReplaced = "replaced" // the token file was unusable: a new token
)

// ServeToken returns the bearer token of an HTTP server started without
// one: the token in path (a file only its owner can read) when there is
// one, else a new random token (32 bytes, hex) written there with mode
// 0600. Keeping it across restarts keeps configured clients working;
// deleting the file makes a new one. A file that others may read, or that
// does not hold a token, is replaced, since the token in it may be known.
// how is TokenCreated, TokenReused or TokenReplaced.
func ServeToken(path string) (token, how string, err error) {
	how = TokenCreated
	if tok, ok, err := readToken(path); err != nil {
		return "", "", err
	} else if ok {
		return tok, TokenReused, nil
	} else if _, serr := os.Lstat(path); serr == nil {
		how = TokenReplaced
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", "", pferr.Newf(pferr.Internal, "cannot make a token for the MCP server: the system's random source failed: %v", err)
	}
	token = hex.EncodeToString(raw)
	if how == TokenReplaced {
		err = fsutil.WriteFileAtomic(path, []byte(token+"\n"), 0o600)
	} else if err = fsutil.CreateFileAtomic(path, []byte(token+"\n"), 0o600); errors.Is(err, fs.ErrExist) {
		// Another server made it first: use its token.
		if tok, ok, rerr := readToken(path); rerr == nil && ok {
			return tok, TokenReused, nil
		}
		err = fsutil.WriteFileAtomic(path, []byte(token+"\n"), 0o600)
	}
	if err != nil {
		return "", "", pferr.Newf(pferr.Execution, "cannot store the MCP server's token in %s: %v", path, err).
			WithWhere(path).
			WithHint("Make $PFLOW_HOME writable, or pass a token yourself with --token or PFLOW_MCP_TOKEN.")
	}
	return token, how, nil
}

// readToken reads a token file that only its owner may read and that holds
// a token; ok is false when there is none (or it is unusable).
func readToken(path string) (token string, ok bool, err error) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, pferr.Newf(pferr.Execution, "cannot read the MCP server's token file %s: %v", path, err).
			WithWhere(path).WithHint("Check the permissions of $PFLOW_HOME, or pass a token with --token or PFLOW_MCP_TOKEN.")
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o077 != 0 {
		return "", false, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false, pferr.Newf(pferr.Execution, "cannot read the MCP server's token file %s: %v", path, err).
			WithWhere(path).WithHint("Check the permissions of $PFLOW_HOME, or pass a token with --token or PFLOW_MCP_TOKEN.")
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 32 || strings.ContainsAny(tok, " \t\r\n") {
		return "", false, nil
	}
	return tok, true, nil
}
