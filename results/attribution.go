package results

// Nobody owns the time no vendor answers for: by default the router's and
// the transfer's, and always the time lost to decoder rejections.
const Nobody = "nobody"

// unknownOwner owns the time of an instance index with no InstanceInfo.
const unknownOwner = "unknown"

// Attribution splits the mean completed request's life into components and
// owners, in s. Each mean is over all completed requests, so the TTFTS
// values sum to the mean TTFT, the DecodeS values to the mean time from
// first to last token, and the owners' values to the same totals (up to
// rounding to the ns).
type Attribution struct {
	TTFTS   map[string]float64   `json:"ttft_s"`   // keyed by TimeNames[:FirstDecodeTime]
	DecodeS map[string]float64   `json:"decode_s"` // keyed by TimeNames[FirstDecodeTime:]
	ByOwner map[string]OwnerTime `json:"by_owner"` // router, transfer and Nobody, and the owners of the instances completed requests used
}

// OwnerTime is what one owner answers for in the mean completed request, s.
type OwnerTime struct {
	TTFTS   float64 `json:"ttft_s"`
	DecodeS float64 `json:"decode_s"`
	TotalS  float64 `json:"total_s"`
}

// attribute computes the Attribution of the completed records: router
// time is the router owner's, transfer time the transfer owner's,
// prefill queueing, compute and onboarding the prefill instance's owner's, every
// decoder component the decode instance's owner's (the prefill instance's
// when colocated, DecodeInstance = −1), rejection time Nobody's. An index
// with no InstanceInfo is owned by "unknown". O(len(recs)·NumTimes), no
// allocation per record.
func attribute(recs []Record, info RunInfo) Attribution {
	var compNs [NumTimes]float64
	// Per instance (slot 0: an index with no InstanceInfo): prefill TTFT,
	// decoder TTFT, decoder decode time, and whether any request used it.
	slotNs := make([][3]float64, len(info.Instances)+1)
	used := make([]bool, len(slotNs))
	n := 0
	for i := range recs {
		r := &recs[i]
		if r.Status != Completed {
			continue
		}
		n++
		for k, ns := range r.Time {
			compNs[k] += float64(ns)
		}
		pf, dec := slot(r.PrefillInstance, len(slotNs)), slot(r.DecodeInstance, len(slotNs))
		if r.DecodeInstance < 0 {
			dec = pf
		}
		prefill, decodeFirst, decode := slotTimes(r)
		slotNs[pf][0] += float64(prefill)
		slotNs[dec][1] += float64(decodeFirst)
		slotNs[dec][2] += float64(decode)
		used[pf], used[dec] = true, true
	}
	return attributionOf(info, &compNs, slotNs, used, n)
}

// slotTimes splits a completed request's time between the owners it can
// belong to: the prefill instance's TTFT (front end, prefill queueing and
// compute, onboarding), the decoder's TTFT and the decoder's decode time.
func slotTimes(r *Record) (prefill, decodeFirst, decode int64) {
	t := &r.Time
	return t[TFrontend] + t[TPrefillQueue] + t[TPrefillCompute] + t[TOnboard], t[TDecodeFirst],
		t[TDecodeCompute] + t[TDecodeQueue] + t[TReprefill] + t[TSwap] + t[TEmit]
}

// attributionOf is the Attribution of n completed requests from their
// per-component sums and per-instance slot sums (attribute's and the
// streaming Summarizer's).
func attributionOf(info RunInfo, compNs *[NumTimes]float64, slotNs [][3]float64, used []bool, n int) Attribution {
	a := Attribution{TTFTS: map[string]float64{}, DecodeS: map[string]float64{}, ByOwner: map[string]OwnerTime{}}
	for k, name := range TimeNames {
		if k < FirstDecodeTime {
			a.TTFTS[name] = meanS(compNs[k], n)
		} else {
			a.DecodeS[name] = meanS(compNs[k], n)
		}
	}
	if n > 0 {
		byOwner(&a, info, compNs, slotNs, used, n)
	}
	return a
}

// byOwner fills a.ByOwner from the per-component and per-instance sums.
func byOwner(a *Attribution, info RunInfo, compNs *[NumTimes]float64, slotNs [][3]float64, used []bool, n int) {
	sums := map[string]*[2]float64{} // [TTFT, decode] ns per owner
	var order []string
	add := func(owner string, ttftNs, decodeNs float64) {
		s := sums[owner]
		if s == nil {
			s = new([2]float64)
			sums[owner] = s
			order = append(order, owner)
		}
		s[0] += ttftNs
		s[1] += decodeNs
	}
	add(orNobody(info.RouterOwner), compNs[TRouter], 0)
	add(orNobody(info.TransferOwner), compNs[TTransfer], 0)
	add(Nobody, 0, compNs[TRejection])
	for s := range slotNs {
		if !used[s] {
			continue
		}
		owner := unknownOwner
		if s > 0 {
			owner = info.Instances[s-1].owner()
		}
		add(owner, slotNs[s][0]+slotNs[s][1], slotNs[s][2])
	}
	for _, owner := range order {
		s := sums[owner]
		a.ByOwner[owner] = OwnerTime{TTFTS: meanS(s[0], n), DecodeS: meanS(s[1], n), TotalS: meanS(s[0]+s[1], n)}
	}
}

// slot returns the slotNs row of instance i: i+1, or 0 when i has no
// InstanceInfo (n−1 instances have one).
func slot(i int32, n int) int {
	if i < 0 || int(i)+1 >= n {
		return 0
	}
	return int(i) + 1
}

// meanS returns sumNs/n in s rounded to the ns, or 0 when n is 0.
func meanS(sumNs float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return nsToS(sumNs / float64(n))
}

// orNobody returns owner, or Nobody when it is empty.
func orNobody(owner string) string {
	if owner == "" {
		return Nobody
	}
	return owner
}
