package persistence

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Telegram keeps the Telegram channel's state (channels/telegram): the
// update offset and the updates handled, the owner's pairing, the cards
// answered, and each customer's session token. Nothing here is a secret of
// the owner: pairing codes are stored as hashes only, and the bot token
// never reaches the database.
type Telegram struct{ d *DB }

// Telegram returns the Telegram channel's store.
func (d *DB) Telegram() Telegram { return Telegram{d: d} }

// TelegramPairing is a pending pairing code as stored: its hash and expiry,
// never the code.
type TelegramPairing struct {
	Hash      [sha256.Size]byte `json:"hash"`
	ExpiresAt time.Time         `json:"expires_at"`
}

// TelegramCustomer is a Telegram user's chatbot session: the session token
// that resumes their scope, as the web channel's /chat would keep it in a
// browser.
type TelegramCustomer struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// pairingKeep is how long a pending code's record stays after its expiry;
// the Pairer checks the expiry itself, so the TTL only collects garbage.
const pairingKeep = 24 * time.Hour

// Offset returns the update_id of the last update handled, 0 when none was.
func (s Telegram) Offset(ctx context.Context) (int64, error) {
	var id int64
	err := s.d.view(ctx, func(txn *badger.Txn) error {
		var err error
		id, _, err = readInt(txn, []byte(keyTelegramOffset))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("telegram offset: %w", err)
	}
	return id, nil
}

// SaveOffset records updateID as the last update handled.
func (s Telegram) SaveOffset(ctx context.Context, updateID int64) error {
	err := s.d.update(ctx, func(txn *wtxn) error {
		return txn.Set([]byte(keyTelegramOffset), binary.BigEndian.AppendUint64(nil, uint64(updateID)))
	})
	if err != nil {
		return fmt.Errorf("save telegram offset %d: %w", updateID, err)
	}
	return nil
}

// MarkSeen records that update updateID was handled, for ttl (Telegram
// keeps an unconfirmed update for 24 hours).
func (s Telegram) MarkSeen(ctx context.Context, updateID int64, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("mark telegram update %d seen: ttl %s: want > 0: %w", updateID, ttl, ErrInvalid)
	}
	err := s.d.update(ctx, func(txn *wtxn) error {
		return txn.SetEntry(ttlEntry(keyInt(pfxTelegramSeen, updateID), nil, ttl))
	})
	if err != nil {
		return fmt.Errorf("mark telegram update %d seen: %w", updateID, err)
	}
	return nil
}

