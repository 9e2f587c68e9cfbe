// Package archtest holds tests of the repository's structure: the layers of
// its packages and the one direction imports may take between them.
package archtest
