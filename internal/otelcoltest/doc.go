// Package otelcoltest holds the end-to-end telemetry test: rally sends its
// spans and metrics over real OTLP on loopback to a real OpenTelemetry
// Collector built from the collector's Go modules (the OTLP receiver, and
// an in-test exporter that keeps what arrives). It is a module of its own
// so that the collector's many dependencies stay out of rally's go.mod and
// out of `go test ./...`; scripts/test.sh runs it.
package otelcoltest
