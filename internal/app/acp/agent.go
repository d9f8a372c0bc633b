// Package acp is rally's Agent Client Protocol mode (rally --mode acp):
// JSON-RPC 2.0 over stdio, so that editors that speak ACP (Zed, JetBrains
// IDEs, Neovim's CodeCompanion and avante, Emacs) drive rally directly.
//
// It is a face of the session like rpc and the terminal UI: it starts
// prompts, shows the session's events as ACP session/update notifications
// (text, thinking, tool calls with diffs, retries as a visible line plus
// structured _meta) and asks the editor before the tools of tools.confirm
// run. The protocol's framing and types are github.com/coder/acp-go-sdk's:
// a maintained, dependency-free SDK generated from ACP's schema, which
// keeps rally's side to the mapping (docs/acp.md lists it).
package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/tool"
)

// Config is what Serve needs from the program.
type Config struct {
	// Open builds the session of an ACP session: a new one for o.Cwd when
	// o.ID is "", else the saved one o.ID names (a session id or a session
	// file's path). Its tools that ask first (tools.confirm) ask through
	// o.Ask, which puts the question to the editor. The returned func
	// releases it. Required.
	Open func(ctx context.Context, o Open) (*session.Session, func(), error)
	// Models lists the models session/set_model and the model option offer;
	// nil offers only the session's own.
	Models func() []llm.Model
	// Connect returns the target for a model of Models; nil refuses
	// switching models.
	Connect func(ctx context.Context, m llm.Model) (llm.Target, error)
	// Version is rally's, for initialize's agentInfo.
	Version string
	// Log receives what goes wrong outside the protocol; nil discards it.
	Log *slog.Logger
	// Interrupted, when set, is asked after session/load about a wait for
	// a usage limit's reset that the loaded file was stopped in (nil:
	// none); see resumewait.go.
	Interrupted func(sess *session.Session) *Interrupted
}

// Open says which session Config.Open builds.
type Open struct {
	Cwd string
	ID  string
	Ask tool.AskFunc
}

// Serve speaks ACP on in and out until in ends or ctx is cancelled, then
// aborts what runs and releases every session.
func Serve(ctx context.Context, in io.Reader, out io.Writer, cfg Config) error {
	if cfg.Open == nil {
		return errors.New("acp: serve: no Open")
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &server{cfg: cfg, log: log, sessions: map[sdk.SessionId]*acpSession{}, ready: make(chan struct{})}
	// The connection reads from in as soon as it exists, so a method may
	// run before the assignment below: methods reach it through peer,
	// which waits for ready.
	conn := sdk.NewAgentSideConnection(a, out, in)
	conn.SetLogger(log)
	a.conn = conn
	close(a.ready)
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	a.closeAll()
	return nil
}

// agent is one connection's state: its sessions by ACP id.
type server struct {
	cfg   Config
	log   *slog.Logger
	conn  *sdk.AgentSideConnection // set once, before ready is closed
	ready chan struct{}

	mu       sync.Mutex
	sessions map[sdk.SessionId]*acpSession
}

// acpSession is one ACP session: a rally session and the prompt running
// on it.
type acpSession struct {
	id    sdk.SessionId
	sess  *session.Session
	close func()
	perm  *permissions

	mu        sync.Mutex
	cancelled bool // session/cancel arrived for the running prompt
	// resumed is closed when the run resuming an interrupted wait (after
	// session/load) has settled and its updates are out; nil without one.
	resumed chan struct{}
}

// peer is the connection to the client, once Serve has it.
func (a *server) peer() *sdk.AgentSideConnection {
	<-a.ready
	return a.conn
}

var (
	_ sdk.Agent       = (*server)(nil)
	_ sdk.AgentLoader = (*server)(nil)
)

func (a *server) Initialize(ctx context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentInfo:       &sdk.Implementation{Name: "rally", Title: sdk.Ptr("rally"), Version: a.cfg.Version},
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession: true,
			// rally connects to no MCP server; session/new refuses a list.
			McpCapabilities:    sdk.McpCapabilities{Http: false, Sse: false},
			PromptCapabilities: sdk.PromptCapabilities{Image: true, EmbeddedContext: true},
		},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

func (a *server) Authenticate(ctx context.Context, p sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	// Keys come from the environment and rally auth add; there is nothing
	// to sign in to.
	return sdk.AuthenticateResponse{}, nil
}

func (a *server) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if err := refuseMCP(p.McpServers); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	s, err := a.open(ctx, p.Cwd, "")
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	return sdk.NewSessionResponse{SessionId: s.id, Modes: modes(s.sess)}, nil
}

