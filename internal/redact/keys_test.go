package redact

import "testing"

func TestIsSecretKey(t *testing.T) {
	secret := []string{"GITHUB_TOKEN", "api_key", "apiKey", "x-api-key", "OPENAI_API_KEY", "password", "db_password",
		"client_secret", "Authorization", "auth", "auth_token", "private_key", "apikey", "SessionId", "credentials"}
	notSecret := []string{"max_tokens", "author", "tokenizer", "key", "sort_key", "name", "count", "authority", "monkey", "keyword"}
	for _, n := range secret {
		if !IsSecretKey(n) {
			t.Errorf("IsSecretKey(%q) = false, want true", n)
		}
	}
	for _, n := range notSecret {
		if IsSecretKey(n) {
			t.Errorf("IsSecretKey(%q) = true, want false", n)
		}
	}
}
