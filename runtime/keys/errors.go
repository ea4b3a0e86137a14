package keys

import "errors"

// Sentinel errors; each is wrapped with context. Test with errors.Is.
var (
	// ErrNotFound is returned by Keystore.Get when nothing is stored under
	// the name. Callers that can create the secret do so (EnsureOwnerKey);
	// others report that `silas init` has not been run.
	ErrNotFound = errors.New("keys: not found")

	// ErrInsecurePermissions means a key file or the keys directory can be
	// read by users other than its owner. The message names the chmod
	// command to run; the daemon refuses to start until the user runs it.
	ErrInsecurePermissions = errors.New("keys: insecure permissions")

	// ErrInvalidName means a keystore name is empty or contains characters
	// other than [a-z0-9._-]. This is a programming error.
	ErrInvalidName = errors.New("keys: invalid keystore name")

	// ErrCorrupt means stored key material could not be decoded. Nothing is
	// overwritten: the user restores the file from a backup, or moves it
	// aside and re-enrols (which invalidates earlier signatures).
	ErrCorrupt = errors.New("keys: corrupt key material")

	// ErrNoOwnerKey means no owner key exists yet; the user runs `silas init`.
	ErrNoOwnerKey = errors.New("keys: no owner key (run `silas init`)")

	// ErrInvalidMessage means a message's signed fields are malformed: the
	// timestamp is not RFC 3339 with a zone, the nonce is empty or too long,
	// or the text is not valid UTF-8. The message cannot carry a valid
	// signature; it is treated as unsigned.
	ErrInvalidMessage = errors.New("keys: invalid signed message fields")
)
