package results

import (
	"math"
	"strconv"
)

// maxPercentDecimals bounds the decimals Percent adds to show a miss.
const maxPercentDecimals = 6

// Percent formats a share (0..1) as a percentage with one decimal, or with
// as many more (up to 6) as it takes for a share below 1 not to read
// 100% and a share above 0 not to read 0%: 2 misses in 19,366 requests are
// "99.99%", not "100.0%"; closer still, ">99.999999%".
func Percent(share float64) string {
	for d := 1; d <= maxPercentDecimals; d++ {
		s := strconv.FormatFloat(100*share, 'f', d, 64)
		v, _ := strconv.ParseFloat(s, 64)
		if !(share < 1 && v == 100) && !(share > 0 && v == 0) {
			return s + "%"
		}
	}
	step := math.Pow(10, -maxPercentDecimals)
	if share < 1 && share > 0.5 {
		return ">" + strconv.FormatFloat(100-step, 'f', maxPercentDecimals, 64) + "%"
	}
	return "<" + strconv.FormatFloat(step, 'f', maxPercentDecimals, 64) + "%"
}

// targetPercent formats an attainment target as a percentage with no
// more decimals than it has: 0.9 is "90%", 0.995 "99.5%".
func targetPercent(share float64) string {
	return strconv.FormatFloat(math.Round(share*1e8)/1e6, 'f', -1, 64) + "%"
}
