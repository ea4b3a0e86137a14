package keys

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
)

// The owner key's keystore name and the version of its encoding.
const (
	ownerKeyName  = "owner.key"
	formatVersion = 1
)

type ownerFile struct {
	Version   int    `json:"version"`
	Algorithm string `json:"algorithm"`
	Seed      []byte `json:"seed"`
}

func loadOwner(ks Keystore) (ed25519.PrivateKey, error) {
	data, err := ks.Get(ownerKeyName)
	if err != nil {
		return nil, fmt.Errorf("load owner key: %w", err)
	}
	var f ownerFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, ownerKeyName, err)
	}
	if f.Version != formatVersion || f.Algorithm != "ed25519" || len(f.Seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("%w: %s: want version %d ed25519 with a %d-byte seed",
			ErrCorrupt, ownerKeyName, formatVersion, ed25519.SeedSize)
	}
	return ed25519.NewKeyFromSeed(f.Seed), nil
}

func storeOwner(ks Keystore, priv ed25519.PrivateKey) error {
	data, err := json.Marshal(ownerFile{Version: formatVersion, Algorithm: "ed25519", Seed: priv.Seed()})
	if err != nil {
		return fmt.Errorf("encode owner key: %w", err)
	}
	defer clear(data)
	if err := ks.Put(ownerKeyName, data); err != nil {
		return fmt.Errorf("store owner key: %w", err)
	}
	return nil
}
