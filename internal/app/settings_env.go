package app

import (
	"context"
	"fmt"
	"regexp"
	"sync"

	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/settings"
)

var settingsEnvKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// ValidateSettingsEnvKey checks a settings env key (an environment variable name).
func ValidateSettingsEnvKey(key string) error {
	if settingsEnvKeyRE().MatchString(key) {
		return nil
	}
	return &pferr.Error{Kind: pferr.Validation,
		Message: fmt.Sprintf("invalid setting key %q: keys are environment variable names (letters, digits and '_', not starting with a digit)", key),
		Hint:    "Use a name such as OPENAI_API_KEY or GITHUB_TOKEN."}
}

// SetSettingsEnv stores key=value in settings.json env (locked, atomic, 0600).
// The value is never logged or echoed.
func (a *App) SetSettingsEnv(ctx context.Context, key, value string) (replaced bool, err error) {
	if err := ValidateSettingsEnvKey(key); err != nil {
		return false, err
	}
	err = settings.Update(ctx, a.Paths.Settings, func(s *settings.Settings) error {
		if s.Env == nil {
			s.Env = map[string]string{}
		}
		_, replaced = s.Env[key]
		s.Env[key] = value
		return nil
	})
	return replaced, err
}

// MaskedEnv is a settings env value as it may be shown: masked.
type MaskedEnv struct {
	Key    string `json:"key"`
	Found  bool   `json:"found"`
	Masked string `json:"value,omitempty"`
	// Source is "settings" (settings.json env) or "environment" (the
	// server's process environment, which wins at run time).
	Source string `json:"source,omitempty"`
}

// GetSettingsEnvMasked looks key up the way runs do (process environment first,
// then settings.json env, case-insensitive) and returns the value masked:
// every setting may be a credential, so none is ever shown in full.
func (a *App) GetSettingsEnvMasked(key string) (*MaskedEnv, error) {
	if err := ValidateSettingsEnvKey(key); err != nil {
		return nil, err
	}
	st, err := a.Settings()
	if err != nil {
		return nil, err
	}
	out := &MaskedEnv{Key: key}
	if v, ok := a.LookupProcessEnv(key); ok {
		out.Found, out.Masked, out.Source = true, settings.Mask(v), "environment"
	} else if v, ok := st.LookupEnv(key); ok {
		out.Found, out.Masked, out.Source = true, settings.Mask(v), "settings"
	}
	return out, nil
}

// SettingsEnvKeys lists the keys stored in settings.json env.
func (a *App) SettingsEnvKeys() ([]string, error) {
	st, err := a.Settings()
	if err != nil {
		return nil, err
	}
	return st.EnvKeys(), nil
}
