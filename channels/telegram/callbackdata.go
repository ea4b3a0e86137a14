package telegram

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// A card button's callback_data is, in URL-safe base64 without padding:
//
//	byte 0      format version (high nibble, 1) | request id kind (low
//	            nibble: 0 raw bytes, 1 a canonical UUID in 16 bytes)
//	bytes 1-4   expiry, Unix seconds, big-endian uint32
//	byte 5      verdict length n
//	n bytes     verdict
//	...         request id
//	12 bytes    HMAC-SHA256 tag, truncated
//
// The tag covers everything before it and the chat id the card was sent
// to, so data copied to another chat does not verify there. 64 base64
// characters hold 48 bytes: with a UUID request id, verdicts of up to 14
// bytes fit ("just_this_once" does). A 96-bit tag leaves a forger one
// chance in 2^96 per try, and every try is a Telegram callback.
const (
	cbVersion   = 1
	cbKindRaw   = 0
	cbKindUUID  = 1
	cbHeaderLen = 6
	cbTagLen    = 12
	cbMaxRaw    = MaxCallbackData / 4 * 3
	cbDomain    = "silas/telegram/callback/v1\x00"
	cbUsedKey   = "telegram-card:" // prefix of UsedSet keys
	minKeyLen   = 32
)

// CallbackData is what a card button carries.
type CallbackData struct {
	RequestID string
	Verdict   string
	// Expires is when the card stops accepting answers (second precision).
	Expires time.Time
}

// UsedSet remembers the cards already answered, so that a callback replayed
// (a double tap, or a modified client resending old data) runs nothing. The
// runtime persists it (Badger); entries may be pruned after their until
// time, when Verify refuses the data as expired anyway.
type UsedSet interface {
	// Use marks key used until until, and reports whether it was unused
	// before. It must be atomic: of two concurrent calls for one key, one
	// gets true.
	Use(ctx context.Context, key string, until time.Time) (fresh bool, err error)
}

// Signer signs and verifies card callback data under a MAC key. The key is
// the caller's (32 bytes or more from crypto/rand, kept with Silas's other
// keys); rotating it invalidates the buttons of cards already sent.
type Signer struct {
	key []byte
}

// NewSigner returns a Signer for key, which it copies.
func NewSigner(key []byte) (*Signer, error) {
	if len(key) < minKeyLen {
		return nil, fmt.Errorf("%w (got %d)", ErrKeyTooShort, len(key))
	}
	return &Signer{key: append([]byte(nil), key...)}, nil
}

// Sign encodes d as callback data for a card sent to chatID. It fails with
// ErrCallbackTooLong when d does not fit in 64 bytes.
func (s *Signer) Sign(chatID int64, d CallbackData) (string, error) {
	switch {
	case d.RequestID == "" || !utf8.ValidString(d.RequestID):
		return "", fmt.Errorf("%w: a card needs a request id", ErrInvalidMessage)
	case d.Verdict == "" || len(d.Verdict) > math.MaxUint8 || !utf8.ValidString(d.Verdict):
		return "", fmt.Errorf("%w: a card button needs a verdict of 1-255 bytes", ErrInvalidMessage)
	case d.Expires.Unix() <= 0 || d.Expires.Unix() > math.MaxUint32:
		return "", fmt.Errorf("%w: a card needs an expiry (got %v)", ErrInvalidMessage, d.Expires)
	}
	kind, id := byte(cbKindRaw), []byte(d.RequestID)
	if u, err := uuid.Parse(d.RequestID); err == nil && u.String() == d.RequestID {
		kind, id = cbKindUUID, u[:]
	}
	raw := make([]byte, 0, cbMaxRaw)
	raw = append(raw, cbVersion<<4|kind)
	raw = binary.BigEndian.AppendUint32(raw, uint32(d.Expires.Unix()))
	raw = append(raw, byte(len(d.Verdict)))
	raw = append(raw, d.Verdict...)
	raw = append(raw, id...)
	if len(raw)+cbTagLen > cbMaxRaw {
		return "", fmt.Errorf("%w: %d bytes of request id and verdict, room for %d", ErrCallbackTooLong,
			len(id)+len(d.Verdict), cbMaxRaw-cbTagLen-cbHeaderLen)
	}
	raw = append(raw, s.tag(chatID, raw)...)
	return base64.RawURLEncoding.EncodeToString(raw), nil
}

// Verify checks callback data tapped in chatID at now and returns what it
// carries, or ErrCallbackForged (not signed by this key for this chat, or
// malformed), ErrCallbackExpired, or ErrCallbackReplayed (the card's
// request was answered already, according to used). Only authentic,
// unexpired data is marked in used, so forged taps cannot use up a card.
// One answer per request id: the first verified tap wins, whichever button.
func (s *Signer) Verify(ctx context.Context, chatID int64, data string, now time.Time, used UsedSet) (CallbackData, error) {
	if used == nil {
		return CallbackData{}, errors.New("telegram: Verify needs a UsedSet to refuse replays")
	}
	if len(data) > MaxCallbackData {
		return CallbackData{}, ErrCallbackForged
	}
	raw, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil || len(raw) < cbHeaderLen+1+cbTagLen {
		return CallbackData{}, ErrCallbackForged
	}
	body, tag := raw[:len(raw)-cbTagLen], raw[len(raw)-cbTagLen:]
	if !hmac.Equal(tag, s.tag(chatID, body)) {
		return CallbackData{}, ErrCallbackForged
	}
	d, ok := decodeCallback(body)
	if !ok {
		return CallbackData{}, ErrCallbackForged
	}
	if now.After(d.Expires) {
		return d, ErrCallbackExpired
	}
	fresh, err := used.Use(ctx, cbUsedKey+d.RequestID, d.Expires)
	if err != nil {
		return d, fmt.Errorf("telegram: record card answer: %w", err)
	}
	if !fresh {
		return d, ErrCallbackReplayed
	}
	return d, nil
}

// decodeCallback parses authenticated callback data (without its tag).
func decodeCallback(body []byte) (CallbackData, bool) {
	if body[0]>>4 != cbVersion {
		return CallbackData{}, false
	}
	kind := body[0] & 0x0f
	exp := binary.BigEndian.Uint32(body[1:5])
	n := int(body[5])
	rest := body[cbHeaderLen:]
	if n == 0 || n > len(rest) {
		return CallbackData{}, false
	}
	verdict, id := string(rest[:n]), rest[n:]
	d := CallbackData{Verdict: verdict, Expires: time.Unix(int64(exp), 0)}
	switch kind {
	case cbKindUUID:
		u, err := uuid.FromBytes(id)
		if err != nil {
			return CallbackData{}, false
		}
		d.RequestID = u.String()
	case cbKindRaw:
		if len(id) == 0 || !utf8.Valid(id) {
			return CallbackData{}, false
		}
		d.RequestID = string(id)
	default:
		return CallbackData{}, false
	}
	if !utf8.ValidString(verdict) {
		return CallbackData{}, false
	}
	return d, true
}

func (s *Signer) tag(chatID int64, body []byte) []byte {
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(cbDomain))
	var chat [8]byte
	binary.BigEndian.PutUint64(chat[:], uint64(chatID))
	mac.Write(chat[:])
	mac.Write(body)
	return mac.Sum(nil)[:cbTagLen]
}
