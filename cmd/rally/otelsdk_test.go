package main

import (
	"os/exec"
	"strings"
	"testing"
)

// sdkPrefix is the OpenTelemetry SDK's packages (sdk, sdk/trace,
// sdk/metric and its internals, sdk/resource, ...).
const sdkPrefix = "go.opentelemetry.io/otel/sdk"

// TestNoOTelSDK fails when rally's binary links the OpenTelemetry SDK,
// naming the packages that import it. With telemetry off the SDK still
// costs every process its packages' init and text: +0.5 MiB idle RSS,
// +1.9 MB binary, 14 more packages to initialise (issue 29, "off costs
// nothing"). The binary exports through internal/telemetry's own tracer
// and meter; Go programs that embed the session pass the SDK's providers
// themselves. The import graph is deterministic, so this is exact.
func TestNoOTelSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	if msg := sdkImports(string(out)); msg != "" {
		t.Fatal(msg)
	}
}

// sdkImports reads `go list -deps` lines ("pkg import import ...") and
// says which packages outside the SDK import it, or "".
func sdkImports(list string) string {
	var hits []string
	for line := range strings.Lines(list) {
		fields := strings.Fields(line)
		if len(fields) == 0 || isSDK(fields[0]) {
			continue
		}
		for _, imp := range fields[1:] {
			if isSDK(imp) {
				hits = append(hits, fields[0]+" imports "+imp)
			}
		}
	}
	if len(hits) == 0 {
		return ""
	}
	return "rally links the OpenTelemetry SDK (its init and text cost every process, telemetry on or off):\n\t" +
		strings.Join(hits, "\n\t") + "\nuse internal/telemetry's providers in the binary; the SDK belongs in tests and embedding programs"
}

func isSDK(pkg string) bool { return pkg == sdkPrefix || strings.HasPrefix(pkg, sdkPrefix+"/") }
