package personality

import (
	"slices"

	"github.com/silas-ai/silas/messages"
)

// DirectiveMemo is the last directive text an engine rendered for one
// scope, with what the text was rendered from in the form the renderer
// reads it: each effective axis as its degree step and band, each mood
// dimension as shown high, low or not at all, the voice and the context
// key. Two views equal in that form render the same text, so a turn whose
// mood decayed a little, or whose axes moved within a wording step, reuses
// the text. The caller keeps one memo per scope and passes it back
// (BeginTurnMemo); the engine keeps none. The zero value holds nothing.
type DirectiveMemo struct {
	engine *Engine // the text depends on its constitution, neutral mood and token bounds
	key    []int8
	voice  messages.VoiceConfig
	ctx    messages.PersonaContextKey
	text   string
	tokens int
}

// memoKeyCap fits the quantised view of every axis and mood dimension.
const memoKeyCap = 32

// quantise appends what the text depends on of v's axes and mood to k.
func (e *Engine) quantise(k []int8, v view) []int8 {
	for _, a := range messages.PersonalityAxes() {
		x := v.axes.Get(a)
		k = append(k, int8(axisStep(x)), int8(axisBand(x)))
	}
	for _, d := range messages.MoodDimensions() {
		k = append(k, int8(e.moodSide(v.mood, d)))
	}
	return k
}

// lookup returns the memoised text of v, if m holds it.
func (m *DirectiveMemo) lookup(e *Engine, v view) (text string, tokens int, ok bool) {
	if m == nil || m.engine != e || m.ctx != v.context || !sameVoice(m.voice, v.voice) {
		return "", 0, false
	}
	var buf [memoKeyCap]int8
	if !slices.Equal(m.key, e.quantise(buf[:0], v)) {
		return "", 0, false
	}
	return m.text, m.tokens, true
}

// store keeps text as the rendering of v.
func (m *DirectiveMemo) store(e *Engine, v view, text string, tokens int) {
	if m == nil {
		return
	}
	*m = DirectiveMemo{
		engine: e, key: e.quantise(make([]int8, 0, memoKeyCap), v), ctx: v.context,
		voice: cloneVoice(v.voice), text: text, tokens: tokens,
	}
}

func sameVoice(a, b messages.VoiceConfig) bool {
	return a.Tone == b.Tone && slices.Equal(a.Quirks, b.Quirks) &&
		slices.Equal(a.SpeechPatterns, b.SpeechPatterns) && slices.Equal(a.AntiPatterns, b.AntiPatterns)
}

// cloneVoice copies v's lists, so that a caller changing the state's voice
// in place cannot change the memo's copy.
func cloneVoice(v messages.VoiceConfig) messages.VoiceConfig {
	return messages.VoiceConfig{
		Tone: v.Tone, Quirks: slices.Clone(v.Quirks),
		SpeechPatterns: slices.Clone(v.SpeechPatterns), AntiPatterns: slices.Clone(v.AntiPatterns),
	}
}
