package fakebot

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

type response struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// call POSTs params as JSON to method with ctx and decodes the answer.
func callCtx(ctx context.Context, t *testing.T, s *Server, method string, params map[string]any) (response, int) {
	t.Helper()
	body, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/bot"+s.Token()+"/"+method, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{Description: err.Error()}, 0
	}
	defer resp.Body.Close()
	var r response
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("%s: decode answer: %v", method, err)
	}
	if r.OK != (resp.StatusCode == http.StatusOK) || (!r.OK && r.ErrorCode != resp.StatusCode) {
		t.Fatalf("%s: status %d disagrees with body %+v", method, resp.StatusCode, r)
	}
	return r, resp.StatusCode
}

func call(t *testing.T, s *Server, method string, params map[string]any) (response, int) {
	t.Helper()
	return callCtx(context.Background(), t, s, method, params)
}

func mustOK(t *testing.T, s *Server, method string, params map[string]any) json.RawMessage {
	t.Helper()
	r, code := call(t, s, method, params)
	if code != http.StatusOK {
		t.Fatalf("%s: got %d %q, want 200", method, code, r.Description)
	}
	return r.Result
}

func waitCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func updateIDs(t *testing.T, raw json.RawMessage) []int64 {
	t.Helper()
	var ups []struct {
		UpdateID int64 `json:"update_id"`
	}
	if err := json.Unmarshal(raw, &ups); err != nil {
		t.Fatalf("decode updates %s: %v", raw, err)
	}
	ids := make([]int64, 0, len(ups))
	for _, u := range ups {
		ids = append(ids, u.UpdateID)
	}
	return ids
}

func TestTokenAndMethodRouting(t *testing.T) {
	s := Start(t, Options{})
	resp, err := http.Post(s.URL()+"/botWRONG:token/getMe", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong token: got %d, want 401", resp.StatusCode)
	}
	if r, code := call(t, s, "noSuchMethod", nil); code != http.StatusNotFound {
		t.Fatalf("unknown method: got %d %q, want 404", code, r.Description)
	}
	var me struct {
		ID       int64  `json:"id"`
		IsBot    bool   `json:"is_bot"`
		Username string `json:"username"`
	}
	if err := json.Unmarshal(mustOK(t, s, "getMe", nil), &me); err != nil {
		t.Fatal(err)
	}
	if me.ID != 123456 || !me.IsBot || me.Username == "" {
		t.Fatalf("getMe = %+v", me)
	}
}

func TestSendMessageValidation(t *testing.T) {
	s := Start(t, Options{})
	s.KnownChat(42)
	tests := []struct {
		name   string
		params map[string]any
		want   string // "" for success, else a substring of the 400's description
	}{
		{"plain", map[string]any{"chat_id": 42, "text": "hello"}, ""},
		{"unknown chat", map[string]any{"chat_id": 43, "text": "hello"}, "chat not found"},
		{"no chat", map[string]any{"text": "hello"}, "chat_id is empty"},
		{"empty text", map[string]any{"chat_id": 42, "text": ""}, "message text is empty"},
		{"blank text", map[string]any{"chat_id": 42, "text": " \n "}, "message text is empty"},
		{"4096 chars", map[string]any{"chat_id": 42, "text": strings.Repeat("a", 4096)}, ""},
		{"4097 chars", map[string]any{"chat_id": 42, "text": strings.Repeat("a", 4097)}, "message is too long"},
		{"2048 astral runes", map[string]any{"chat_id": 42, "text": strings.Repeat("😀", 2048)}, ""},
		{"2049 astral runes", map[string]any{"chat_id": 42, "text": strings.Repeat("😀", 2049)}, "message is too long"},
		{"entities shrink", map[string]any{"chat_id": 42, "parse_mode": "HTML", "text": "<b>" + strings.Repeat("&amp;", 4096) + "</b>"}, ""},
		{"html bad tag", map[string]any{"chat_id": 42, "parse_mode": "HTML", "text": "a <script>x</script>"}, "can't parse entities"},
		{"html bare lt", map[string]any{"chat_id": 42, "parse_mode": "HTML", "text": "1 < 2"}, "can't parse entities"},
		{"markdown reserved", map[string]any{"chat_id": 42, "parse_mode": "MarkdownV2", "text": "done."}, "can't parse entities"},
		{"markdown escaped", map[string]any{"chat_id": 42, "parse_mode": "MarkdownV2", "text": "done\\."}, ""},
		{"bad parse mode", map[string]any{"chat_id": 42, "parse_mode": "BBCode", "text": "x"}, "unsupported parse_mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, code := call(t, s, "sendMessage", tt.params)
			if tt.want == "" {
				if code != http.StatusOK {
					t.Fatalf("got %d %q, want 200", code, r.Description)
				}
				return
			}
			if code != http.StatusBadRequest || !strings.Contains(r.Description, tt.want) {
				t.Fatalf("got %d %q, want 400 containing %q", code, r.Description, tt.want)
			}
		})
	}
	for _, m := range s.Sent() {
		if m.ChatID != 42 {
			t.Fatalf("a refused message was recorded: %+v", m)
		}
	}
}

