package providertest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// ReferenceDir holds a shared corpus of real transcripts with expected
// values (see its README), present on some development machines only. It
// is read in place and never copied into the project.
const ReferenceDir = "/work/shared/reference-wire"

// Reference is one transcript of the corpus, with the fields of its index
// that the clients' tests read. Each client maps the expected values its
// API's way (stop reasons, usage fields).
type Reference struct {
	File     string `json:"file"`
	Provider string `json:"provider"`
	API      string `json:"api"`
	Status   int    `json:"http_status"`
	Expected struct {
		Text      string `json:"text"`
		Reasoning string `json:"reasoning"`
		ToolCalls []struct {
			ID   string `json:"id"` // "" where the wire has none (null)
			Name string `json:"name"`
			Args string `json:"arguments_json"`
		} `json:"tool_calls"`
		// StopReason is the provider's own terminal value; nil when the
		// stream died before it.
		StopReason *string `json:"stop_reason"`
		Usage      *struct {
			Input      int `json:"input_tokens"`
			Output     int `json:"output_tokens"`
			Total      int `json:"total_tokens"`
			Reasoning  int `json:"reasoning_tokens"`
			Cached     int `json:"cached_input_tokens"`
			CacheRead  int `json:"cache_read_input_tokens"`
			CacheWrite int `json:"cache_creation_input_tokens"`
		} `json:"usage"`
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"expected"`
}

// Path is where the transcript's bytes are.
func (r *Reference) Path() string { return filepath.Join(ReferenceDir, r.File) }

// References returns the cases of the corpus that keep reports true for,
// or skips t when this machine has no corpus.
func References(t *testing.T, keep func(*Reference) bool) []Reference {
	t.Helper()
	f, err := os.Open(filepath.Join(ReferenceDir, "index.jsonl"))
	if err != nil {
		t.Skip("reference corpus not present")
	}
	defer f.Close()
	var out []Reference
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r Reference
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if keep(&r) {
			out = append(out, r)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
