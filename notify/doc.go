// Package notify tells the owner that Silas waits for them while no app is
// open: Web Push (RFC 8030) with VAPID (RFC 8292) to the browsers the
// owner subscribed, the payload encrypted to each subscription (RFC 8291)
// by a maintained library (github.com/SherClockHolmes/webpush-go).
//
// A notification says only that a card waits and its short title; the
// card itself (body, plan, budget) stays on the server and is shown when
// the app opens.
package notify
