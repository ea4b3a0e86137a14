package main

import (
	"fmt"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/notify"
)

// pushNotifier loads (the first time: creates) the VAPID key pair in the
// keystore, keeps its public key for the app (GET /push/key) and returns
// the Web Push sender for the actors.
func (d *daemon) pushNotifier(log zerolog.Logger) (actors.Notifier, error) {
	v, created, err := notify.EnsureVAPID(d.in.keystore)
	if err != nil {
		return nil, err
	}
	if created {
		log.Info().Msg("created the Web Push (VAPID) key in the keys directory")
	}
	p, err := notify.NewPusher(notify.Options{DB: d.in.db, VAPID: v, Log: log})
	if err != nil {
		return nil, fmt.Errorf("web push: %w", err)
	}
	d.pushKey = v.Public
	return p, nil
}
