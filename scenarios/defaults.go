package scenarios

// Defaults, in one place. Engine limits follow vLLM V1's defaults for an
// online server.
const (
	defaultSeed              = 1
	defaultAttainment        = 0.9
	defaultBatchedTokens     = 8192
	defaultMaxSeqs           = 256
	defaultBlockSize         = 16
	defaultMemoryUtilization = 0.9
	defaultLink              = "nvlink4"
	defaultRouter            = "round_robin"
	defaultPreemption        = "recompute"
	defaultStepTime          = "roofline"
	defaultRateScale         = 1
)

// applyDefaults fills every field left out of the file.
func (l *Loaded) applyDefaults() {
	s := &l.Scenario
	if s.Seed == 0 {
		s.Seed = defaultSeed
	}
	if s.SLO.Attainment == 0 {
		s.SLO.Attainment = defaultAttainment
	}
	if s.Workload.RateScale == 0 {
		s.Workload.RateScale = defaultRateScale
	}
	if s.Link.Kind == "" {
		s.Link.Kind = defaultLink
	}
	if s.Router.Policy == "" {
		s.Router.Policy = defaultRouter
	}
	for i := range s.Pools {
		poolDefaults(&s.Pools[i])
	}
}

func poolDefaults(p *Pool) {
	if p.Role == "" {
		p.Role = "colocated"
	}
	if p.Count == 0 {
		p.Count = 1
	}
	if p.TP == 0 {
		p.TP = 1
	}
	if p.Preemption == "" {
		p.Preemption = defaultPreemption
	}
	if p.StepTime.Model == "" {
		p.StepTime.Model = defaultStepTime
	}
	e := &p.Engine
	if e.MaxNumBatchedTokens == 0 {
		e.MaxNumBatchedTokens = defaultBatchedTokens
	}
	if e.MaxNumSeqs == 0 {
		e.MaxNumSeqs = defaultMaxSeqs
	}
	if e.BlockSize == 0 {
		e.BlockSize = defaultBlockSize
	}
	if e.MemoryUtilization == 0 {
		e.MemoryUtilization = defaultMemoryUtilization
	}
	if e.PrefixCaching == nil {
		e.PrefixCaching = ptr(true)
	}
	if e.ChunkedPrefill == nil {
		e.ChunkedPrefill = ptr(true)
	}
}

func ptr[T any](v T) *T { return &v }
