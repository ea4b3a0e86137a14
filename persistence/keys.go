package persistence

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Key layout. Every key Silas writes to Badger is built in this file; no
// other file concatenates key bytes. Each store owns one prefix that ends in
// '/', and no prefix is a prefix of another, so stores never overlap.
//
// Identifiers (scope, message id, memory id, consumer, domain, nonce, term)
// are raw UTF-8 and may contain '/', so a variable-length identifier that is
// followed by more key bytes is terminated by a 0x00 byte (written "\0"
// below); identifiers containing 0x00 are rejected by validID. This keeps the
// prefix of one scope from ever matching another scope ("a" vs "a/b").
// Integers are fixed-width big-endian so byte order equals numeric order.
//
//	meta/version                    schema version, uint32 BE
//	meta/mig/<ver:4 BE>             applied migration record (codec v1, JSON)
//	meta/audit_head                 audit chain head: seq:8 BE + hash:32 raw
//	meta/probe                      readiness probe: unix nanos of the last probe, int64 BE; Badger TTL = probeTTL (probe.go)
//	seq/queue                       Badger Sequence for queue FIFO numbers
//	seq/outbox                      Badger Sequence for outbox numbers
//
//	c/<scope>\0<seq:8 BE>           chronicle item (codec v1, ContextItem JSON); seq starts at 1, gap-free
//	cs/<scope>                      chronicle scope registry (empty value)
//	s/<scope>                       scope snapshot (codec v1, raw bytes)
//	ss/<sha256(token):32 raw>       session record (codec v1, JSON); Badger TTL = ExpiresAt
//
//	a/<seq:8 BE>                    audit entry: 0x01 + canonical encoding + sha256:32 raw (see audit_encoding.go)
//
//	q/<scope>\0<qseq:8 BE>          queued or leased inbound message (codec v1, QueueRecord JSON); FIFO per scope
//	qi/<scope>\0<message_id>        index message id -> qseq:8 BE; present while queued, leased or dead-lettered
//	qx/<scope>\0<qseq:8 BE>         dead letter (codec v1, DeadLetter JSON)
//	qp/<scope>\0<message_id>        acked marker (empty value); Badger TTL = Options.ProcessedTTL
//	p/<consumer>\0<message_id>      processed marker (empty value); Badger TTL = Options.ProcessedTTL
//
//	o/<scope>\0<oseq:8 BE>          outbox record awaiting delivery (codec v1, OutboxRecord JSON)
//	oi/<scope>\0<id>                index outbox id -> oseq:8 BE
//
//	n/<domain>\0<nonce>             used nonce: expiry unix nanos, int64 BE; Badger TTL = ttl
//
//	mem/<scope>\0<memory_id>        memory item (codec v1, MemoryItem JSON)
//	mi/<scope>\0<term>\0<newest:8 BE><memory_id>  posting (15 bytes: 1 if low_reingestion else 0, created unix nanos 8 BE, term frequency 2 BE, item length in tokens 4 BE); newest = ^created, offset as in mt/, so that a term's postings run newest first
//	mdf/<scope>\0<term>             document frequency for BM25: indexed items holding term (4 BE); absent = 0
//	mst/<scope>\0                   BM25 totals: indexed items (8 BE), their total length in tokens (8 BE); absent = 0
//	mt/<scope>\0<created:8 BE><memory_id>  recency index (empty value); created = unix nanos, offset to sort unsigned
//	mv/<scope>\0<memory_id>         a memory item's embedding (memory_vectors.go): 0x01, sha256(embedded text)[:8], dims (2 BE), dims float32 (LE bits); derived, rebuilt by embedding again
//	mvp/<scope>\0<memory_id>        a memory item waiting for its embedding (empty value); written in the item's transaction, deleted when the vector is stored
//	meta/vectors                    the embedding model every mv/ vector was made with (raw UTF-8, embed.Embedder.Model)
//
//	ut/<scope>                      usage total (codec v1, UsageRecord JSON)
//	ud/<scope>\0<YYYY-MM-DD>        usage of one UTC day (codec v1, UsageRecord JSON)
//
//	ps/<scope>                      persona state (codec v1, PersonaState JSON)
//	pe/<scope>\0<pseq:8 BE>         persona event (codec v1, PersonaEvent JSON); append-only, pseq starts at 1, gap-free per scope
//	pi/<event_id>                   index persona event id -> <scope>\0<pseq:8 BE> (raw); event ids are unique across scopes
//
//	wi/<scope>\0<work_item_id>      active work item with its runtime state (codec v1, WorkItem JSON); deleted when it finishes
//	wt/<scope>\0<goal_id>           a goal's standing approval token as last verified (codec v1, ApprovalToken JSON); Badger TTL = its expires_at
//	gl/<scope>\0<goal_id>           a scheduled goal: the approved goal, its source, paused or not (codec v1, Goal JSON; goals.go)
//
//	dv/<device_id>                  owner device key (codec v1, Device JSON); kept after revocation (devices.go)
//	dc/<sha256(code):32 raw>        pending device enrolment code (codec v1, EnrolmentCode JSON); Badger TTL = expiry
//	sr/<ref_id>                     secure-input request, pending or fulfilled (codec v1, SecureInputRequest JSON); never the value
//	ov/last                         owner's last PWA visit: unix nanos, int64 BE (visits.go)
//	ov/prev                         the visit before ov/last: unix nanos, int64 BE (visits.go); absent until a second visit
//	pu/<sha256(endpoint):32 raw>    owner's Web Push subscription: endpoint and the browser's public keys (codec v1, PushSubscription JSON; push.go)
//	wac/<credential_id raw>         owner's WebAuthn credential: public key record, sign count, never a secret (codec v1, WebAuthnCredential JSON; webauthn.go)
//	wax/<purpose>\0<ref>            WebAuthn ceremony in progress (registration, or the assertion of one card's approval) (codec v1, WebAuthnCeremony JSON); Badger TTL = its expiry
//
//	sk/<skill_name>                 installed skill: approved files, their hashes, skill hash and approval (codec v1, InstalledSkill JSON; skills.go)
//	cn/<connection_id>              service connection record, never a credential (codec v1, messages.Connection JSON; connections.go)
//	skr/<request_id>                skill_install card waiting for the owner (codec v1, SkillRequest JSON; skill_requests.go); deleted when it ends
//
//	tg/offset                       Telegram: update_id of the last update handled, int64 BE (telegram.go)
//	tg/pairing                      Telegram: pending pairing code, its hash and expiry, never the code (codec v1, TelegramPairing JSON)
//	tg/owner                        Telegram: the owner's paired chat id, int64 BE
//	tgs/<update_id:8 BE>            Telegram: update handled (empty value); Badger TTL = the caller's
//	tgu/<key>                       Telegram: card answered (callback request id): expiry unix nanos, int64 BE; Badger TTL = until
//	tgc/<user_id:8 BE>              Telegram: a customer's session token (codec v1, TelegramCustomer JSON); Badger TTL = its expiry
//	tgw/<user_id:8 BE><message_id>  Telegram: a customer message not yet answered (empty value); Badger TTL = the caller's
const (
	pfxMeta           = "meta/"
	keySchemaVersion  = "meta/version"
	pfxMigration      = "meta/mig/"
	keyAuditHead      = "meta/audit_head"
	keyProbe          = "meta/probe"
	keySeqQueue       = "seq/queue"
	keySeqOutbox      = "seq/outbox"
	pfxChronicle      = "c/"
	pfxChronicleScope = "cs/"
	pfxSnapshot       = "s/"
	pfxSession        = "ss/"
	pfxAudit          = "a/"
	pfxQueue          = "q/"
	pfxQueueIndex     = "qi/"
	pfxDeadLetter     = "qx/"
	pfxAcked          = "qp/"
	pfxProcessed      = "p/"
	pfxOutbox         = "o/"
	pfxOutboxIndex    = "oi/"
	pfxNonce          = "n/"
	pfxMemory         = "mem/"
	pfxPosting        = "mi/"
	pfxMemoryTime     = "mt/"
	pfxDocFreq        = "mdf/"
	pfxMemStats       = "mst/"
	pfxVector         = "mv/"
	pfxVectorPending  = "mvp/"
	keyVectorModel    = "meta/vectors"
	pfxUsageTotal     = "ut/"
	pfxUsageDay       = "ud/"
	pfxPersonaState   = "ps/"
	pfxPersonaEvent   = "pe/"
	pfxPersonaIndex   = "pi/"
	pfxWorkItem       = "wi/"
	pfxStandingToken  = "wt/"
	pfxGoal           = "gl/"
)

