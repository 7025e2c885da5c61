package router

import (
	"testing"

	"handoff/models/units"
)

// TestDynamoSessionAffinity: with a TTL, a session's turn goes to the
// worker its first turn was routed to, however its cost has grown — busy
// or not — until the session idles past the TTL or the worker leaves; a
// request of no session is priced as ever; without a TTL, no affinity.
func TestDynamoSessionAffinity(t *testing.T) {
	ttl := units.Duration(10e9)
	cfg := DefaultDynamoConfig()
	cfg.SessionAffinityTTL = &ttl
	cfg.ActivePrefillTokensThreshold = ptr(1000)
	d := NewDynamo(cfg, seeded())
	turn := func(n uint16) *Request { r := request(64); r.Session, r.Turn = 3, n; return r }
	c := testCluster([]View{{Index: 0}, {Index: 1, ActivePrefillTokens: 32}}, nil, nil, nil)
	if got := d.Route(turn(1), c).Prefill; got != 0 {
		t.Fatalf("turn 1 routed to %d, want the cheapest, 0", got)
	}
	c.Prefill[0].ActivePrefillTokens = 5000 // cost (5000+64)/16 + 4, and busy
	c.NowNs = 9e9
	if got := d.Route(turn(2), c).Prefill; got != 0 {
		t.Errorf("turn 2 routed to %d, want its session's 0", got)
	}
	if got := d.Route(request(64), c).Prefill; got != 1 {
		t.Errorf("a request of no session routed to %d, want 1", got)
	}
	c.NowNs = 9e9 + 10e9 + 1 // idle past the TTL since turn 2
	if got := d.Route(turn(3), c).Prefill; got != 1 {
		t.Errorf("turn 3 after the TTL routed to %d, want 1", got)
	}
	c.Prefill = c.Prefill[:1] // 1 left: the session is bound anew
	c.Prefill[0].ActivePrefillTokens = 0
	if got := d.Route(turn(4), c).Prefill; got != 0 {
		t.Errorf("turn 4 with its worker gone routed to %d, want 0", got)
	}
	if b := d.sessions[0][3]; b.inst != 0 || b.usedNs != c.NowNs {
		t.Errorf("binding %+v, want worker 0 used now", b)
	}

	pd := testCluster([]View{{Index: 0}}, []View{{Index: 7}, {Index: 8, ActiveBlocks: 3}}, nil, nil)
	if got := d.RouteDecode(turn(5), pd); got != 7 {
		t.Fatalf("decode of turn 5 on %d, want 7", got)
	}
	pd.Decode[0].ActiveBlocks = 100
	if got := d.RouteDecode(turn(6), pd); got != 7 {
		t.Errorf("decode of turn 6 on %d, want its session's 7", got)
	}

	plain := NewDynamo(DefaultDynamoConfig(), seeded())
	c = testCluster([]View{{Index: 0}, {Index: 1, ActivePrefillTokens: 32}}, nil, nil, nil)
	plain.Route(turn(1), c)
	c.Prefill[0].ActivePrefillTokens = 5000
	if got := plain.Route(turn(2), c).Prefill; got != 1 {
		t.Errorf("no TTL: turn 2 routed to %d, want 1", got)
	}
}