func TestSendMessageIDsIncrementAndPlainText(t *testing.T) {
	s := Start(t, Options{})
	s.KnownChat(7)
	var first, second struct {
		MessageID int    `json:"message_id"`
		Text      string `json:"text"`
	}
	_ = json.Unmarshal(mustOK(t, s, "sendMessage", map[string]any{"chat_id": 7, "text": "<b>a &lt; b</b>", "parse_mode": "HTML"}), &first)
	_ = json.Unmarshal(mustOK(t, s, "sendMessage", map[string]any{"chat_id": 7, "text": "two"}), &second)
	if second.MessageID != first.MessageID+1 {
		t.Fatalf("message ids %d then %d, want consecutive", first.MessageID, second.MessageID)
	}
	if first.Text != "a < b" {
		t.Fatalf("returned text %q, want the parsed plain text", first.Text)
	}
	sent := s.Sent()
	if len(sent) != 2 || sent[0].Plain != "a < b" || sent[0].Text != "<b>a &lt; b</b>" || sent[0].ParseMode != "HTML" {
		t.Fatalf("Sent() = %+v", sent)
	}
}

func TestGetUpdatesOffsetConfirmsAndDrops(t *testing.T) {
	s := Start(t, Options{})
	a := s.PushMessage(1, 1, "a")
	b := s.PushMessage(1, 1, "b")
	c := s.PushMessage(2, 2, "c")
	if got := updateIDs(t, mustOK(t, s, "getUpdates", nil)); len(got) != 3 || got[0] != a || got[2] != c {
		t.Fatalf("first poll = %v, want [%d %d %d]", got, a, b, c)
	}
	// Without a higher offset nothing is confirmed: the same updates again.
	if got := updateIDs(t, mustOK(t, s, "getUpdates", nil)); len(got) != 3 {
		t.Fatalf("re-poll = %v, want all three again", got)
	}
	if got := updateIDs(t, mustOK(t, s, "getUpdates", map[string]any{"offset": b})); len(got) != 2 || got[0] != b {
		t.Fatalf("poll at offset %d = %v, want [%d %d]", b, got, b, c)
	}
	if p := s.Snapshot().Pending; p != 2 {
		t.Fatalf("pending = %d after confirming one, want 2", p)
	}
	// The confirmed update is gone for good, even for offset 0.
	if got := updateIDs(t, mustOK(t, s, "getUpdates", nil)); len(got) != 2 || got[0] != b {
		t.Fatalf("poll after confirm = %v, want [%d %d]", got, b, c)
	}
	if got := updateIDs(t, mustOK(t, s, "getUpdates", map[string]any{"offset": c + 1, "limit": 1})); len(got) != 0 {
		t.Fatalf("poll past the end = %v, want none", got)
	}
	if p := s.Snapshot().Pending; p != 0 {
		t.Fatalf("pending = %d, want 0", p)
	}
	d := s.PushMessage(1, 1, "d")
	e := s.PushMessage(1, 1, "e")
	if got := updateIDs(t, mustOK(t, s, "getUpdates", map[string]any{"limit": 1})); len(got) != 1 || got[0] != d {
		t.Fatalf("limit 1 = %v, want [%d]", got, d)
	}
	if got := updateIDs(t, mustOK(t, s, "getUpdates", map[string]any{"offset": -1})); len(got) != 1 || got[0] != e {
		t.Fatalf("offset -1 = %v, want [%d]", got, e)
	}
}

