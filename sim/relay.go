package sim

// The decode leg of a P/D request. Behind a P/D proxy — Ray Serve LLM's
// (build_pd_openai_app: its PDProxyServer), vLLM's toy proxy
// (tests/v1/kv_connector/nixl_integration/toy_proxy_server.py), llm-d's
// sidecar — a request reaches its decoder as a second request: the proxy
// sends the prompt to a prefiller with max_tokens 1 and kv_transfer_params
// asking it to keep the KV for a remote decode, waits for the whole
// one-token response (not streamed), copies the kv_transfer_params that
// come back into the request and sends it to a decoder, whose API server
// parses and tokenizes the prompt again before its engine reserves blocks
// for it and pulls the KV. So between the prefill's end and the decoder's
// engine a request pays the prefiller's emission of its response (its
// FinalEmitNs: the response ends with its one token), the proxy's two calls
// (Config.ProxyNs) and the decoder's front end (its Instance.Frontend, for
// the prompt), all charged to the front end. The prefiller holds the KV
// meanwhile (phaseRelaying counts as held KV), its hold counted from the
// prefill's end, as vLLM's request_finished starts it. Layer-wise
// streaming (StreamKV) hands the decoder the request when the prompt's
// last step starts, with no relay.

// relayNs is how long flight f's decode leg takes from the end of its
// prefill on instance p to its decoder's engine.
func (c *cluster) relayNs(p int, f *flight) int64 {
	return c.cfg.Instances[p].FinalEmitNs + c.cfg.ProxyNs +
		c.cfg.Instances[f.route.Decode].Frontend.delayNs(f.req.PromptTokens)
}

// relay queues the arrival of flight ref's decode leg at its decoder's
// engine, due at atNs.
func (c *cluster) relay(ref int32, atNs int64) {
	c.flights.at(ref).relayAtNs = atNs
	c.q.push(atNs, classRelay, ref)
}

// relaySuperseded reports whether flight ref's relay event due at atNs no
// longer applies: the flight ended, failed over or reached its decoder
// since (a flight's slot may be taken by another flight meanwhile, which
// has its own event).
func (c *cluster) relaySuperseded(ref int32, atNs int64) bool {
	f := c.flights.at(ref)
	return f.relayAtNs != atNs || f.dseq != nil || f.phase != phaseRelaying && f.phase != phaseLost
}

// onRelayed hands flight ref, whose decode leg has reached its decoder's
// engine, to that decoder. A prefiller that freed or lost the KV on the
// way left it lost: its decoder finds out when it reads (hold.go,
// loadfail.go).
func (c *cluster) onRelayed(ref int32) {
	if c.flights.at(ref).phase == phaseRelaying {
		c.enter(ref, phaseHolding)
	}
	c.handoff(ref)
}
