package wire

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pflow-go/pflow/internal/fsutil"
)

// KeyEnv names the environment variable that holds the key's passphrase.
const KeyEnv = "PFLOW_TEMPORAL_KEY"

// Key is the secret that seals payloads.
type Key struct {
	aead cipher.AEAD
	id   string
}

// NewKey derives a key from a passphrase.
func NewKey(passphrase string) (*Key, error) {
	if strings.TrimSpace(passphrase) == "" {
		return nil, errors.New("the Temporal payload key is empty")
	}
	sum := sha256.Sum256([]byte(passphrase))
	block, err := aes.NewCipher(sum[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	id := sha256.Sum256(append([]byte("pflow-key-id:"), sum[:]...))
	return &Key{aead: aead, id: hex.EncodeToString(id[:6])}, nil
}

// ID names the key without revealing it (it is stored with each payload).
func (k *Key) ID() string { return k.id }

// LoadKey returns the key from $PFLOW_TEMPORAL_KEY, else from the key file
// (created with a random key, mode 0600, when absent).
func LoadKey(lookupEnv func(string) (string, bool), keyFile string) (*Key, error) {
	if v, ok := lookupEnv(KeyEnv); ok && v != "" {
		return NewKey(v)
	}
	b, err := os.ReadFile(keyFile)
	if errors.Is(err, fs.ErrNotExist) {
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return nil, err
		}
		err = fsutil.CreateFileAtomic(keyFile, []byte(hex.EncodeToString(raw)+"\n"), 0o600)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("cannot create the Temporal payload key %s: %w", keyFile, err)
		}
		b, err = os.ReadFile(keyFile)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the Temporal payload key %s: %w", keyFile, err)
	}
	return NewKey(strings.TrimSpace(string(b)))
}

// DefaultKeyFile is where the key lives under PFLOW_HOME.
func DefaultKeyFile(home string) string { return filepath.Join(home, "temporal.key") }

// Seal encrypts plain (AES-256-GCM, random nonce first).
func (k *Key) Seal(plain []byte) ([]byte, error) {
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return k.aead.Seal(nonce, nonce, plain, nil), nil
}

// Open decrypts what Seal made.
func (k *Key) Open(sealed []byte) ([]byte, error) {
	ns := k.aead.NonceSize()
	if len(sealed) < ns {
		return nil, errors.New("a sealed Temporal payload is truncated")
	}
	plain, err := k.aead.Open(nil, sealed[:ns], sealed[ns:], nil)
	if err != nil {
		return nil, fmt.Errorf("cannot open a sealed Temporal payload: %w", err)
	}
	return plain, nil
}
