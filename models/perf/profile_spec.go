package perf

import "handoff/models/strictyaml"

// ProfileFile is the step_time section of the models that read a measured
// profile: the file, the model inside it and, for a table, its hardware.
type ProfileFile struct {
	File         string `yaml:"file,omitempty"`             // polynomial: DistServe JSON; table: Splitwise CSV
	ProfileModel string `yaml:"profile_model,omitempty"`    // model key inside File
	ProfileHW    string `yaml:"profile_hardware,omitempty"` // table: hardware key inside File
}

// Check requires the file.
func (p ProfileFile) Check() error {
	if p.File == "" {
		return strictyaml.Fieldf("file", "required")
	}
	return nil
}

// PolynomialSpec is the polynomial model's section (DistServe's fitted
// coefficients).
type PolynomialSpec struct{ ProfileFile }

// New implements Spec.
func (s PolynomialSpec) New(env Env) (StepTimer, error) {
	f, path, err := env.Open(s.File)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := ParseDistServe(f, path, s.ProfileModel, env.Layout.TP)
	if err != nil {
		return nil, err
	}
	return NewPolynomial(c), nil
}

// TableSpec is the table model's section (interpolation in Splitwise's
// measured profile).
type TableSpec struct{ ProfileFile }

// New implements Spec.
func (s TableSpec) New(env Env) (StepTimer, error) {
	f, path, err := env.Open(s.File)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := ParseSplitwise(f, path)
	if err != nil {
		return nil, err
	}
	return NewProfileTable(rows, s.ProfileModel, s.ProfileHW, env.Layout.TP)
}
