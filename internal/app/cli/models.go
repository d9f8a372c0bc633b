package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rally-agent/rally/auth"
	"github.com/rally-agent/rally/llm"
	"github.com/rally-agent/rally/settings"
	"github.com/spf13/cobra"
)

// listedModel is one row of rally models: a model, whether a run without
// flags would use it, and whether its provider has what it needs to be
// called (a key, or none needed).
type listedModel struct {
	llm.Model
	Default bool `json:"default"`
	Usable  bool `json:"usable"`
}

func newModelsCmd(s streams) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the models of every provider: context window, cost, which is the default",
		Long: `Lists the built-in catalog and the models configured in settings
(providers.NAME.models), by provider: the context window, the most output
tokens, the cost in USD per million input and output tokens, whether the
provider has a key (in the environment or rally auth), and a "*" on the
model a run without --provider and --model uses. --json prints the same as
a JSON array.`,
		Example: `  rally models
  rally models --json | jq -r '.[] | select(.usable) | .provider + "/" + .id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := loadSettings(s)
			if err != nil {
				return err
			}
			models, err := listModels(st)
			if err != nil {
				return err
			}
			if asJSON {
				return writeModelsJSON(s.out, models)
			}
			return writeModels(s.out, models)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

// listModels lists every provider's models, by provider name, sim first.
func listModels(st *settings.Settings) ([]listedModel, error) {
	def, _, err := resolveTarget(st, settings.Overrides{})
	if err != nil {
		return nil, err
	}
	defModel, _ := modelFor(def)
	file, err := auth.Load(auth.Path(rallyHome()))
	if err != nil {
		return nil, &exitError{2, err}
	}
	names := slices.Sorted(maps.Keys(st.Providers))
	slices.SortStableFunc(names, func(a, b string) int { return boolRank(b == settings.Sim) - boolRank(a == settings.Sim) })
	var out []listedModel
	for _, name := range names {
		p := st.Providers[name]
		ok := usable(name, name == def.Provider, p, file)
		for _, m := range providerModels(name, p) {
			out = append(out, listedModel{Model: m, Usable: ok, Default: m.Provider == defModel.Provider && m.ID == defModel.ID})
		}
	}
	return out, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// providerModels are a provider's models: the built-in catalog's, then
// those of its settings entry, each once, described by modelFor.
func providerModels(name string, p settings.Provider) []llm.Model {
	var ids []string
	for _, m := range llm.Catalog() {
		if m.Provider == name {
			ids = append(ids, m.ID)
		}
	}
	for _, m := range p.Models {
		if !slices.Contains(ids, m.ID) {
			ids = append(ids, m.ID)
		}
	}
	var out []llm.Model
	for _, id := range ids {
		if m, err := modelFor(settings.Target{Provider: name, Model: id, Config: p}); err == nil {
			out = append(out, m)
		}
	}
	return out
}

func writeModels(w io.Writer, models []listedModel) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tMODEL\tCONTEXT\tMAX OUT\t$/M IN\t$/M OUT\tKEY")
	for _, m := range models {
		id := m.ID
		if m.Default {
			id += " *"
		}
		key := "none"
		switch {
		case m.API == settings.APISim:
			key = "not needed"
		case m.Usable:
			key = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Provider, id, shortCount(m.ContextWindow), shortCount(m.MaxTokens),
			money(m.Cost.Input), money(m.Cost.Output), key)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "* the default: what rally uses without --provider and --model")
	return err
}

func writeModelsJSON(w io.Writer, models []listedModel) error {
	if models == nil {
		models = []listedModel{}
	}
	b, err := json.MarshalIndent(models, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// shortCount writes a token count short: 1.5k, 8.2k, 33k, 128k, 1.05M.
func shortCount(n int) string {
	trim := func(f float64, prec int) string { return strconv.FormatFloat(f, 'f', prec, 64) }
	switch {
	case n >= 1_000_000:
		return strings.TrimRight(strings.TrimRight(trim(float64(n)/1e6, 2), "0"), ".") + "M"
	case n >= 10_000:
		return trim(float64(n)/1e3, 0) + "k"
	case n >= 1000:
		return strings.TrimSuffix(trim(float64(n)/1e3, 1), ".0") + "k"
	}
	return strconv.Itoa(n)
}

func money(usd float64) string { return strconv.FormatFloat(usd, 'f', -1, 64) }
