//go:build !unix

package home

// Check accepts every home where file ownership is not Unix's.
func Check(Paths) error { return nil }
