package cli

import "runtime/debug"

// buildVersion is what `rally --version` prints: the -ldflags override if
// there is one; else, for a binary built from a source checkout, "dev" and
// the commit it was built from; else the module version the go command
// stamped (what `go install github.com/rally-agent/rally/cmd/rally@v1.2.3`
// gives); else "dev".
func buildVersion() string {
	bi, _ := debug.ReadBuildInfo() // nil in a binary built without module support
	return versionOf(version, bi)
}

func versionOf(override string, bi *debug.BuildInfo) string {
	if override != "dev" && override != "" {
		return override
	}
	if bi == nil {
		return "dev"
	}
	// A source build carries vcs.* settings and, since Go 1.24, a
	// pseudo-version derived from them; the revision says more.
	var rev string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if modified {
			rev += ", modified"
		}
		return "dev (" + rev + ")"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return "dev"
}
