package results

import (
	"fmt"
	"strings"
)

// TierInfo is one kind of lower KV tier's totals over a run, summed over
// the instances that have it (a shared store once).
type TierInfo struct {
	Name           string // host, disk or store
	ReadBytes      float64
	WrittenBytes   float64
	CapacityBlocks int64
	CachedBlocks   int64 // at the end of the run
}

// TierSummary is one lower KV tier in a Summary. HitRate is the share of
// the completed requests' prompt tokens read from the tier (Σ
// Record.TierTokens / Σ prompt tokens, as the prefix-cache hit rate,
// which counts them too); the bytes are what its read links carried and
// what was written to it.
type TierSummary struct {
	Name           string  `json:"name"`
	HitRate        float64 `json:"hit_rate"`
	ReadBytes      float64 `json:"read_bytes"`
	WrittenBytes   float64 `json:"written_bytes"`
	CapacityBlocks int64   `json:"capacity_blocks"`
	CachedBlocks   int64   `json:"cached_blocks_at_end"`
}

// tierIndex is the Record.TierTokens index of a tier's name.
var tierIndex = map[string]int{"host": 0, "disk": 1, "store": 2}

// summarizeTiers fills each tier's hit rate from the completed records.
func summarizeTiers(recs []Record, tiers []TierInfo) []TierSummary {
	if len(tiers) == 0 {
		return nil
	}
	var hit [3]int64
	var prompt int64
	for i := range recs {
		r := &recs[i]
		if r.Status != Completed {
			continue
		}
		prompt += int64(r.PromptTokens)
		for k, n := range r.TierTokens {
			hit[k] += int64(n)
		}
	}
	out := make([]TierSummary, len(tiers))
	for i, t := range tiers {
		out[i] = TierSummary{Name: t.Name, ReadBytes: t.ReadBytes, WrittenBytes: t.WrittenBytes,
			CapacityBlocks: t.CapacityBlocks, CachedBlocks: t.CachedBlocks}
		if k, ok := tierIndex[t.Name]; ok && prompt > 0 {
			out[i].HitRate = float64(hit[k]) / float64(prompt)
		}
	}
	return out
}

// tierLine is the summary table's line of the lower tiers, or "".
func tierLine(tiers []TierSummary) string {
	if len(tiers) == 0 {
		return ""
	}
	parts := make([]string, len(tiers))
	for i, t := range tiers {
		parts[i] = fmt.Sprintf("%s hit %.1f%% (read %s, written %s, %.0f%% full)", t.Name, 100*t.HitRate,
			gigabytes(t.ReadBytes), gigabytes(t.WrittenBytes), 100*float64(t.CachedBlocks)/float64(max(t.CapacityBlocks, 1)))
	}
	return fmt.Sprintf("%-11s %s\n", "kv tiers", strings.Join(parts, "   "))
}

// gigabytes formats bytes as GB.
func gigabytes(b float64) string { return fmt.Sprintf("%.2f GB", b/1e9) }

// TierColumns are the columns WriteRequestsCSV appends when the run has
// lower KV tiers: the prompt tokens each request read from each.
const TierColumns = ",host_tokens,disk_tokens,store_tokens"
