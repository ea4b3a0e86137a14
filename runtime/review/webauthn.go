package review

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
)

// The WebAuthn ceremonies behind the irreversible rung (spec 0.5.2: tap,
// slide, then biometric or strong local authentication), on
// github.com/go-webauthn/webauthn. The owner registers a credential (a
// security key, or the device's platform authenticator) from the app;
// each approval of an irreversible card then carries an assertion over a
// challenge the server issued for that card alone. Sessions and
// credentials are values here; the caller keeps them (persistence).

// CeremonyTimeout is how long a registration or an assertion may take from
// its options to its answer; the server refuses a later answer.
const CeremonyTimeout = 5 * time.Minute

const rpName = "Silas"

// RelyingParty is where a ceremony runs: ID is the host name the app was
// opened at (the WebAuthn RP ID) and Origin the page's origin
// (scheme://host[:port]).
type RelyingParty struct {
	ID     string `json:"id"`
	Origin string `json:"origin"`
}

// RelyingPartyFor derives the relying party of an HTTP request from its
// Host and Origin headers. The web channel answers only the hosts that
// channels.web.host and channels.web.allowed_hosts allow (421 otherwise),
// so the RP ID is always one of those; the Origin must name that same host
// (the app's own page), and the host must be a name: browsers refuse
// WebAuthn on an IP address.
func RelyingPartyFor(host, origin string) (RelyingParty, error) {
	if origin == "" {
		return RelyingParty{}, fmt.Errorf("%w: the request has no Origin header; use the Silas app", ErrRelyingParty)
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.User != nil {
		return RelyingParty{}, fmt.Errorf("%w: Origin %q is not an http(s) origin", ErrRelyingParty, origin)
	}
	if !strings.EqualFold(u.Host, host) {
		return RelyingParty{}, fmt.Errorf("%w: Origin %q is not this server's host %q; open the app from Silas itself", ErrRelyingParty, origin, host)
	}
	name := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if net.ParseIP(name) != nil {
		return RelyingParty{}, fmt.Errorf("%w: browsers allow security keys only on a host name, not on the IP address %s; open the app at http://localhost:%s (or the name in channels.web.allowed_hosts)",
			ErrRelyingParty, name, portOr(u.Port(), "<port>"))
	}
	if err := protocol.ValidateRPID(name); err != nil {
		return RelyingParty{}, fmt.Errorf("%w: %q: %v", ErrRelyingParty, name, err)
	}
	return RelyingParty{ID: name, Origin: strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)}, nil
}

func portOr(p, def string) string {
	if p == "" {
		return def
	}
	return p
}

// Credential is a registered credential as the caller stores it: the
// credential id, the RP ID it was registered for, the owner's label, and
// the library's credential record (public key, sign count, flags) as JSON.
type Credential struct {
	ID      []byte    `json:"id"`
	RPID    string    `json:"rp_id"`
	Name    string    `json:"name"`
	AddedAt time.Time `json:"added_at"`
	Record  []byte    `json:"record"`
}

// Session is what the server keeps between the options and the answer of
// one ceremony; opaque to the caller.
type Session []byte

// session is Session decoded.
type session struct {
	RP   RelyingParty         `json:"rp"`
	Data webauthn.SessionData `json:"data"`
}

// owner is the one WebAuthn user: the owner, with their credentials for
// one RP.
type owner struct {
	id    []byte
	name  string
	creds []webauthn.Credential
}

func (o *owner) WebAuthnID() []byte                         { return o.id }
func (o *owner) WebAuthnName() string                       { return o.name }
func (o *owner) WebAuthnDisplayName() string                { return "Silas owner (" + o.name + ")" }
func (o *owner) WebAuthnCredentials() []webauthn.Credential { return o.creds }

// newOwner decodes the credentials registered for rpID.
func newOwner(ownerID, rpID string, creds []Credential) (*owner, error) {
	h := sha256.Sum256([]byte("silas-owner:" + ownerID))
	o := &owner{id: h[:], name: ownerID}
	for _, c := range creds {
		if c.RPID != rpID {
			continue
		}
		var rec webauthn.Credential
		if err := json.Unmarshal(c.Record, &rec); err != nil {
			return nil, fmt.Errorf("decode security key %q: %w", c.Name, err)
		}
		o.creds = append(o.creds, rec)
	}
	return o, nil
}

func relyingParty(rp RelyingParty) (*webauthn.WebAuthn, error) {
	t := webauthn.TimeoutConfig{Enforce: true, Timeout: CeremonyTimeout, TimeoutUVD: CeremonyTimeout}
	w, err := webauthn.New(&webauthn.Config{
		RPID: rp.ID, RPDisplayName: rpName, RPOrigins: []string{rp.Origin},
		AttestationPreference: protocol.PreferNoAttestation,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementDiscouraged, UserVerification: protocol.VerificationRequired,
		},
		Timeouts: webauthn.TimeoutsConfig{Login: t, Registration: t},
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRelyingParty, err)
	}
	return w, nil
}

