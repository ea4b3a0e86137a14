package personality

import (
	"testing"

	"github.com/silas-ai/silas/messages"
)

// A memo is reused only while the view reads the same to the renderer: a
// mood or axis change that changes the wording re-renders, and every
// result equals Render's.
func TestBeginTurnMemo(t *testing.T) {
	e := defaultEngine(t)
	st := e.NewState("owner", t0)
	turn := Turn{Text: "hello there"}
	check := func(name string, st messages.PersonaState, memo DirectiveMemo) (messages.PersonaState, DirectiveMemo, string) {
		t.Helper()
		got, d, memo, err := e.BeginTurnMemo(st, turn, t0, memo)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := e.Render(got, messages.PersonaContextKey(got.LastContext))
		if err != nil || d != want {
			t.Fatalf("%s: memoised directives %+v, Render %+v (%v)", name, d, want, err)
		}
		return got, memo, d.Text
	}
	st, memo, first := check("first", st, DirectiveMemo{})
	if memo.text != first {
		t.Fatal("the first render was not memoised")
	}

	// A memo whose text is marked shows whether the next call reused it.
	const marker = "memoised text"
	memo.text = marker
	_, d, _, err := e.BeginTurnMemo(st, turn, t0, memo)
	if err != nil || d.Text != marker {
		t.Fatalf("an unchanged state re-rendered: %q, %v", d.Text, err)
	}
	// Mood that moves but stays within what the directives show is reused.
	calm := st.Clone()
	calm.Mood.Energy += moodShownFrom / 2
	if _, d, _, _ := e.BeginTurnMemo(calm, turn, t0, memo); d.Text != marker {
		t.Errorf("a mood change the directives do not show re-rendered")
	}

	// memo still holds the render of st, marked.
	frustrated := st.Clone()
	frustrated.Mood.Frustration = 0.9
	_, _, text := check("frustrated", frustrated, memo)
	if text == marker || text == first {
		t.Fatalf("a frustrated mood reused the old directives:\n%s", text)
	}

	warmer := st.Clone()
	warmer.SessionAxes = messages.AxisDelta{messages.AxisWarmth: 0.3}
	_, _, text = check("warmer", warmer, memo)
	if text == marker || text == first {
		t.Fatalf("a warmer axis reused the old directives:\n%s", text)
	}

	// Another engine (a reloaded config) never reads this engine's memo.
	other := defaultEngine(t)
	if _, d, _, _ := other.BeginTurnMemo(warmer, turn, t0, memo); d.Text == marker {
		t.Error("another engine reused the memo")
	}
}
