package cli

import (
	"github.com/rally-agent/rally/fleet"
	"github.com/rally-agent/rally/session"
	"github.com/rally-agent/rally/window"
)

// learnedWindows is where the context windows learned from overflow
// errors live: $RALLY_HOME/context-windows.json, shared with the fleet
// through Redis when there is one.
func learnedWindows(home string, fl *fleet.Fleet) session.Windows {
	file := &window.File{Path: window.Path(home)}
	if fl == nil {
		return file
	}
	return &fleet.Windows{Fleet: fl, Local: file}
}
