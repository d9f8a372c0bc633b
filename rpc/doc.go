// Package rpc is rally's JSON-lines protocol (docs/rpc.md): the command,
// response and event types, the server behind `rally --mode rpc` (Serve),
// and a Go client (Client) that starts or attaches to such a server.
//
// The protocol is the pi coding agent's RPC mode (v0.7x), so clients
// written for it, its own TypeScript RpcClient included, drive rally
// unchanged. rally adds autoRetryEnabled, isRetrying and retryAttempt to
// get_state, and the agent_settled, message_discarded events and the
// willRetry, errorClass and switchedTo fields (see docs/rpc.md).
//
// Framing: one JSON value per line, LF only. A trailing CR is stripped;
// U+2028 and U+2029 are ordinary characters inside strings, never line
// breaks. Commands arrive on the server's input; responses and events
// leave on its output, and nothing else does.
//
//	c, err := rpc.Start(ctx, "rally", "--no-session")
//	defer c.Close()
//	unsubscribe := c.Subscribe(func(e rpc.Event) { … })
//	err = c.Prompt(ctx, "What does rally do?", rpc.PromptOptions{})
//	err = c.WaitSettled(ctx) // through every retry, to agent_settled
package rpc