// Owner devices, secure input and presence (see the layout above).
const (
	pfxDevice      = "dv/"
	pfxDeviceCode  = "dc/"
	pfxSecureInput = "sr/"
	keyOwnerVisit  = "ov/last"
	keyOwnerPrev   = "ov/prev"
)

// The owner's Web Push subscriptions (see the layout above).
const pfxPushSubscription = "pu/"

// The owner's WebAuthn credentials and ceremonies (see the layout above).
const (
	pfxWebAuthnCredential = "wac/"
	pfxWebAuthnCeremony   = "wax/"
)

// Installed skills and pending install requests (see the layout above).
const (
	pfxSkill        = "sk/"
	pfxSkillRequest = "skr/"
)

// Service connections (see the layout above).
const pfxConnection = "cn/"

// The Telegram channel (see the layout above).
const (
	keyTelegramOffset   = "tg/offset"
	keyTelegramPairing  = "tg/pairing"
	keyTelegramOwner    = "tg/owner"
	pfxTelegramSeen     = "tgs/"
	pfxTelegramUsed     = "tgu/"
	pfxTelegramCustomer = "tgc/"
	pfxTelegramAwaiting = "tgw/"
)

// keyInt builds pfx + n (8 bytes BE, two's complement for negative ids).
func keyInt(pfx string, n int64) []byte {
	k := make([]byte, 0, len(pfx)+8)
	k = append(k, pfx...)
	return binary.BigEndian.AppendUint64(k, uint64(n))
}

