package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rally-agent/rally/llmtest"
	"github.com/spf13/cobra"
)

type fakeLLMOpts struct {
	listen      string
	preset      string
	script      string
	replay      string
	status      int
	upstream    string
	log         string
	delay       time.Duration
	allowRemote bool
}

func newFakeLLMCmd(s streams) *cobra.Command {
	var o fakeLLMOpts
	cmd := &cobra.Command{
		Use:   "fake-llm",
		Short: "Serve a scripted fake LLM that fails on cue (OpenAI, Anthropic, Gemini wire formats)",
		Long: `Serves a fake LLM provider on a loopback address, for testing rally or any
other agent against provider failures without a key or a network.

It speaks OpenAI Chat Completions (…/chat/completions), OpenAI Responses
(…/responses), Anthropic Messages (…/messages) and Gemini
(…/models/{model}:streamGenerateContent?alt=sse, or :generateContent),
chosen by the request path under any prefix. Each request gets the next step
of a script: a reply, an HTTP error with the provider's own body, a reset
connection, a stream dropped or stalled after some chunks, or an error event
inside the stream. Past the end of the script the last step repeats.

A request streams only if it asks to ("stream": true, or Gemini's
:streamGenerateContent); otherwise the whole answer is one JSON body, as at
the providers. GET …/models lists a model, and a body that is not JSON gets
a 400 in the provider's shape. docs/fake-llm.md has curl examples.

Presets: ` + strings.Join(llmtest.Presets(), ", ") + `.

The first line on stdout is the address ("fake-llm listening on
http://127.0.0.1:PORT"); each request is reported on stderr. It serves until
interrupted, and --log gets every request as a JSON line (credentials
redacted) as it finishes.

With --upstream it is a fault-injecting proxy in front of a real provider:
fault steps are answered locally, the others are forwarded with their body
and headers intact and streamed back.`,
		Example: `  # Overloaded twice, then an answer; point a client at the printed URL
  rally fake-llm --preset overloaded
  rally --api anthropic-messages --base-url http://127.0.0.1:PORT --model claude-sonnet-4-5 -p "hi"

  # Your own script, streamed slowly, on a fixed port, with a request log
  rally fake-llm --listen 127.0.0.1:8080 --script faults.json --delay 50ms --log requests.jsonl

  # Serve a recorded stream byte for byte, or a recorded JSON error with its status
  rally fake-llm --replay anthropic-text.sse
  rally fake-llm --replay gemini-error.json --status 503

  # Inject faults in front of a real provider
  rally fake-llm --preset flaky --upstream https://api.anthropic.com`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runFakeLLM(ctx, s, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:0", "address to listen on (port 0 picks a free port)")
	f.StringVar(&o.preset, "preset", "", "named script: "+strings.Join(llmtest.Presets(), ", "))
	f.StringVar(&o.script, "script", "", "JSON script file (a list of steps; see docs/fake-llm.md)")
	f.StringVar(&o.replay, "replay", "", "serve this file byte for byte to every request")
	f.IntVar(&o.status, "status", 0, "HTTP status for --replay (default 200)")
	f.StringVar(&o.upstream, "upstream", "", "forward non-fault steps to this provider URL")
	f.StringVar(&o.log, "log", "", "write every request as a JSON line to this file")
	f.DurationVar(&o.delay, "delay", 0, "delay before each chunk, for steps that set none")
	f.BoolVar(&o.allowRemote, "allow-remote", false, "allow a non-loopback --listen address")
	return cmd
}

// fakeLLMScript builds the script from exactly one of the sources.
func fakeLLMScript(o fakeLLMOpts) ([]llmtest.Step, error) {
	n := 0
	for _, v := range []string{o.preset, o.script, o.replay} {
		if v != "" {
			n++
		}
	}
	if n > 1 {
		return nil, errors.New("fake-llm: give one of --preset, --script and --replay")
	}
	if o.status != 0 && o.replay == "" {
		return nil, errors.New("fake-llm: --status goes with --replay")
	}
	var steps []llmtest.Step
	var err error
	switch {
	case o.preset != "":
		steps, err = llmtest.Preset(o.preset)
	case o.script != "":
		steps, err = llmtest.LoadScript(o.script)
	case o.replay != "":
		var raw []byte
		if raw, err = os.ReadFile(o.replay); err == nil {
			steps = []llmtest.Step{{Raw: raw, Status: o.status}}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("fake-llm: %w", err)
	}
	for i := range steps {
		if steps[i].Delay == 0 {
			steps[i].Delay = o.delay
		}
	}
	if len(steps) == 0 && o.delay > 0 {
		steps = []llmtest.Step{{Delay: o.delay}}
	}
	return steps, nil
}

// checkListen refuses addresses other machines could reach: this is a test
// tool that answers anyone, and with --upstream it holds real credentials
// in flight.
func checkListen(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("fake-llm: --listen %q: %w", addr, err)
	}
	if allowRemote || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("fake-llm: --listen %q is not a loopback address; add --allow-remote to serve other machines", addr)
}

func runFakeLLM(ctx context.Context, s streams, o fakeLLMOpts) error {
	steps, err := fakeLLMScript(o)
	if err != nil {
		return err
	}
	if err := checkListen(o.listen, o.allowRemote); err != nil {
		return err
	}
	srv := llmtest.New(steps...)
	if o.upstream != "" {
		u, err := url.Parse(o.upstream)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("fake-llm: --upstream %q: want an http(s) URL", o.upstream)
		}
		srv.Upstream = u
	}
	var mu sync.Mutex // requests finish on many goroutines
	srv.OnRequest = func(r llmtest.Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(s.err, "fake-llm: #%d %s %s %s%s -> %s\n", r.Seq, r.Method, r.Path, r.API, attemptNote(r.Attempt), r.Outcome)
	}
	if o.log != "" {
		f, err := os.Create(o.log)
		if err != nil {
			return fmt.Errorf("fake-llm: %w", err)
		}
		defer f.Close()
		srv.Log = f
	}

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("fake-llm: %w", err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(s.out, "fake-llm listening on http://%s\n", ln.Addr())

	select {
	case err := <-served:
		return fmt.Errorf("fake-llm: %w", err)
	case <-ctx.Done():
	}
	// Stalls and delays end first, so the shutdown does not wait on them.
	srv.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	fmt.Fprintf(s.err, "fake-llm: served %d requests\n", len(srv.Requests()))
	if err := srv.LogErr(); err != nil {
		return fmt.Errorf("fake-llm: %w", err)
	}
	return nil
}

func attemptNote(a string) string {
	if a == "" {
		return ""
	}
	return " attempt " + a
}