func TestGetUpdatesLongPollWakesOnPush(t *testing.T) {
	s := Start(t, Options{})
	ctx := waitCtx(t)
	got := make(chan []int64, 1)
	go func() {
		r, _ := callCtx(ctx, t, s, "getUpdates", map[string]any{"timeout": 50})
		var ups []struct {
			UpdateID int64 `json:"update_id"`
		}
		_ = json.Unmarshal(r.Result, &ups)
		ids := []int64{}
		for _, u := range ups {
			ids = append(ids, u.UpdateID)
		}
		got <- ids
	}()
	if err := s.WaitFor(ctx, func(sn Snapshot) bool { return sn.Polling }); err != nil {
		t.Fatal(err)
	}
	id := s.PushMessage(5, 5, "wake up")
	select {
	case ids := <-got:
		if len(ids) != 1 || ids[0] != id {
			t.Fatalf("long poll returned %v, want [%d]", ids, id)
		}
	case <-ctx.Done():
		t.Fatal("long poll did not return after a push")
	}
}

func TestGetUpdatesTimeoutReturnsEmpty(t *testing.T) {
	s := Start(t, Options{PollUnit: time.Millisecond})
	raw := mustOK(t, s, "getUpdates", map[string]any{"timeout": 1})
	if string(raw) != "[]" {
		t.Fatalf("timed-out poll = %s, want []", raw)
	}
}

func TestGetUpdatesClientCancelReleasesPoll(t *testing.T) {
	s := Start(t, Options{})
	ctx := waitCtx(t)
	pollCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		callCtx(pollCtx, t, s, "getUpdates", map[string]any{"timeout": 50})
	}()
	if err := s.WaitFor(ctx, func(sn Snapshot) bool { return sn.Polling }); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	if err := s.WaitFor(ctx, func(sn Snapshot) bool { return !sn.Polling }); err != nil {
		t.Fatal(err)
	}
}

func TestSecondPollTerminatesFirst(t *testing.T) {
	s := Start(t, Options{})
	ctx := waitCtx(t)
	first := make(chan response, 1)
	go func() {
		r, _ := callCtx(ctx, t, s, "getUpdates", map[string]any{"timeout": 50})
		first <- r
	}()
	if err := s.WaitFor(ctx, func(sn Snapshot) bool { return sn.Polling }); err != nil {
		t.Fatal(err)
	}
	mustOK(t, s, "getUpdates", nil)
	r := <-first
	if r.ErrorCode != http.StatusConflict || !strings.Contains(r.Description, "terminated by other getUpdates") {
		t.Fatalf("first poll = %+v, want 409 terminated", r)
	}
}

func TestRateLimitAnswers429ThenRecovers(t *testing.T) {
	s := Start(t, Options{})
	s.KnownChat(1)
	s.RateLimit("sendMessage", 2, 7)
	for i := range 2 {
		r, code := call(t, s, "sendMessage", map[string]any{"chat_id": 1, "text": "x"})
		if code != http.StatusTooManyRequests || r.Parameters.RetryAfter != 7 {
			t.Fatalf("call %d: got %d %+v, want 429 retry_after 7", i, code, r)
		}
	}
	if n := len(s.Sent()); n != 0 {
		t.Fatalf("%d messages recorded for refused calls", n)
	}
	mustOK(t, s, "sendMessage", map[string]any{"chat_id": 1, "text": "x"})
	snap := s.Snapshot()
	if snap.Calls("sendMessage", http.StatusTooManyRequests) != 2 || snap.Calls("sendMessage", 0) != 3 {
		t.Fatalf("calls: %d 429s of %d, want 2 of 3", snap.Calls("sendMessage", 429), snap.Calls("sendMessage", 0))
	}
	// Other methods are not affected.
	s.RateLimit("sendMessage", 1, 1)
	mustOK(t, s, "sendChatAction", map[string]any{"chat_id": 1, "action": "typing"})
}

