// Package telegram is Silas's Telegram channel (spec 8.3, issue 11). Its
// transport talks to the Bot API; its Bridge translates between Telegram
// and the wire protocol of package messages, exactly as the web channel
// translates WebSocket frames: one in-process session per chat through
// messages.Gateway, the owner's chat authenticated as the owner (receipts
// on), every other user a /chat customer whose session token is kept per
// Telegram user. The runtime (actors) owns every decision; this package
// moves bytes safely and in order. Sends use github.com/go-telegram/bot,
// whose base URL is configurable; getUpdates is a direct call (see Client).
//
// # The bridge (what cmd/silas wires)
//
//	b, _ := telegram.NewBridge(telegram.BridgeConfig{Client: c, Gateway: gw, OwnerToken: tok,
//		Store: store, Signer: signer, WebAppURL: url, ...})
//	_ = b.Start(ctx)                       // the owner's session, waiting customers
//	p, _ := telegram.NewPoller(telegram.PollerConfig{Client: c, Store: store, Seen: b, Handler: b.Handle})
//	go p.Run(ctx)                          // or NewWebhook with the same Store, Seen and Handler
//	...
//	_ = b.Stop(ctx)                        // after the poller: unconfirmed answers stay in the runtime
//
// b.Handle turns a message into a message frame with id "tg-<update_id>"
// and returns nil only once the runtime acknowledged (journaled) it; it
// verifies card buttons, answers them and hands the verdict to the runtime
// as approval_response, gate_response, ... frames. Server events become
// answers (split, escaped), typing indicators, cards (inline keyboards, or
// only a link to the web app for high-risk cards and secure input),
// status messages edited in place, and notices. The lower-level wiring
// below is what the bridge does with the transport.
//
// # Wiring (who calls what)
//
// At start, with channels.telegram.enabled:
//
//	c, err := telegram.NewClient(telegram.Config{Token: ..., APIURL: ...})
//	_, err = c.GetMe(ctx)                  // fail fast on a bad token (ErrUnauthorized)
//	out := telegram.NewOutbox(c, telegram.OutboxConfig{OnDelivered: ..., OnFailed: ...})
//	go out.Run(ctx)
//	signer, _ := telegram.NewSigner(cardKey) // 32+ bytes kept with the other keys
//	pairer := telegram.NewPairer(pairingStore, nil)
//
// Then one of the two receive modes, both with the same contract (handler
// returns nil once the update is journaled; only then is the offset saved
// and the update confirmed; Seen, answered from the journal, skips updates
// handled before a crash):
//
//	// long polling (default)
//	_ = c.DeleteWebhook(ctx, false)
//	p, _ := telegram.NewPoller(telegram.PollerConfig{Client: c, Store: offsets, Seen: journal, Handler: h})
//	go p.Run(ctx)
//
//	// webhook (channels.telegram.webhook_url)
//	secret, _ := telegram.GenerateWebhookSecret()
//	_ = c.SetWebhook(ctx, webhookURL, secret)
//	wh, _ := telegram.NewWebhook(telegram.WebhookConfig{Secret: secret, Store: offsets, Seen: journal, Handler: h})
//	// mount wh at the webhook path (fasthttpadaptor for the fasthttp server)
//
// The handler h receives an Update:
//   - KindMessage: u.Command() == ("start", code) from a chat with no owner
//     bound: pairer.Redeem(ctx, code, u.ChatID). Otherwise route by
//     u.ChatID (the owner's chat, or a customer scope per u.From.ID) and
//     journal the text under u.ID.
//   - KindCallback: signer.Verify(ctx, u.ChatID, u.CallbackData, now, used)
//     gives the request id and verdict, or ErrCallbackForged,
//     ErrCallbackExpired or ErrCallbackReplayed (run nothing). Always
//     answer with c.AnswerCallback(ctx, u.CallbackID, text, false), then
//     enqueue RenderOutcome(...) to edit the card.
//
// Output, from the actors, always through the outbox so that pacing and
// 429s are handled in one place:
//   - an answer: for _, html := range RenderText(answer) { msgs = append(msgs,
//     Message{ChatID: chat, HTML: html, Ref: chronicleID}) }; out.Enqueue(msgs...)
//   - a card: m, err := RenderCard(signer, chat, card); out.Enqueue(m). High
//     and irreversible cards, and cards without buttons (secure input), get
//     only a link to the web app: secrets and risky approvals never go
//     through Telegram.
//   - a work item's status line: send once, keep Delivery.MessageID, then
//     enqueue Message{EditID: id, ...} for each change.
//   - while a turn runs: stop := StartTyping(ctx, c, chat, nil); defer stop().
//
// OnDelivered reports each accepted message with its Ref, so the runtime can
// mark it delivered and, after a restart, enqueue again what was journaled
// but never reported delivered.
//
// # Tests
//
// Package fakebot is a fake Bot API server speaking Telegram's JSON API,
// strict where Telegram is. Tests here run against it over HTTP, with a fake
// Clock for pacing and backoff, so no test sleeps or measures wall-clock
// time.
package telegram