// telegramAwaitingKey builds tgw/<user_id:8 BE><message_id>.
func telegramAwaitingKey(userID int64, messageID string) []byte {
	return append(keyInt(pfxTelegramAwaiting, userID), messageID...)
}

// maxIDLen bounds every identifier that goes into a key; Badger keys are
// limited to 64 KiB and long keys slow every lookup.
const maxIDLen = 1024

// validID reports whether s can be used as a key component.
func validID(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%s is empty: %w", what, ErrInvalid)
	case len(s) > maxIDLen:
		return fmt.Errorf("%s is %d bytes, limit %d: %w", what, len(s), maxIDLen, ErrInvalid)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("%s contains a NUL byte: %w", what, ErrInvalid)
	}
	return nil
}

// key1 builds pfx + a.
func key1(pfx, a string) []byte {
	k := make([]byte, 0, len(pfx)+len(a))
	k = append(k, pfx...)
	return append(k, a...)
}

// key2 builds pfx + a + \0 + b.
func key2(pfx, a, b string) []byte {
	k := make([]byte, 0, len(pfx)+len(a)+1+len(b))
	k = append(k, pfx...)
	k = append(k, a...)
	k = append(k, 0)
	return append(k, b...)
}

// scopePrefix builds pfx + scope + \0, the prefix of every key of one scope
// in a store whose keys are pfx/<scope>\0....
func scopePrefix(pfx, scope string) []byte { return key2(pfx, scope, "") }

// keySeq builds pfx + a + \0 + seq (8 bytes BE).
func keySeq(pfx, a string, seq uint64) []byte {
	k := make([]byte, 0, len(pfx)+len(a)+9)
	k = append(k, pfx...)
	k = append(k, a...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint64(k, seq)
}

// seqSuffix returns the trailing 8-byte big-endian number of a key.
func seqSuffix(k []byte) (uint64, error) {
	if len(k) < 8 {
		return 0, fmt.Errorf("key %q too short for a sequence: %w", k, ErrCorrupt)
	}
	return binary.BigEndian.Uint64(k[len(k)-8:]), nil
}

func chronicleKey(scope string, seq uint64) []byte { return keySeq(pfxChronicle, scope, seq) }

func personaEventKey(scope string, seq uint64) []byte { return keySeq(pfxPersonaEvent, scope, seq) }

func auditKey(seq uint64) []byte {
	k := make([]byte, 0, len(pfxAudit)+8)
	k = append(k, pfxAudit...)
	return binary.BigEndian.AppendUint64(k, seq)
}

func migrationKey(version uint32) []byte {
	k := make([]byte, 0, len(pfxMigration)+4)
	k = append(k, pfxMigration...)
	return binary.BigEndian.AppendUint32(k, version)
}

// postingKey orders a term's postings newest first: the created time
// (offset as in memoryTimeKey) is inverted, so that Search can read a
// term's newest postings and stop.
func postingKey(scope, term string, createdNanos int64, memoryID string) []byte {
	k := postingPrefix(scope, term)
	k = binary.BigEndian.AppendUint64(k, ^(uint64(createdNanos) ^ (1 << 63)))
	return append(k, memoryID...)
}

// postingPrefix is the prefix of every posting of term in scope.
func postingPrefix(scope, term string) []byte {
	k := make([]byte, 0, len(pfxPosting)+len(scope)+len(term)+2+8+36)
	k = append(k, pfxPosting...)
	k = append(k, scope...)
	k = append(k, 0)
	k = append(k, term...)
	return append(k, 0)
}

func docFreqKey(scope, term string) []byte { return key2(pfxDocFreq, scope, term) }

// memoryTimeKey orders memories by creation time; the int64 nanos are offset
// by 1<<63 so that times before 1970 still sort before later ones.
func memoryTimeKey(scope string, createdNanos int64, memoryID string) []byte {
	k := make([]byte, 0, len(pfxMemoryTime)+len(scope)+9+len(memoryID))
	k = append(k, pfxMemoryTime...)
	k = append(k, scope...)
	k = append(k, 0)
	k = binary.BigEndian.AppendUint64(k, uint64(createdNanos)^(1<<63))
	return append(k, memoryID...)
}

// prefixEnd returns the smallest key greater than every key with prefix p,
// for reverse iteration; p must not be all 0xFF (no prefix here is).
func prefixEnd(p []byte) []byte {
	end := make([]byte, len(p), len(p)+8)
	copy(end, p)
	// Every key under p is p + suffix; p + 0xFF*8 sorts after any 8-byte
	// sequence suffix, and seek in reverse lands on the largest key <= it.
	return append(end, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF)
}
