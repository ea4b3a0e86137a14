package persistence

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Usage accumulates model usage per scope, in total and per UTC day.
type Usage struct{ d *DB }

// UsageRecord counts model calls, tokens and cost.
type UsageRecord struct {
	Calls            int     `json:"calls"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd"`
}

func (u UsageRecord) validate() error {
	if u.Calls < 0 || u.PromptTokens < 0 || u.CompletionTokens < 0 || u.CostUSD < 0 || math.IsNaN(u.CostUSD) || math.IsInf(u.CostUSD, 0) {
		return fmt.Errorf("usage %+v has a negative or non-finite field: %w", u, ErrInvalid)
	}
	return nil
}

func (u *UsageRecord) add(o UsageRecord) {
	u.Calls += o.Calls
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.CostUSD += o.CostUSD
}

func usageDayKey(scope string, day time.Time) []byte {
	return key2(pfxUsageDay, scope, day.UTC().Format(time.DateOnly))
}

// stageUsage adds u to scope's total and to the day of at.
func stageUsage(txn *wtxn, scope string, u UsageRecord, at time.Time) error {
	for _, k := range [][]byte{key1(pfxUsageTotal, scope), usageDayKey(scope, at)} {
		cur, ok := txn.usageCurrent(scope, k)
		if !ok {
			err := getValue(txn, k, func(v []byte) error { return decodeJSON(v, &cur) })
			if err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
		}
		cur.add(u)
		val, err := encodeJSON(&cur)
		if err != nil {
			return err
		}
		if err := txn.Set(k, val); err != nil {
			return err
		}
		txn.stageUsageRecord(scope, k, cur)
	}
	return nil
}

// Add accumulates u into scope's total and today's (UTC) record.
func (us Usage) Add(ctx context.Context, scope string, u UsageRecord) error {
	if err := validID("scope", scope); err != nil {
		return fmt.Errorf("add usage: %w", err)
	}
	if err := u.validate(); err != nil {
		return fmt.Errorf("add usage %s: %w", scope, err)
	}
	now := time.Now()
	if err := us.d.update(ctx, func(txn *wtxn) error { return stageUsage(txn, scope, u, now) }); err != nil {
		return fmt.Errorf("add usage %s: %w", scope, err)
	}
	return nil
}

// Get returns scope's accumulated usage (zero if none).
func (us Usage) Get(ctx context.Context, scope string) (UsageRecord, error) {
	return us.get(ctx, scope, key1(pfxUsageTotal, scope))
}

// Day returns scope's usage on the UTC day containing day (zero if none).
func (us Usage) Day(ctx context.Context, scope string, day time.Time) (UsageRecord, error) {
	return us.get(ctx, scope, usageDayKey(scope, day))
}

func (us Usage) get(ctx context.Context, scope string, k []byte) (UsageRecord, error) {
	var u UsageRecord
	if err := validID("scope", scope); err != nil {
		return u, fmt.Errorf("get usage: %w", err)
	}
	err := us.d.view(ctx, func(txn *badger.Txn) error {
		return getValue(txn, k, func(v []byte) error { return decodeJSON(v, &u) })
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return UsageRecord{}, fmt.Errorf("get usage %s: %w", scope, err)
	}
	return u, nil
}
