package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// Dialogs asks the RPC client's user a question through pi's extension UI
// protocol: an extension_ui_request line on the output, answered by an
// extension_ui_response command with the same id. pi's adapters show it
// (pi-acp turns a confirm into ACP's session/request_permission), so the
// tools of tools.confirm ask first over RPC as they do in the terminal UI.
// Build one before the session (its tools ask through it), then pass it in
// Config.Dialogs. The zero value is not usable; use NewDialogs.
type Dialogs struct {
	mu      sync.Mutex
	send    func([]byte) // the server's output, once Serve runs
	pending map[string]chan Command
}

// NewDialogs returns Dialogs with no server yet: until Serve attaches it,
// every question is declined.
func NewDialogs() *Dialogs { return &Dialogs{pending: map[string]chan Command{}} }

// ErrNoClient declines a question that no client can see.
var ErrNoClient = errors.New("rpc: no client to ask")

// dialogRequest is pi's extension_ui_request for a confirm dialog.
type dialogRequest struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Method  string `json:"method"`
	Title   string `json:"title"`
	Message string `json:"message"`
}

// Confirm asks a yes/no question and waits for the answer or ctx's end.
// A cancelled dialog is a no.
func (d *Dialogs) Confirm(ctx context.Context, title, message string) (bool, error) {
	id := newID()
	reply := make(chan Command, 1)
	d.mu.Lock()
	send := d.send
	if send != nil {
		d.pending[id] = reply
	}
	d.mu.Unlock()
	if send == nil {
		return false, ErrNoClient
	}
	defer func() {
		d.mu.Lock()
		delete(d.pending, id)
		d.mu.Unlock()
	}()
	b, err := json.Marshal(dialogRequest{Type: "extension_ui_request", ID: id, Method: "confirm", Title: title, Message: message})
	if err != nil {
		return false, fmt.Errorf("rpc: confirm: %w", err)
	}
	send(b) // json.Marshal escapes U+2028 and U+2029, which are no line breaks here

	select {
	case c := <-reply:
		return !c.Cancelled && c.Confirmed != nil && *c.Confirmed, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// attach connects d to a server's output (nil detaches it).
func (d *Dialogs) attach(send func([]byte)) {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.send = send
	d.mu.Unlock()
}

// answer delivers an extension_ui_response to the question it answers;
// one for no open question is dropped, as pi drops it.
func (d *Dialogs) answer(c Command) {
	if d == nil {
		return
	}
	d.mu.Lock()
	reply := d.pending[c.ID]
	delete(d.pending, c.ID)
	d.mu.Unlock()
	if reply != nil {
		reply <- c
	}
}
