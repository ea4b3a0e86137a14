package persistence

// Usage totals. Every turn's commit adds to two records of its scope (the
// total and the day's), and reading them back from Badger cost each turn
// two lookups through every level of the tree (a key rewritten each turn
// is found in the memtable, but Badger still looks for a newer version
// below). Like the chronicle sequences (chronicle.go), the committer keeps
// the committed records of the scopes it has touched, read from disk on
// first use, and a group's transaction keeps what it staged on top. Only
// the committer goroutine touches either, and every write of a usage
// record is staged by it, so the cache cannot miss a write.

// usageEntry is one cached usage record.
type usageEntry struct {
	loaded bool // rec is valid
	rec    UsageRecord
}

// usageCache holds a scope's total and its latest day, so that a
// long-running daemon keeps two records per scope, not one per day.
type usageCache struct {
	total  usageEntry
	day    string // the day key's text; "" before the first
	dayRec usageEntry
}

// usageCurrent returns the record stored under k as txn sees it: staged by
// an earlier write of the group, else committed (cached, or read from
// disk and cached). ok is false when the record is not cached and must be
// read from disk.
func (t *wtxn) usageCurrent(scope string, k []byte) (rec UsageRecord, ok bool) {
	if r, ok := t.usage[string(k)]; ok {
		return r.rec, true
	}
	e := t.c.usageEntry(scope, k)
	return e.rec, e.loaded
}

// stageUsageRecord records that txn staged rec under k for scope.
func (t *wtxn) stageUsageRecord(scope string, k []byte, rec UsageRecord) {
	if t.usage == nil {
		t.usage = make(map[string]stagedUsage)
	}
	t.usage[string(k)] = stagedUsage{scope: scope, rec: rec}
}

// stagedUsage is a usage record a transaction staged.
type stagedUsage struct {
	scope string
	rec   UsageRecord
}

// usageEntry is the cache slot of key k of scope: its total or its
// current day. A day key other than the cached one replaces it.
func (c *committer) usageEntry(scope string, k []byte) *usageEntry {
	uc := c.usage[scope]
	if uc == nil {
		uc = &usageCache{}
		c.usage[scope] = uc
	}
	if isUsageTotalKey(k) {
		return &uc.total
	}
	if uc.day != string(k) {
		uc.day, uc.dayRec = string(k), usageEntry{}
	}
	return &uc.dayRec
}

func isUsageTotalKey(k []byte) bool {
	return len(k) >= len(pfxUsageTotal) && string(k[:len(pfxUsageTotal)]) == pfxUsageTotal
}

// settleUsage records the outcome of a commit: on success the records it
// staged become the committed ones; on failure they are forgotten, because
// a failed commit may still have reached the disk.
func (c *committer) settleUsage(staged map[string]stagedUsage, ok bool) {
	for k, s := range staged {
		e := c.usageEntry(s.scope, []byte(k))
		if ok {
			e.rec, e.loaded = s.rec, true
		} else {
			e.loaded = false
		}
	}
}