// Seen reports whether update updateID was marked handled.
func (s Telegram) Seen(ctx context.Context, updateID int64) (bool, error) {
	var seen bool
	err := s.d.view(ctx, func(txn *badger.Txn) error {
		var err error
		seen, err = exists(txn, keyInt(pfxTelegramSeen, updateID))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("telegram update %d seen: %w", updateID, err)
	}
	return seen, nil
}

// SavePairing replaces any pending pairing code with p.
func (s Telegram) SavePairing(ctx context.Context, p TelegramPairing) error {
	val, err := encodeJSON(&p)
	if err != nil {
		return fmt.Errorf("save telegram pairing code: %w", err)
	}
	err = s.d.update(ctx, func(txn *wtxn) error {
		return txn.SetEntry(ttlEntry([]byte(keyTelegramPairing), val, time.Until(p.ExpiresAt)+pairingKeep))
	})
	if err != nil {
		return fmt.Errorf("save telegram pairing code: %w", err)
	}
	return nil
}

// Pairing returns the pending pairing code; ok is false when there is none.
func (s Telegram) Pairing(ctx context.Context) (p TelegramPairing, ok bool, err error) {
	err = s.d.view(ctx, func(txn *badger.Txn) error {
		err := getValue(txn, []byte(keyTelegramPairing), func(v []byte) error { return decodeJSON(v, &p) })
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		ok = err == nil
		return err
	})
	if err != nil {
		return TelegramPairing{}, false, fmt.Errorf("telegram pairing code: %w", err)
	}
	return p, ok, nil
}

// BindOwner makes chatID the owner's chat and deletes the pending code, in
// one transaction, so that a code binds at most one chat.
func (s Telegram) BindOwner(ctx context.Context, chatID int64) error {
	if chatID == 0 {
		return fmt.Errorf("bind telegram owner chat: chat id 0: %w", ErrInvalid)
	}
	err := s.d.update(ctx, func(txn *wtxn) error {
		if err := txn.Delete([]byte(keyTelegramPairing)); err != nil {
			return err
		}
		return txn.Set([]byte(keyTelegramOwner), binary.BigEndian.AppendUint64(nil, uint64(chatID)))
	})
	if err != nil {
		return fmt.Errorf("bind telegram owner chat: %w", err)
	}
	return nil
}

// OwnerChat returns the paired owner chat; ok is false when none is paired.
func (s Telegram) OwnerChat(ctx context.Context) (chatID int64, ok bool, err error) {
	err = s.d.view(ctx, func(txn *badger.Txn) error {
		var err error
		chatID, ok, err = readInt(txn, []byte(keyTelegramOwner))
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("telegram owner chat: %w", err)
	}
	return chatID, ok, nil
}

// Unpair forgets the paired owner chat and any pending code, and returns
// the chat that was paired (0 when none was).
func (s Telegram) Unpair(ctx context.Context) (was int64, err error) {
	err = s.d.update(ctx, func(txn *wtxn) error {
		var err error
		if was, _, err = readInt(txn, []byte(keyTelegramOwner)); err != nil {
			return err
		}
		if err := txn.Delete([]byte(keyTelegramPairing)); err != nil {
			return err
		}
		return txn.Delete([]byte(keyTelegramOwner))
	})
	if err != nil {
		return 0, fmt.Errorf("unpair telegram owner chat: %w", err)
	}
	return was, nil
}

// UseCallback marks a card's answer key used until until and reports
// whether it was unused before. Of concurrent calls for one key, exactly
// one gets fresh=true. It is telegram.UsedSet's Use.
func (s Telegram) UseCallback(ctx context.Context, key string, until time.Time) (fresh bool, err error) {
	if err := validID("telegram callback key", key); err != nil {
		return false, fmt.Errorf("use telegram callback: %w", err)
	}
	k := key1(pfxTelegramUsed, key)
	err = s.d.update(ctx, func(txn *wtxn) error {
		now := time.Now()
		used, err := nonceUsed(txn, k, now)
		if err != nil {
			return err
		}
		fresh = !used
		if used {
			return nil
		}
		// Kept at least a minute, so that a double tap on a card that
		// expires this instant still finds the first tap.
		ttl := max(time.Until(until), time.Minute)
		return txn.SetEntry(nonceEntry(k, now, ttl))
	})
	if err != nil {
		return false, fmt.Errorf("use telegram callback: %w", err)
	}
	return fresh, nil
}

// CustomerToken returns the session token stored for Telegram user userID;
// ok is false when there is none or it expired.
func (s Telegram) CustomerToken(ctx context.Context, userID int64) (token string, ok bool, err error) {
	var c TelegramCustomer
	err = s.d.view(ctx, func(txn *badger.Txn) error {
		err := getValue(txn, keyInt(pfxTelegramCustomer, userID), func(v []byte) error { return decodeJSON(v, &c) })
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		ok = err == nil && time.Now().Before(c.ExpiresAt)
		return err
	})
	if err != nil {
		return "", false, fmt.Errorf("telegram customer %d token: %w", userID, err)
	}
	if !ok {
		return "", false, nil
	}
	return c.Token, true, nil
}

// SaveCustomerToken stores the session token of Telegram user userID until
// it expires.
func (s Telegram) SaveCustomerToken(ctx context.Context, userID int64, c TelegramCustomer) error {
	ttl := time.Until(c.ExpiresAt)
	if c.Token == "" || ttl <= 0 {
		return fmt.Errorf("save telegram customer %d token: empty or expired: %w", userID, ErrInvalid)
	}
	val, err := encodeJSON(&c)
	if err != nil {
		return fmt.Errorf("save telegram customer %d token: %w", userID, err)
	}
	err = s.d.update(ctx, func(txn *wtxn) error {
		return txn.SetEntry(ttlEntry(keyInt(pfxTelegramCustomer, userID), val, ttl))
	})
	if err != nil {
		return fmt.Errorf("save telegram customer %d token: %w", userID, err)
	}
	return nil
}

// DeleteCustomerToken forgets the session token of Telegram user userID
// (the runtime refused it).
func (s Telegram) DeleteCustomerToken(ctx context.Context, userID int64) error {
	err := s.d.update(ctx, func(txn *wtxn) error { return txn.Delete(keyInt(pfxTelegramCustomer, userID)) })
	if err != nil {
		return fmt.Errorf("delete telegram customer %d token: %w", userID, err)
	}
	return nil
}

// MarkAwaiting records, for ttl, that customer userID's message messageID
// waits for its answer, so that after a restart the channel reconnects the
// customer's session and the answer goes out without a new message.
func (s Telegram) MarkAwaiting(ctx context.Context, userID int64, messageID string, ttl time.Duration) error {
	if err := validID("message id", messageID); err != nil {
		return fmt.Errorf("mark telegram customer %d awaiting: %w", userID, err)
	}
	if ttl <= 0 {
		return fmt.Errorf("mark telegram customer %d awaiting: ttl %s: want > 0: %w", userID, ttl, ErrInvalid)
	}
	err := s.d.update(ctx, func(txn *wtxn) error {
		return txn.SetEntry(ttlEntry(telegramAwaitingKey(userID, messageID), nil, ttl))
	})
	if err != nil {
		return fmt.Errorf("mark telegram customer %d awaiting: %w", userID, err)
	}
	return nil
}

// ClearAwaiting forgets that messageID of userID waits for its answer.
func (s Telegram) ClearAwaiting(ctx context.Context, userID int64, messageID string) error {
	if err := validID("message id", messageID); err != nil {
		return fmt.Errorf("clear telegram customer %d awaiting: %w", userID, err)
	}
	err := s.d.update(ctx, func(txn *wtxn) error { return txn.Delete(telegramAwaitingKey(userID, messageID)) })
	if err != nil {
		return fmt.Errorf("clear telegram customer %d awaiting: %w", userID, err)
	}
	return nil
}

// Awaiting returns the customers with a message waiting for its answer, in
// ascending order of user id, at most limit of them.
func (s Telegram) Awaiting(ctx context.Context, limit int) ([]int64, error) {
	var users []int64
	err := s.d.view(ctx, func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(pfxTelegramAwaiting)})
		defer it.Close()
		for it.Rewind(); it.Valid() && len(users) < limit; it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := it.Item().Key()
			if len(k) < len(pfxTelegramAwaiting)+8 {
				return fmt.Errorf("telegram awaiting key %q too short: %w", k, ErrCorrupt)
			}
			id := int64(binary.BigEndian.Uint64(k[len(pfxTelegramAwaiting):]))
			if !slices.Contains(users, id) {
				users = append(users, id)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("telegram customers awaiting answers: %w", err)
	}
	return users, nil
}

// readInt reads an int64 BE value; ok is false when the key is absent.
func readInt(txn reader, k []byte) (n int64, ok bool, err error) {
	err = getValue(txn, k, func(v []byte) error {
		if len(v) != 8 {
			return fmt.Errorf("value of %q has %d bytes, want 8: %w", k, len(v), ErrCorrupt)
		}
		n = int64(binary.BigEndian.Uint64(v))
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return 0, false, nil
	}
	return n, err == nil, err
}
