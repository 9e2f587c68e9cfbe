package redact

import "strings"

// sensitiveWords are name parts that mark a secret on their own.
var sensitiveWords = map[string]bool{
	"password": true, "passwd": true, "pwd": true, "passphrase": true,
	"token": true, "secret": true, "credential": true, "credentials": true,
	"authorization": true, "auth": true, "apikey": true, "cookie": true,
	"bearer": true, "jwt": true, "privatekey": true, "secretkey": true,
	"accesstoken": true, "authtoken": true, "sessionid": true,
}

// keyQualifiers turn a following "key" into a secret (api_key, private_key...).
var keyQualifiers = map[string]bool{
	"api": true, "private": true, "secret": true, "access": true, "ssh": true,
	"signing": true, "encryption": true, "master": true, "client": true, "license": true,
}

// IsSecretKey reports whether a parameter or variable name looks like it holds
// a secret. Names are split into words (snake_case, kebab-case, camelCase,
// dots) and matched word by word, so "max_tokens", "author" and "tokenizer"
// are not secrets while "GITHUB_TOKEN", "apiKey", "x-api-key" and "db_password" are.
func IsSecretKey(name string) bool {
	words := splitWords(name)
	for i, w := range words {
		if sensitiveWords[w] || (i > 0 && sensitiveWords[words[i-1]+w]) {
			return true
		}
		if w == "key" && i > 0 && keyQualifiers[words[i-1]] {
			return true
		}
	}
	return false
}

// urlSecretParams are query parameter names that carry credentials besides
// the ones IsSecretKey recognises.
var urlSecretParams = map[string]bool{
	"key": true, "sig": true, "signature": true, "x-amz-signature": true,
	"x-amz-credential": true, "x-amz-security-token": true, "x-goog-signature": true,
}

// IsSecretQueryParam reports whether a URL query parameter carries a
// credential: a secret-looking name (IsSecretKey), or one of the names
// signed URLs and key-in-query APIs use (key, sig, X-Amz-Signature, ...).
func IsSecretQueryParam(name string) bool {
	return IsSecretKey(name) || urlSecretParams[strings.ToLower(name)]
}

func splitWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ' || r == '/' || r == ':':
			flush()
		case r >= 'A' && r <= 'Z':
			// camelCase boundary: aB, or the last capital of ABc.
			if i > 0 && ((rs[i-1] >= 'a' && rs[i-1] <= 'z') || (rs[i-1] >= '0' && rs[i-1] <= '9') ||
				(rs[i-1] >= 'A' && rs[i-1] <= 'Z' && i+1 < len(rs) && rs[i+1] >= 'a' && rs[i+1] <= 'z')) {
				flush()
			}
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}
