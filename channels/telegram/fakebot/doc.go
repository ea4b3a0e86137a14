// Package fakebot is a fake Telegram Bot API server for tests. It speaks the
// real JSON API at /bot<token>/<method> over HTTP (net/http/httptest), so
// the code under test runs unmodified against it: point the Bot API client's
// base URL at Server.URL.
//
// It is strict where Telegram is strict, because the bugs it exists to catch
// are the ones Telegram would answer with a 400 in production: text that does
// not parse in its parse mode (MarkdownV2 reserved characters, HTML tags and
// entities), text over 4,096 characters, empty text, edits that change
// nothing, callback_data over 64 bytes, keyboard buttons with no or several
// actions, callback queries answered twice, messages to chats that never
// wrote to the bot. It implements getUpdates with Telegram's offset
// semantics (an update is confirmed, and dropped, once getUpdates is called
// with a higher offset) and long-poll timeout, webhook delivery with the
// secret-token header, and 429 answers on demand (RateLimit) so that pacing
// and retry_after handling can be tested without Telegram.
//
// Tests drive it with PushMessage and PushCallback (what a user does) and
// observe it with Sent, Snapshot and WaitFor (what the bot did). Every
// request's parameters are kept (Snapshot.Requests), so a test can assert
// that something, such as a secret, never reached Telegram.
package fakebot
