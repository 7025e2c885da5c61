package results

import (
	"cmp"
	"slices"
)

// ReasonGroup is the requests that ended, rejected or dropped, for one kind
// of reason: the reason text with the request's own figures left out.
type ReasonGroup struct {
	Kind  string `json:"kind"` // e.g. "too long: N tokens (prompt N + output N) exceed the N any instance can hold"
	Count int64  `json:"count"`
	// The first such request (lowest ID) and its reason in full.
	ExampleRequest int64  `json:"example_request"`
	ExampleReason  string `json:"example_reason"`
}

// ReasonKind returns a reason's kind: every number in it that does not
// continue a name replaced by N, so that requests refused for the same
// cause with different sizes share one kind. Digits after a letter, a
// digit, '-', '_' or '.' ("decode-1", "h100", "llama-3.1-70b") stay. An
// empty reason is "unspecified". O(len).
func ReasonKind(reason string) string {
	return string(appendReasonKind(make([]byte, 0, len(reason)), reason))
}

// appendReasonKind appends ReasonKind(reason) to dst without allocating
// beyond dst's growth (the streaming summary calls it for every record).
func appendReasonKind(dst []byte, reason string) []byte {
	if reason == "" {
		return append(dst, "unspecified"...)
	}
	for i := 0; i < len(reason); {
		if !isDigit(reason[i]) || (i > 0 && isNamePart(reason[i-1])) {
			dst = append(dst, reason[i])
			i++
			continue
		}
		j := i
		for j < len(reason) && (isDigit(reason[j]) || reason[j] == '.' && j+1 < len(reason) && isDigit(reason[j+1])) {
			j++
		}
		dst = append(dst, 'N') // a unit glued on ("1.5GB") stays: "NGB"
		i = j
	}
	return dst
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isNamePart reports whether c joins a digit to a name: a letter, a digit,
// '_', '-' or '.'.
func isNamePart(c byte) bool {
	return isDigit(c) || c == '_' || c == '-' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// reasonTally groups reasons by kind as records stream past.
type reasonTally struct {
	index  map[string]int // kind → position in groups
	groups []ReasonGroup
}

// add counts record r's reason.
func (t *reasonTally) add(r *Record) {
	kind := ReasonKind(r.Reason)
	if i, ok := t.index[kind]; ok {
		t.groups[i].Count++
		if r.ID < t.groups[i].ExampleRequest {
			t.groups[i].ExampleRequest, t.groups[i].ExampleReason = r.ID, r.Reason
		}
		return
	}
	if t.index == nil {
		t.index = map[string]int{}
	}
	t.index[kind] = len(t.groups)
	t.groups = append(t.groups, ReasonGroup{Kind: kind, Count: 1, ExampleRequest: r.ID, ExampleReason: r.Reason})
}

// sorted returns the groups, most requests first, then by kind; never nil,
// so that summary.json holds [] rather than null.
func (t *reasonTally) sorted() []ReasonGroup {
	g := append([]ReasonGroup{}, t.groups...)
	slices.SortFunc(g, func(a, b ReasonGroup) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Kind, b.Kind)) })
	return g
}
