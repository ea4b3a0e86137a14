// Package keys is the Key Manager of spec 5.8: the owner's Ed25519 signing
// key, key IDs (KeyID), the canonical bytes a chat message is signed over
// (spec 3.1, MessageBytes), and the Keystore that holds the daemon's
// secrets.
//
// Owner devices (browsers, phones whose signed chat messages count as the
// owner's) are not kept here: runtime/devices holds their pure logic
// (enrolment codes, key parsing, the verifying Set) and persistence.Devices
// stores them, so there is one place a device is enrolled, listed, revoked
// and verified. VerifyOwnerSignature accepts the owner key only. That is
// what approval tokens need: spec 5.11 step 7 has the daemon sign every
// token with the owner key after the owner approves, so no token is ever
// signed by a device, and a device key cannot mint or alter one. The
// daemon combines this check with the device Set for chat messages alone
// (owner taint, spec 5.12).
//
// Secrets live in a Keystore. The implementation here is FileKeystore: one
// owner-only (0600) file per name under <data_dir>/keys (a 0700 directory),
// written atomically. The OS keyring is not implemented (none answers on the
// servers Silas targets); Keystore is the seam where a keyring-backed store
// would plug in. Private keys never leave this package except as signatures:
// they are not logged, returned or marshalled.
//
// The owner key is stored as versioned JSON:
//
//	owner.key  {"version":1,"algorithm":"ed25519","seed":"<base64>"}
//
// Owner device keys are not kept here: the daemon's device registry (Badger,
// runtime/devices) is their only home.
package keys
