package main

import (
	"fmt"

	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/ownerapi"
	"github.com/silas-ai/silas/runtime/session"
)

// ownerRoutes is the owner HTTP API (package ownerapi) on this daemon's
// database, devices, vault and actors; its Routes are the web channel's
// extra HTTP routes, and its gate guards the Telegram endpoints too.
func (d *daemon) ownerRoutes(cfg *config.Config, sessions *session.Minter) (*ownerapi.API, error) {
	api, err := ownerapi.New(ownerapi.Deps{
		DB: d.in.db, OwnerToken: d.in.ownerToken, OwnerID: cfg.OwnerID, Sessions: sessions,
		Devices: d.devices, Vault: d.secrets, Actors: d.sys, SkillsDir: cfg.SkillsDir, Goals: d.sys, PushKey: d.pushKey,
	})
	if err != nil {
		return nil, fmt.Errorf("owner HTTP API: %w", err)
	}
	return api, nil
}

// ownerOrDevice accepts a chat message signature by the owner key or by an
// active owner device: the registry is the only place device keys are
// trusted. Approval tokens are verified with the owner key alone (see
// runtime/approval).
func ownerOrDevice(owner func(msg, sig []byte) (string, bool), reg *ownerapi.DeviceRegistry) func(msg, sig []byte) (string, bool) {
	return func(msg, sig []byte) (string, bool) {
		if id, ok := owner(msg, sig); ok {
			return id, true
		}
		return reg.Verify(msg, sig)
	}
}
