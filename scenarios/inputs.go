package scenarios

// Inputs returns the files the scenario reads when it is built, resolved
// as Build opens them (Resolve), each once, in this order: the model's
// config.json; the workload's trace, or its ServeGen trace and dataset;
// each pool's step-time file; the catalog files and the config files of
// the inline catalog's models (those a catalog file's models name are
// not listed). The scenario file itself (File) is not listed: it was
// read before. A sweep keeps their hashes to tell when an input changed
// under its saved results.
func (l *Loaded) Inputs() []string {
	var names []string
	if IsConfigPath(l.Model) {
		names = append(names, l.Model)
	}
	if t := l.Workload.Trace; t != nil {
		names = append(names, t.Path)
	}
	if g := l.Workload.ServeGen; g != nil {
		for _, c := range g.Clients() {
			names = append(names, c+"-trace.csv", c+"-dataset.json")
		}
	}
	for _, p := range l.Pools {
		if p.StepTime.File != "" {
			names = append(names, p.StepTime.File)
		}
	}
	names = append(names, l.Catalog.Files...)
	for _, m := range l.Catalog.Models {
		if m.Config != "" {
			names = append(names, m.Config)
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if r := l.Resolve(n); !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}
