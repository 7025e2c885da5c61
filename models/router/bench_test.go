package router

import (
	"fmt"
	"testing"
)

// benchCluster is p prefillers and d decoders with uneven bookkeeping.
func benchCluster(p, d int) *Cluster {
	var pre, dec []View
	for i := range p {
		pre = append(pre, View{Index: i, Waiting: i % 5, ActivePrefillTokens: 100 * (i % 7), FreeBlocks: 500, TotalBlocks: 1000})
	}
	for j := range d {
		dec = append(dec, View{Index: p + j, ActiveBlocks: 10 * (j % 3), Outstanding: j % 4, FreeBlocks: 500, TotalBlocks: 1000})
	}
	return testCluster(pre, dec, map[int]int{1: 8, 3: 16}, map[int]int64{0: 1000})
}

func BenchmarkRoute(b *testing.B) {
	c := benchCluster(16, 16)
	r := request(1024) // 64 blocks
	own := DefaultDynamoConfig()
	own.UseKVEvents = false
	routers := []struct {
		name string
		r    Router
	}{
		{"dynamo", NewDynamo(DefaultDynamoConfig(), seeded())},
		{"dynamo-own-index", NewDynamo(own, seeded())},
		{"llmd", NewLLMD(LLMDConfig{Scorers: DefaultLLMDConfig().Scorers, Picker: PickerMaxScore,
			NonCachedTokens: 256, LRUCapacityPerServer: 31250}, seeded())},
		{"topology_aware", NewTopologyAware(DefaultDynamoConfig(), 1, seeded())},
		{"sglang", NewSGLang(DefaultSGLangConfig(), seeded())},
	}
	for _, rt := range routers {
		b.Run(fmt.Sprintf("%s/16x16", rt.name), func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				c.NowNs = int64(i) * 1000
				rt.r.Route(r, c)
			}
		})
	}
}
