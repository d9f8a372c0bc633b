package cli

import (
	"os"
	"strings"
	"testing"
)

// TestRPCBuildsItsConfigOnce: the RPC backend builds every session from
// the one run configuration: the settings are read (and their warnings
// printed) once, however many sessions new_session starts, and the model
// list comes from the same reading.
func TestRPCBuildsItsConfigOnce(t *testing.T) {
	isolate(t)
	os.MkdirAll(".rally", 0o755)
	os.WriteFile(".rally/settings.json", []byte(`{"retyr": {"maxRetries": 1}}`), 0o644)
	in := `{"id":"1","type":"new_session"}` + "\n" + `{"id":"2","type":"new_session"}` + "\n" + `{"id":"3","type":"get_available_models"}` + "\n"
	out, errOut, code := run(t, in, "--mode", "rpc")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if n := strings.Count(errOut, "retyr"); n != 1 {
		t.Errorf("the settings warning was printed %d times, want once:\n%s", n, errOut)
	}
	if strings.Count(out, `"success":true`) != 3 || !strings.Contains(out, `"id":"sim"`) {
		t.Errorf("answers:\n%s", out)
	}
}
