// Package durable runs pflow workflows on Temporal: a generic Temporal
// workflow walks the pflow graph (the same engine as a local run) with each
// node execution an activity; the worker (`pflow worker`) runs those
// activities; the client submits, follows, cancels, lists and resumes runs
// (`pflow --temporal`); and a payload codec seals everything Temporal
// stores. It is the only package that imports the Temporal SDK, and only
// the pflow-temporal binary links it.
package durable