func TestEditMessageText(t *testing.T) {
	s := Start(t, Options{})
	s.KnownChat(9)
	kb := `{"inline_keyboard":[[{"text":"Approve","callback_data":"a"}]]}`
	var m struct {
		MessageID int `json:"message_id"`
	}
	_ = json.Unmarshal(mustOK(t, s, "sendMessage", map[string]any{"chat_id": 9, "text": "card", "reply_markup": kb}), &m)

	if r, code := call(t, s, "editMessageText", map[string]any{"chat_id": 9, "message_id": m.MessageID + 100, "text": "x"}); code != 400 || !strings.Contains(r.Description, "message to edit not found") {
		t.Fatalf("edit of unknown message: %d %q", code, r.Description)
	}
	if r, code := call(t, s, "editMessageText", map[string]any{"chat_id": 9, "message_id": m.MessageID, "text": "card", "reply_markup": kb}); code != 400 || !strings.Contains(r.Description, "message is not modified") {
		t.Fatalf("identical edit: %d %q", code, r.Description)
	}
	// Same text, keyboard dropped: a change, and the keyboard is gone.
	mustOK(t, s, "editMessageText", map[string]any{"chat_id": 9, "message_id": m.MessageID, "text": "card"})
	cur, ok := s.Current(9, m.MessageID)
	if !ok || cur.Keyboard != nil || cur.Text != "card" {
		t.Fatalf("after edit: %+v", cur)
	}
	mustOK(t, s, "editMessageText", map[string]any{"chat_id": 9, "message_id": m.MessageID, "text": "<b>Approved</b>", "parse_mode": "HTML"})
	cur, _ = s.Current(9, m.MessageID)
	if cur.Plain != "Approved" {
		t.Fatalf("after second edit: %+v", cur)
	}
	sent := s.Sent()
	if len(sent) != 3 || sent[1].Method != "editMessageText" || sent[2].MessageID != m.MessageID {
		t.Fatalf("Sent() = %+v", sent)
	}
}

func TestAnswerCallbackQueryOnce(t *testing.T) {
	s := Start(t, Options{})
	id := s.PushCallback(3, 3, 77, "data")
	if r, code := call(t, s, "answerCallbackQuery", map[string]any{"callback_query_id": "nope"}); code != 400 || !strings.Contains(r.Description, "query ID is invalid") {
		t.Fatalf("unknown query: %d %q", code, r.Description)
	}
	mustOK(t, s, "answerCallbackQuery", map[string]any{"callback_query_id": id, "text": "expired", "show_alert": true})
	if _, code := call(t, s, "answerCallbackQuery", map[string]any{"callback_query_id": id}); code != 400 {
		t.Fatalf("second answer: got %d, want 400", code)
	}
	a := s.Snapshot().Answers
	if len(a) != 1 || a[0].CallbackQueryID != id || a[0].Text != "expired" || !a[0].ShowAlert {
		t.Fatalf("answers = %+v", a)
	}
}

