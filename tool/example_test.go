package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/tool"
)

// The agent loop looks tools up by their Spec name and runs them with the
// model's arguments; an error becomes a tool result with isError true.
func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	tools := map[string]tool.Tool{}
	for _, t := range tool.Builtin(dir) {
		tools[t.Spec().Name] = t
	}
	run := func(name, args string) {
		res, err := tools[name].Run(context.Background(), json.RawMessage(args))
		if err != nil {
			fmt.Println("error:", strings.ReplaceAll(err.Error(), dir, "DIR"))
			return
		}
		m := llm.Message{Content: res.Content}
		fmt.Printf("%s (isError %v)\n", strings.ReplaceAll(m.TextOf(), dir, "DIR"), res.IsError)
	}
	run("write", `{"path": "src/main.go", "content": "package main\n\nfunc main() {\n\tprintln(1)\n\tprintln(1)\n}\n"}`)
	run("edit", `{"path": "src/main.go", "oldText": "println(1)", "newText": "println(2)"}`)
	run("edit", `{"path": "src/main.go", "oldText": "\tprintln(1)\n}", "newText": "\tprintln(2)\n}"}`)
	run("read", `{"path": "src/main.go", "offset": 3, "limit": 2}`)
	run("bash", `{"command": "cd src && grep -c println main.go; exit 1"}`)
	run("read", `{"path": "src", "offset": "3"}`)
	// Output:
	// created DIR/src/main.go: 54 bytes, 6 lines (isError false)
	// error: edit: "oldText" occurs 2 times in DIR/src/main.go (at lines 4, 5); it must occur exactly once: include more surrounding lines to pick one
	// edited DIR/src/main.go
	// @@ -5,1 +5,1 @@
	// -	println(1)
	// +	println(2) (isError false)
	// func main() {
	// 	println(1)
	//
	// [showing lines 3-4 of 6; use offset=5 to read more] (isError false)
	// 2
	//
	// exit code 1 (isError true)
	// error: read: "offset" must be an integer, not string
}

// Func turns a function into a tool.
func ExampleFunc() {
	shout := tool.Func{
		Def: llm.Tool{
			Name:        "shout",
			Description: "Upper-case a text.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		},
		Fn: func(ctx context.Context, args json.RawMessage) (tool.Result, error) {
			var a struct{ Text string }
			if err := json.Unmarshal(args, &a); err != nil {
				return tool.Result{}, fmt.Errorf("shout: %v", err)
			}
			return tool.Result{Content: []llm.Content{llm.Text(strings.ToUpper(a.Text))}}, nil
		},
	}
	res, _ := shout.Run(context.Background(), json.RawMessage(`{"text":"hi"}`))
	fmt.Println(res.Content[0].Text)
	// Output: HI
}
