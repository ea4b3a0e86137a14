package persistence

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWebAuthnCredentials(t *testing.T) {
	for _, onDisk := range []bool{true, false} {
		h := newHarness(t, onDisk)
		ctx := t.Context()
		s := h.db.WebAuthn()
		now := time.Now().UTC()
		a := WebAuthnCredential{ID: []byte{1, 0, 2}, RPID: "localhost", Name: "yubikey", AddedAt: now, Record: []byte(`{"n":1}`)}
		b := WebAuthnCredential{ID: []byte("b"), RPID: "localhost", Name: "phone", AddedAt: now.Add(-time.Hour), Record: []byte(`{}`)}
		for _, c := range []WebAuthnCredential{a, b} {
			if err := s.AddCredential(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.AddCredential(ctx, a); !errors.Is(err, ErrCredentialExists) {
			t.Fatalf("a second registration of one id: %v", err)
		}
		if err := s.AddCredential(ctx, WebAuthnCredential{}); !errors.Is(err, ErrInvalid) {
			t.Fatalf("an empty id: %v", err)
		}
		if onDisk {
			h.reopen()
			s = h.db.WebAuthn()
		}
		list, err := s.Credentials(ctx)
		if err != nil || len(list) != 2 || list[0].Name != "phone" || list[1].Name != "yubikey" {
			t.Fatalf("Credentials = %+v, %v; want oldest first", list, err)
		}
		if err := s.UseCredential(ctx, a.ID, []byte(`{"n":2}`), now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		list, _ = s.Credentials(ctx)
		if string(list[1].Record) != `{"n":2}` || list[1].LastUsedAt == nil {
			t.Errorf("after use: %+v", list[1])
		}
		got, err := s.RemoveCredential(ctx, a.ID)
		if err != nil || got.Name != "yubikey" {
			t.Fatalf("remove: %+v %v", got, err)
		}
		if err := s.UseCredential(ctx, a.ID, nil, now); !errors.Is(err, ErrNotFound) {
			t.Errorf("using a removed key: %v, want ErrNotFound", err)
		}
		if _, err := s.RemoveCredential(ctx, a.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("removing it again: %v, want ErrNotFound", err)
		}
	}
}

// TestWebAuthnCeremonyIsTakenOnce: a challenge answers one answer; a new
// one for the same card replaces the old; an expired one is gone.
func TestWebAuthnCeremonyIsTakenOnce(t *testing.T) {
	h := newHarness(t, false)
	ctx := t.Context()
	s := h.db.WebAuthn()
	now := time.Now()
	put := func(ref, session string, expires time.Time) {
		t.Helper()
		if err := s.PutCeremony(ctx, CeremonyApprove, ref, WebAuthnCeremony{Session: []byte(session), ExpiresAt: expires}, now); err != nil {
			t.Fatal(err)
		}
	}
	put("req-1", "first", now.Add(time.Minute))
	put("req-1", "second", now.Add(time.Minute))
	got, err := s.TakeCeremony(ctx, CeremonyApprove, "req-1", now)
	if err != nil || string(got.Session) != "second" {
		t.Fatalf("take = %q, %v; want the latest", got.Session, err)
	}
	if _, err := s.TakeCeremony(ctx, CeremonyApprove, "req-1", now); !errors.Is(err, ErrNotFound) {
		t.Errorf("second take: %v, want ErrNotFound", err)
	}
	put("req-2", "x", now.Add(time.Minute))
	if _, err := s.TakeCeremony(ctx, CeremonyRegister, "req-2", now); !errors.Is(err, ErrNotFound) {
		t.Errorf("another purpose's ceremony was taken: %v", err)
	}
	if _, err := s.TakeCeremony(ctx, CeremonyApprove, "req-2", now.Add(2*time.Minute)); !errors.Is(err, ErrNotFound) {
		t.Errorf("an expired ceremony: %v, want ErrNotFound", err)
	}
	if err := s.PutCeremony(ctx, CeremonyApprove, "req-3", WebAuthnCeremony{ExpiresAt: now}, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("an already expired ceremony was stored: %v", err)
	}
	if err := s.PutCeremony(ctx, CeremonyApprove, "", WebAuthnCeremony{ExpiresAt: now.Add(time.Minute)}, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("an empty ref was accepted: %v", err)
	}
}

// TestWebAuthnKeyPrefixesAreDisjoint: the WebAuthn prefixes overlap no
// other store's.
func TestWebAuthnKeyPrefixesAreDisjoint(t *testing.T) {
	others := []string{pfxMeta, keySchemaVersion, pfxMigration, keyAuditHead, keyProbe, keySeqQueue, keySeqOutbox, pfxChronicle,
		pfxChronicleScope, pfxSnapshot, pfxSession, pfxAudit, pfxQueue, pfxQueueIndex, pfxDeadLetter, pfxAcked, pfxProcessed,
		pfxOutbox, pfxOutboxIndex, pfxNonce, pfxMemory, pfxPosting, pfxMemoryTime, pfxDocFreq, pfxMemStats, pfxUsageTotal,
		pfxUsageDay, pfxPersonaState, pfxPersonaEvent, pfxPersonaIndex, pfxWorkItem, pfxStandingToken, pfxDevice,
		pfxDeviceCode, pfxSecureInput, keyOwnerVisit, pfxSkill, pfxSkillRequest, pfxConnection, keyTelegramOffset,
		keyTelegramPairing, keyTelegramOwner, pfxTelegramSeen, pfxTelegramUsed, pfxTelegramCustomer, pfxTelegramAwaiting}
	for _, mine := range []string{pfxWebAuthnCredential, pfxWebAuthnCeremony} {
		for _, o := range append(others, pfxWebAuthnCredential, pfxWebAuthnCeremony) {
			if o != mine && (strings.HasPrefix(o, mine) || strings.HasPrefix(mine, o)) {
				t.Errorf("%q and %q overlap", mine, o)
			}
		}
	}
}