// BeginRegistration starts registering a credential for the owner at rp:
// it returns the options for navigator.credentials.create ({"publicKey":
// ...}, binary fields base64url) and the session to keep until
// FinishRegistration. The owner's credentials already registered at rp
// are excluded, so one authenticator is not registered twice.
func BeginRegistration(rp RelyingParty, ownerID string, existing []Credential) (options json.RawMessage, s Session, err error) {
	w, err := relyingParty(rp)
	if err != nil {
		return nil, nil, err
	}
	o, err := newOwner(ownerID, rp.ID, existing)
	if err != nil {
		return nil, nil, err
	}
	creation, data, err := w.BeginRegistration(o,
		webauthn.WithExclusions(webauthn.Credentials(o.creds).CredentialDescriptors()),
		webauthn.WithRegistrationOrigin(rp.Origin))
	if err != nil {
		return nil, nil, fmt.Errorf("begin security key registration: %w", err)
	}
	return encodeCeremony(rp, creation, data)
}

// FinishRegistration verifies response (the PublicKeyCredential of
// navigator.credentials.create, as JSON) against s and returns the
// credential to store under name. A response for another challenge,
// origin or RP, or one without user verification, is ErrCeremony.
func FinishRegistration(s Session, ownerID, name string, response []byte, now time.Time) (Credential, error) {
	sess, w, err := openSession(s)
	if err != nil {
		return Credential{}, err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(response)
	if err != nil {
		return Credential{}, fmt.Errorf("%w: the registration response: %s", ErrCeremony, describe(err))
	}
	o, err := newOwner(ownerID, sess.RP.ID, nil)
	if err != nil {
		return Credential{}, err
	}
	cred, err := w.CreateCredential(o, sess.Data, parsed)
	if err != nil {
		return Credential{}, fmt.Errorf("%w: %s", ErrCeremony, describe(err))
	}
	rec, err := json.Marshal(cred)
	if err != nil {
		return Credential{}, fmt.Errorf("encode the security key: %w", err)
	}
	return Credential{ID: cred.ID, RPID: sess.RP.ID, Name: name, AddedAt: now.UTC(), Record: rec}, nil
}

// BeginAssertion starts an assertion by one of the owner's credentials
// registered at rp: it returns the options for navigator.credentials.get
// ({"publicKey": ...}) with a fresh challenge, and the session the answer
// is verified against. With no credential at rp it is ErrNoCredential.
func BeginAssertion(rp RelyingParty, ownerID string, creds []Credential) (options json.RawMessage, s Session, err error) {
	w, err := relyingParty(rp)
	if err != nil {
		return nil, nil, err
	}
	o, err := newOwner(ownerID, rp.ID, creds)
	if err != nil {
		return nil, nil, err
	}
	if len(o.creds) == 0 {
		return nil, nil, fmt.Errorf("%w for %s: register one in the Silas app under Device > Security keys (opened at this same address)", ErrNoCredential, rp.ID)
	}
	assertion, data, err := w.BeginLogin(o, webauthn.WithLoginOrigin(rp.Origin),
		webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return nil, nil, fmt.Errorf("begin security key check: %w", err)
	}
	return encodeCeremony(rp, assertion, data)
}

// VerifyAssertion checks response (the PublicKeyCredential of
// navigator.credentials.get, as JSON) against s and the owner's
// credentials, and returns the credential that signed, its sign count
// updated for the caller to store. A forged signature, a challenge of
// another session, another origin or RP, a credential the owner did not
// register, a missing user verification or a sign count that went
// backwards (a cloned key) is ErrCeremony.
func VerifyAssertion(s Session, ownerID string, creds []Credential, response []byte) (Credential, error) {
	sess, w, err := openSession(s)
	if err != nil {
		return Credential{}, err
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return Credential{}, fmt.Errorf("%w: the assertion: %s", ErrCeremony, describe(err))
	}
	o, err := newOwner(ownerID, sess.RP.ID, creds)
	if err != nil {
		return Credential{}, err
	}
	if len(o.creds) == 0 {
		return Credential{}, fmt.Errorf("%w for %s", ErrNoCredential, sess.RP.ID)
	}
	got, err := w.ValidateLogin(o, sess.Data, parsed)
	if err != nil {
		return Credential{}, fmt.Errorf("%w: %s", ErrCeremony, describe(err))
	}
	if got.Authenticator.CloneWarning {
		return Credential{}, fmt.Errorf("%w: the key's signature counter went backwards, so it may have been cloned; remove it and register a new one", ErrCeremony)
	}
	rec, err := json.Marshal(got)
	if err != nil {
		return Credential{}, fmt.Errorf("encode the security key: %w", err)
	}
	for _, c := range creds {
		if c.RPID == sess.RP.ID && string(c.ID) == string(got.ID) {
			c.Record = rec
			return c, nil
		}
	}
	return Credential{}, fmt.Errorf("%w: the key that signed is not registered", ErrCeremony)
}

func encodeCeremony(rp RelyingParty, options any, data *webauthn.SessionData) (json.RawMessage, Session, error) {
	opts, err := json.Marshal(options)
	if err != nil {
		return nil, nil, fmt.Errorf("encode the ceremony options: %w", err)
	}
	s, err := json.Marshal(session{RP: rp, Data: *data})
	if err != nil {
		return nil, nil, fmt.Errorf("encode the ceremony session: %w", err)
	}
	return opts, s, nil
}

func openSession(s Session) (*session, *webauthn.WebAuthn, error) {
	var sess session
	if err := json.Unmarshal(s, &sess); err != nil {
		return nil, nil, fmt.Errorf("%w: the ceremony session is unreadable: %v", ErrCeremony, err)
	}
	w, err := relyingParty(sess.RP)
	if err != nil {
		return nil, nil, err
	}
	return &sess, w, nil
}

// describe returns the library's detail of a ceremony error, which says
// what failed without echoing the response.
func describe(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		return pe.Details
	}
	return err.Error()
}