func TestCallbackUpdateCarriesMessage(t *testing.T) {
	s := Start(t, Options{})
	s.KnownChat(4)
	var m struct {
		MessageID int `json:"message_id"`
	}
	_ = json.Unmarshal(mustOK(t, s, "sendMessage", map[string]any{"chat_id": 4, "text": "card",
		"reply_markup": `{"inline_keyboard":[[{"text":"Go","callback_data":"go"}]]}`}), &m)
	s.PushCallback(4, 40, m.MessageID, "go")
	s.PushCallback(4, 40, 999, "gone")
	var ups []struct {
		CallbackQuery struct {
			From    struct{ ID int64 } `json:"from"`
			Data    string             `json:"data"`
			Message struct {
				MessageID int   `json:"message_id"`
				Date      int64 `json:"date"`
				Chat      struct {
					ID int64 `json:"id"`
				} `json:"chat"`
			} `json:"message"`
		} `json:"callback_query"`
	}
	if err := json.Unmarshal(mustOK(t, s, "getUpdates", nil), &ups); err != nil {
		t.Fatal(err)
	}
	if len(ups) != 2 {
		t.Fatalf("got %d updates", len(ups))
	}
	cq := ups[0].CallbackQuery
	if cq.Data != "go" || cq.From.ID != 40 || cq.Message.MessageID != m.MessageID || cq.Message.Chat.ID != 4 || cq.Message.Date == 0 {
		t.Fatalf("callback = %+v", cq)
	}
	if gone := ups[1].CallbackQuery.Message; gone.Date != 0 || gone.Chat.ID != 4 {
		t.Fatalf("callback on an unknown message should carry an inaccessible message (date 0): %+v", gone)
	}
}

func TestKeyboardValidation(t *testing.T) {
	s := Start(t, Options{})
	s.KnownChat(1)
	tests := []struct {
		name, markup, want string
	}{
		{"callback", `{"inline_keyboard":[[{"text":"A","callback_data":"a"}]]}`, ""},
		{"url", `{"inline_keyboard":[[{"text":"Open","url":"https://silas.example/cards/1"}]]}`, ""},
		{"64 bytes", `{"inline_keyboard":[[{"text":"A","callback_data":"` + strings.Repeat("x", 64) + `"}]]}`, ""},
		{"65 bytes", `{"inline_keyboard":[[{"text":"A","callback_data":"` + strings.Repeat("x", 65) + `"}]]}`, "BUTTON_DATA_INVALID"},
		{"text only", `{"inline_keyboard":[[{"text":"A"}]]}`, "Text buttons are unallowed"},
		{"two actions", `{"inline_keyboard":[[{"text":"A","callback_data":"a","copy_text":{"text":""}}]]}`, "exactly one"},
		{"javascript url", `{"inline_keyboard":[[{"text":"A","url":"javascript:alert(1)"}]]}`, "BUTTON_URL_INVALID"},
		{"empty label", `{"inline_keyboard":[[{"text":"","callback_data":"a"}]]}`, "text"},
		{"not json", `{"inline_keyboard":`, "can't parse reply keyboard"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, code := call(t, s, "sendMessage", map[string]any{"chat_id": 1, "text": "k", "reply_markup": tt.markup})
			if tt.want == "" {
				if code != 200 {
					t.Fatalf("got %d %q", code, r.Description)
				}
				return
			}
			if code != 400 || !strings.Contains(r.Description, tt.want) {
				t.Fatalf("got %d %q, want 400 with %q", code, r.Description, tt.want)
			}
		})
	}
}

func TestSendChatAction(t *testing.T) {
	s := Start(t, Options{})
	s.KnownChat(1)
	mustOK(t, s, "sendChatAction", map[string]any{"chat_id": 1, "action": "typing"})
	if _, code := call(t, s, "sendChatAction", map[string]any{"chat_id": 1, "action": "dancing"}); code != 400 {
		t.Fatalf("bogus action: got %d, want 400", code)
	}
	if a := s.Snapshot().Actions; len(a) != 1 || a[0] != (ChatAction{ChatID: 1, Action: "typing"}) {
		t.Fatalf("actions = %+v", a)
	}
}

func TestWaitForHonoursContext(t *testing.T) {
	s := Start(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.WaitFor(ctx, func(Snapshot) bool { return false }); err == nil {
		t.Fatal("WaitFor with a cancelled context returned nil")
	}
}

func TestFormAndQueryParams(t *testing.T) {
	s := Start(t, Options{})
	s.KnownChat(5)
	resp, err := http.PostForm(s.URL()+"/bot"+s.Token()+"/sendMessage?chat_id=5", map[string][]string{"text": {"form body"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("form post: %d", resp.StatusCode)
	}
	if sent := s.Sent(); len(sent) != 1 || sent[0].Text != "form body" || sent[0].ChatID != 5 {
		t.Fatalf("Sent() = %+v", sent)
	}
}
