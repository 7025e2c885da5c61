package autoscale

import (
	"errors"
	"math"
)

// The load predictors of the SLA planner (Dynamo's LOAD_PREDICTORS in
// components/src/dynamo/planner/core/load/predictors.py). Dynamo's ARIMA
// and Prophet fit statistical models with third-party libraries; handoff
// has neither.
const (
	PredictConstant = "constant" // the next interval repeats the last (ConstantPredictor)
	PredictKalman   = "kalman"   // a local-linear-trend Kalman filter (KalmanPredictor)
)

// Kalman configures the local-linear-trend filter: level and trend follow
// a random walk with variances QLevel and QTrend per interval, and each
// observation carries noise of variance R. Defaults are Dynamo's
// (kalman_q_level 1, kalman_q_trend 0.1, kalman_r 10, kalman_min_points 5).
type Kalman struct {
	QLevel    float64 `yaml:"q_level"`
	QTrend    float64 `yaml:"q_trend"`
	R         float64 `yaml:"r"`
	MinPoints int     `yaml:"min_points"` // before this many observations, predict the last one
}

func (k *Kalman) defaults() {
	fillZero(&k.QLevel, 1)
	fillZero(&k.QTrend, 0.1)
	fillZero(&k.R, 10)
	if k.MinPoints == 0 {
		k.MinPoints = 5
	}
}

func (k *Kalman) validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    float64
	}{{"q_level", k.QLevel}, {"q_trend", k.QTrend}, {"r", k.R}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			errs = append(errs, fieldErr(f.name, "must be > 0 and finite, got %g", f.v))
		}
	}
	if k.MinPoints < 1 {
		errs = append(errs, fieldErr("min_points", "must be ≥ 1, got %d", k.MinPoints))
	}
	return errors.Join(errs...)
}

func fillZero(x *float64, d float64) {
	if *x == 0 {
		*x = d
	}
}

// predictor forecasts one series (request rate, mean input or output
// length) one interval ahead.
type predictor interface {
	observe(v float64)
	next() float64
}

// leadingZeros skips the idle stretch before the first non-zero value, as
// Dynamo's BasePredictor.add_data_point does, so a cold start does not
// drag the forecast to zero. It reports whether v should be kept.
type leadingZeros struct{ seen bool }

func (l *leadingZeros) keep(v float64) bool {
	l.seen = l.seen || v != 0
	return l.seen
}

// constant predicts the last value kept.
type constant struct {
	skip leadingZeros
	last float64
}

func (c *constant) observe(v float64) {
	if c.skip.keep(v) {
		c.last = v
	}
}

func (c *constant) next() float64 { return c.last }

// kalman is the filter of Dynamo's KalmanPredictor: state (level, trend),
// transition level += trend, the level observed. The first kept value sets
// the level (trend 0) with covariance 1000·I; each later one is a predict
// then an update. A forecast predicts one step and is cached until the
// next observation, which then updates that prediction rather than
// predicting again. Before MinPoints values it forecasts the last value
// (Dynamo documents this warm-up; its code forecasts from the first).
type kalman struct {
	cfg       Kalman
	skip      leadingZeros
	n         int
	last      float64
	level     float64
	trend     float64
	p         [2][2]float64
	predicted bool
}

func newKalman(cfg Kalman) *kalman {
	return &kalman{cfg: cfg, p: [2][2]float64{{1000, 0}, {0, 1000}}}
}

func (k *kalman) observe(z float64) {
	if !k.skip.keep(z) {
		return
	}
	k.n++
	k.last = z
	if k.n == 1 {
		k.level = z
		return
	}
	if !k.predicted {
		k.predict()
	}
	k.predicted = false
	// Update with H = [1 0]: gain K = P·Hᵀ/(H·P·Hᵀ + R).
	s := k.p[0][0] + k.cfg.R
	k0, k1 := k.p[0][0]/s, k.p[1][0]/s
	y := z - k.level
	k.level += k0 * y
	k.trend += k1 * y
	p00, p01, p10, p11 := k.p[0][0], k.p[0][1], k.p[1][0], k.p[1][1]
	k.p = [2][2]float64{{(1 - k0) * p00, (1 - k0) * p01}, {p10 - k1*p00, p11 - k1*p01}}
}

// predict advances the state one interval: x = F·x, P = F·P·Fᵀ + Q with
// F = [[1 1] [0 1]].
func (k *kalman) predict() {
	k.level += k.trend
	p00, p01, p10, p11 := k.p[0][0], k.p[0][1], k.p[1][0], k.p[1][1]
	k.p = [2][2]float64{
		{p00 + p01 + p10 + p11 + k.cfg.QLevel, p01 + p11},
		{p10 + p11, p11 + k.cfg.QTrend}}
}

func (k *kalman) next() float64 {
	if k.n < k.cfg.MinPoints {
		return k.last
	}
	if !k.predicted {
		k.predict()
		k.predicted = true
	}
	return k.level
}
