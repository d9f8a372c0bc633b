package session

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session/journal"
	"github.com/rally-agent/rally/tool"
)

// blocker is a tool that runs until its call is cancelled.
type blocker struct{}

func (blocker) Spec() llm.Tool {
	return llm.Tool{Name: "wait", Description: "waits", Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (blocker) Run(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
	<-ctx.Done()
	return tool.Result{}, ctx.Err()
}

// TestStatePhase: State says what the session is doing at each point of
// an operation (the faces draw it from there), and idle once it settled.
func TestStatePhase(t *testing.T) {
	waitCall := []llm.Content{{Type: llm.ToolCallType, ID: "c1", Name: "wait", Arguments: json.RawMessage(`{}`)}}
	cases := []struct {
		name  string
		steps []step
		cfg   Config
		older bool // the session resumes a history to compact
		op    func(s *Session) (*Run, error)
		want  Phase
	}{
		{"streaming", []step{{text: "partial", block: true}}, Config{}, false, prompt, Phase{Kind: PhaseStreaming}},
		{"retry wait", []step{{err: overloaded()}}, Config{}, false, prompt,
			Phase{Kind: PhaseRetryWait, Attempt: 1, MaxAttempts: 3, Until: synctestStart.Add(2 * time.Second)}},
		{"tool running", []step{{calls: waitCall}}, Config{Tools: []tool.Tool{blocker{}}}, false, prompt, Phase{Kind: PhaseToolRunning, Tool: "wait"}},
		{"compacting", []step{{text: "summary", block: true}}, Config{Compaction: small}, true,
			func(s *Session) (*Run, error) { return s.StartCompact(context.Background()) }, Phase{Kind: PhaseCompacting, Compaction: ReasonManual}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := tc.cfg
				if tc.older {
					cfg.Resume = &journal.Loaded{Messages: history(6)}
				}
				s, rec, stop := newSession(t, &fake{steps: tc.steps}, cfg)
				r, err := tc.op(s)
				if err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				got := s.State().Phase
				if tc.want.Kind == PhaseRetryWait {
					if !strings.Contains(got.Reason, "verloaded") {
						t.Errorf("retry wait reason %q, want the failure's message", got.Reason)
					}
					if !got.Until.Equal(tc.want.Until) {
						t.Errorf("retry wait until %v, want %v", got.Until, tc.want.Until)
					}
					got.Reason, got.Until = "", tc.want.Until
				}
				if got != tc.want {
					t.Errorf("phase %+v, want %+v", got, tc.want)
				}
				s.Abort()
				r.Wait()
				stop()
				st := s.State()
				if st.Phase.Kind != PhaseIdle {
					t.Errorf("after settling the phase is %+v", st.Phase)
				}
				if want := len(of[AutoRetryStartEvent](rec)); st.Retries != want {
					t.Errorf("State.Retries %d after %d auto_retry_start", st.Retries, want)
				}
				if k := rec.types(); k[len(k)-1] != string(AgentSettled) {
					t.Errorf("the operation ended with %s, not agent_settled", k[len(k)-1])
				}
			})
		})
	}
}

// synctestStart is the fake clock's start inside a synctest bubble.
var synctestStart = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func prompt(s *Session) (*Run, error) { return s.Start(context.Background(), "go", PromptOptions{}) }

// TestClearQueue: State lists what waits to steer or follow up, steering
// first, and ClearQueue takes it all back.
func TestClearQueue(t *testing.T) {
	s, _, stop := newSession(t, &fake{}, Config{})
	defer stop()
	user := func(text string) llm.Message {
		return llm.Message{Role: llm.User, Content: []llm.Content{llm.Text(text)}}
	}
	s.FollowUp(user("later"))
	s.Steer(user("now"))
	st := s.State()
	if st.PendingCount != 2 || len(st.Queue) != 2 || st.Queue[0].TextOf() != "now" || st.Queue[1].TextOf() != "later" {
		t.Fatalf("State queue %d %+v", st.PendingCount, st.Queue)
	}
	steer, follow := s.ClearQueue()
	if len(steer) != 1 || len(follow) != 1 || follow[0].TextOf() != "later" {
		t.Fatalf("ClearQueue %+v %+v", steer, follow)
	}
	if st := s.State(); st.PendingCount != 0 || st.Queue != nil {
		t.Errorf("after ClearQueue: %d %+v", st.PendingCount, st.Queue)
	}
}
