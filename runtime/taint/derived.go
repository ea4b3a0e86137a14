package taint

import "github.com/silas-ai/silas/messages"

// Derived returns the taint of content a model wrote after reading the
// message and everything else it was shown (tool results, work results,
// memories, subscriptions): the weakest of them all (spec 5.12, "when
// external-tainted data influences a memory item, the item's taint is
// downgraded to external"). The order is owner > auth > external. An empty
// or unknown level counts as external: content whose trust was not
// recorded is not trusted.
func Derived(message messages.TaintLevel, seen ...messages.TaintLevel) messages.TaintLevel {
	w := known(message)
	for _, l := range seen {
		w = messages.Weakest(w, known(l))
	}
	return w
}

// known maps a level that does not validate to external.
func known(l messages.TaintLevel) messages.TaintLevel {
	if l.Validate() != nil {
		return messages.TaintExternal
	}
	return l
}