func (a *server) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	if err := refuseMCP(p.McpServers); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	if p.SessionId == "" {
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams("sessionId is required")
	}
	a.release(p.SessionId) // a reload starts over from the file
	s, err := a.open(ctx, p.Cwd, string(p.SessionId))
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	// The editor shows the conversation so far before the answer.
	for _, u := range history(s.sess.Messages()) {
		if err := a.peer().SessionUpdate(ctx, sdk.SessionNotification{SessionId: s.id, Update: u}); err != nil {
			return sdk.LoadSessionResponse{}, err
		}
	}
	a.interrupted(ctx, s)
	return sdk.LoadSessionResponse{Modes: modes(s.sess)}, nil
}

func refuseMCP(servers []sdk.McpServer) error {
	if len(servers) == 0 {
		return nil
	}
	return sdk.NewInvalidParams(map[string]any{"message": fmt.Sprintf(
		"rally does not connect to MCP servers (initialize says mcpCapabilities false); %d given: start the session without them", len(servers))})
}

// open builds a session (new when id is "") and registers it. A new
// ACP session's id is the rally session's id, so a later session/load
// finds its file.
func (a *server) open(ctx context.Context, cwd, id string) (*acpSession, error) {
	perm := &permissions{conn: a.peer()}
	sess, closeFn, err := a.cfg.Open(ctx, Open{Cwd: cwd, ID: id, Ask: perm.ask})
	if err != nil {
		return nil, &sdk.RequestError{Code: -32602, Message: err.Error()}
	}
	// A loaded session keeps the id the editor loaded it by (a session
	// file's path is one), since every later request names it so.
	sid := sdk.SessionId(id)
	if sid == "" {
		sid = sdk.SessionId(sess.State().SessionID)
	}
	if sid == "" {
		sid = sdk.SessionId(newID())
	}
	s := &acpSession{id: sid, sess: sess, close: closeFn, perm: perm}
	perm.session = s
	a.mu.Lock()
	a.sessions[sid] = s
	a.mu.Unlock()
	return s, nil
}

func (a *server) get(id sdk.SessionId) (*acpSession, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[id]
	if !ok {
		return nil, sdk.NewInvalidParams(map[string]any{"message": "unknown sessionId " + string(id) + " (session/new or session/load it first)"})
	}
	return s, nil
}

// release aborts and closes the session of id, if open.
func (a *server) release(id sdk.SessionId) {
	a.mu.Lock()
	s := a.sessions[id]
	delete(a.sessions, id)
	a.mu.Unlock()
	if s != nil {
		s.sess.Abort()
		<-s.sess.Idle()
		s.close()
	}
}

func (a *server) closeAll() {
	a.mu.Lock()
	ids := make([]sdk.SessionId, 0, len(a.sessions))
	for id := range a.sessions {
		ids = append(ids, id)
	}
	a.mu.Unlock()
	for _, id := range ids {
		a.release(id)
	}
}

// Cancel ends the running prompt at once: a stream, a tool, a permission
// question or a retry's backoff. The prompt answers "cancelled".
func (a *server) Cancel(ctx context.Context, p sdk.CancelNotification) error {
	s, err := a.get(p.SessionId)
	if err != nil {
		return nil // a notification has no answer; nothing runs there
	}
	s.mu.Lock()
	s.cancelled = true
	s.mu.Unlock()
	s.sess.Abort()
	return nil
}

func (a *server) CloseSession(ctx context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	a.release(p.SessionId)
	return sdk.CloseSessionResponse{}, nil
}

func (a *server) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionList)
}

func (a *server) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}
