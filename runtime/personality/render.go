package personality

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/contextmgr"
)

// moodShownFrom is how far a mood dimension must be from neutral before the
// directives mention it.
const moodShownFrom = 0.1

// header opens every directive: what the directives may shape and the
// precedence that bounds them (spec 5.1.4). It is never shortened.
const header = "Persona directives: these shape only how you communicate (tone, wording, pacing, " +
	"how certainty is expressed). Precedence: the constitution first, then safety and approval " +
	"policy, then the task's constraints, then these directives; the higher one always wins. " +
	"They never change authorization, gates, approval requirements, access control or " +
	"verification outcomes, and initiative acts only inside existing approvals."

// fallbackText is the last resort of RenderOrNeutral when even neutral
// directives cannot be rendered.
const fallbackText = header + "\nCommunicate in a neutral, clear and courteous style."

// BeginTurn is the personality hook of turn step 7. It decays st to now,
// detects the turn's context, records it as st.LastContext, and renders the
// directives with RenderOrNeutral. It never blocks a turn: the directives are
// always usable, and a non-nil error only says why they fell back to neutral
// (log it). Inject the text as the scope's pinned system item with source
// messages.DirectivesSource, replacing the previous one; inject nothing when
// the text is empty (personality disabled). Persist the returned state.
func (e *Engine) BeginTurn(st messages.PersonaState, t Turn, now time.Time) (messages.PersonaState, messages.PersonaDirectives, error) {
	st, d, _, err := e.BeginTurnMemo(st, t, now, DirectiveMemo{})
	return st, d, err
}

// BeginTurnMemo is BeginTurn for a caller that renders every turn: memo is
// what the previous call returned for the same scope (the zero value the
// first time), and the directive text is re-rendered only when what it is
// rendered from changed (memo.go). Keep the returned memo for the next
// turn; the directives are exactly those of BeginTurn.
func (e *Engine) BeginTurnMemo(st messages.PersonaState, t Turn, now time.Time, memo DirectiveMemo) (messages.PersonaState, messages.PersonaDirectives, DirectiveMemo, error) {
	if st.Validate() == nil {
		st = e.Decay(st, now)
	}
	key := e.DetectContext(t)
	st.LastContext = string(key)
	d, err := e.renderOrNeutral(st, key, &memo)
	return st, d, memo, err
}

// Render renders the directives of st in context key: natural language, no
// raw axis values, between directive_tokens_min and directive_tokens_max
// tokens (contextmgr.EstimateTokens). It reflects the precedence rule, the
// constitution, the voice, the effective axes and the mood, shortening the
// wording step by step when the full text is too long and adding general
// reminders when it is too short. A disabled engine renders empty
// directives. Errors wrap ErrInvalidState, ErrUnknownPreset,
// ErrUnknownContext or ErrDirectiveLength; RenderOrNeutral handles them.
func (e *Engine) Render(st messages.PersonaState, key messages.PersonaContextKey) (messages.PersonaDirectives, error) {
	return e.render(st, key, nil)
}

// render is Render, taking the text from memo when memo holds the text of
// the same rendering inputs and keeping the new text in it otherwise.
func (e *Engine) render(st messages.PersonaState, key messages.PersonaContextKey, memo *DirectiveMemo) (messages.PersonaDirectives, error) {
	if !e.enabled {
		return messages.PersonaDirectives{ScopeID: st.ScopeID, Context: string(key), Preset: st.ActivePreset}, nil
	}
	eff, err := e.Effective(st, key)
	if err != nil {
		return messages.PersonaDirectives{}, fmt.Errorf("render scope %s: %w", st.ScopeID, err)
	}
	v := view{axes: eff, mood: st.Mood, voice: st.Voice, context: key}
	text, tokens, ok := memo.lookup(e, v)
	if !ok {
		if text, err = e.fit(v); err != nil {
			return messages.PersonaDirectives{}, fmt.Errorf("render scope %s: %w", st.ScopeID, err)
		}
		tokens = contextmgr.EstimateTokens(text)
		memo.store(e, v, text, tokens)
	}
	return messages.PersonaDirectives{
		ScopeID: st.ScopeID, Context: string(key), Preset: st.ActivePreset,
		Text: text, Tokens: tokens,
	}, nil
}

// RenderOrNeutral renders like Render and never fails a turn (spec 5.14):
// when Render fails it renders the neutral style (default context, the
// scope's baseline axes or, if those are unusable, the configured ones, the
// configured voice, no mood, preset or session offsets) and marks the result
// Neutral; if even that fails it returns a fixed neutral text. The
// directives are always usable; a non-nil error is only the reason for the
// fallback, for the log.
func (e *Engine) RenderOrNeutral(st messages.PersonaState, key messages.PersonaContextKey) (messages.PersonaDirectives, error) {
	return e.renderOrNeutral(st, key, nil)
}

// renderOrNeutral is RenderOrNeutral with render's memo; the neutral
// fallback is rare and never memoised.
func (e *Engine) renderOrNeutral(st messages.PersonaState, key messages.PersonaContextKey, memo *DirectiveMemo) (messages.PersonaDirectives, error) {
	d, err := e.render(st, key, memo)
	if err == nil {
		return d, nil
	}
	base := st.BaselineAxes
	if base.Validate() != nil {
		base = e.baseline
	}
	out := messages.PersonaDirectives{
		ScopeID: st.ScopeID, Context: string(messages.ContextDefault), Preset: PresetDefault, Neutral: true,
	}
	text, nerr := e.fit(view{axes: base, mood: e.neutral, voice: e.voice, context: messages.ContextDefault})
	if nerr != nil {
		text = fallbackText
		err = errors.Join(err, nerr)
	}
	out.Text, out.Tokens = text, contextmgr.EstimateTokens(text)
	return out, err
}

// view is what the text is rendered from.
type view struct {
	axes    messages.AxisProfile
	mood    messages.MoodState
	voice   messages.VoiceConfig
	context messages.PersonaContextKey
}

// detail is one step of shortening: each field says whether a section uses
// its short form.
type detail struct{ voice, mood, axes, constitution bool }

// fit renders v at the richest detail that fits the token bounds, padding
// with reminders when it falls short of the minimum.
func (e *Engine) fit(v view) (string, error) {
	steps := []detail{
		{},
		{voice: true},
		{voice: true, mood: true},
		{voice: true, mood: true, axes: true},
		{voice: true, mood: true, axes: true, constitution: true},
	}
	var tokens int
	for _, d := range steps {
		sections := e.sections(v, d)
		text := strings.Join(sections, "\n")
		if tokens = contextmgr.EstimateTokens(text); tokens > e.maxTokens {
			continue
		}
		padded := false
		for _, r := range reminders() {
			if tokens >= e.minTokens {
				break
			}
			add := "\n- " + r
			if !padded {
				add = "\nReminders:" + add
			}
			next := text + add
			if contextmgr.EstimateTokens(next) > e.maxTokens {
				break
			}
			text, tokens, padded = next, contextmgr.EstimateTokens(next), true
		}
		if tokens < e.minTokens {
			return "", fmt.Errorf("%w: %d tokens, want at least %d", ErrDirectiveLength, tokens, e.minTokens)
		}
		return text, nil
	}
	return "", fmt.Errorf("%w: %d tokens at the shortest wording, want at most %d", ErrDirectiveLength, tokens, e.maxTokens)
}

// sections renders the parts of the directive text, in order.
func (e *Engine) sections(v view, d detail) []string {
	out := []string{header}
	switch {
	case len(e.constitution) == 0:
	case d.constitution:
		out = append(out, "Follow the constitution in your instructions; it always wins.")
	default:
		out = append(out, "Constitution, never broken: "+sentenceList(e.constitution)+".")
	}
	if v.context != messages.ContextDefault {
		out = append(out, "Situation: "+strings.ReplaceAll(string(v.context), "_", " ")+".")
	}
	out = append(out, voiceText(v.voice, d.voice))
	out = append(out, "Style:")
	for _, a := range messages.PersonalityAxes() {
		out = append(out, axisLine(a, v.axes.Get(a), d.axes))
	}
	return append(out, e.moodText(v.mood, d.mood))
}

func voiceText(v messages.VoiceConfig, short bool) string {
	var b strings.Builder
	b.WriteString("Voice: ")
	if v.Tone != "" {
		b.WriteString(strings.TrimSuffix(v.Tone, "."))
	} else {
		b.WriteString("plain and clear")
	}
	b.WriteString(".")
	if !short {
		if len(v.Quirks) > 0 {
			b.WriteString(" Habits: " + sentenceList(v.Quirks) + ".")
		}
		if len(v.SpeechPatterns) > 0 {
			b.WriteString(" Prefer " + sentenceList(v.SpeechPatterns) + ".")
		}
	}
	if len(v.AntiPatterns) > 0 {
		b.WriteString(" Avoid " + sentenceList(v.AntiPatterns) + ".")
	}
	return b.String()
}

// sentenceList joins items with "; ", dropping trailing full stops.
func sentenceList(items []string) string {
	parts := make([]string, len(items))
	for i, s := range items {
		parts[i] = strings.TrimSuffix(strings.TrimSpace(s), ".")
	}
	return strings.Join(parts, "; ")
}

// axisWords describes one axis: its name, its two poles and guidance for five
// bands of its value, from lowest to highest.
type axisWords struct {
	name, low, high string
	bands           [5]string
}

func wordsFor(a messages.PersonalityAxis) axisWords {
	switch a {
	case messages.AxisWarmth:
		return axisWords{"Warmth", "clinical", "warm", [5]string{
			"stick to facts; no pleasantries or emotional language",
			"stay matter-of-fact; acknowledge feelings only when they matter",
			"be courteous and even; acknowledge briefly, then get to the point",
			"be friendly and supportive; recognize effort and real frustration",
			"be openly warm and encouraging, and still fully honest",
		}}
	case messages.AxisAssertiveness:
		return axisWords{"Assertiveness", "deferential", "forthright", [5]string{
			"defer to the user's choices; raise only safety or correctness problems",
			"suggest rather than insist; raise a concern once, politely",
			"give your view when it helps and flag problems clearly",
			"take clear positions, recommend one option, push back on weak ideas with reasons",
			"challenge flawed plans directly; hold your ground unless given a better argument",
		}}
	case messages.AxisVerbosity:
		return axisWords{"Verbosity", "terse", "expansive", [5]string{
			"answer in a sentence or two unless asked for more",
			"lead with the answer; add only detail that changes a decision",
			"give a compact answer with brief reasons",
			"explain reasoning and relevant context, organized for skimming",
			"be thorough: background, alternatives and caveats, well structured",
		}}
	case messages.AxisFormality:
		return axisWords{"Formality", "casual", "formal", [5]string{
			"write like a colleague in chat: plain words, contractions, no ceremony",
			"keep a relaxed, conversational register",
			"use a neutral register, neither stiff nor slangy",
			"write in a polished, professional register",
			"use formal, precise language fit for an official document",
		}}
	case messages.AxisHumor:
		return axisWords{"Humor", "dry", "playful", [5]string{
			"no jokes or wordplay",
			"at most a rare dry aside, never while something is broken",
			"a light touch of humor is fine when things are relaxed",
			"be playful where it fits, never at the cost of clarity",
			"let a playful streak show freely while keeping the substance exact",
		}}
	case messages.AxisInitiative:
		return axisWords{"Initiative", "reactive", "proactive", [5]string{
			"do what is asked and no more; do not volunteer next steps",
			"mention an obvious next step only when clearly useful",
			"point out relevant next steps and offer to take them",
			"anticipate needs: propose concrete next steps and recommend one",
			"drive the work forward and line up next steps without being asked",
		}}
	case messages.AxisCertainty:
		return axisWords{"Certainty", "tentative", "decisive", [5]string{
			"present conclusions as tentative and say what is uncertain",
			"qualify claims where evidence is thin and say what would confirm them",
			"state conclusions plainly and note real uncertainty once",
			"speak declaratively; hedge only where evidence is genuinely missing",
			"be decisive and unambiguous, but never claim more than you know",
		}}
	}
	return axisWords{name: string(a), low: "low", high: "high", bands: [5]string{"", "", "", "", ""}}
}

// degrees name the distance from the middle of an axis in twentieths: a value
// v is at step round(20 v), so every change of 0.05 changes the wording.
func degrees() [11]string {
	return [11]string{
		"balanced", "a touch", "slightly", "mildly", "moderately", "fairly",
		"clearly", "markedly", "strongly", "very", "fully",
	}
}

// axisStep is v's degree step in twentieths, 0..20: the only thing the
// degree wording depends on.
func axisStep(v float64) int { return int(math.Round(messages.Clamp01(v) * 20)) }

// axisBand is v's band of the long wording, 0..4. The epsilon keeps sums
// such as 0.1 + 0.3 in the band of 0.4.
func axisBand(v float64) int { return min(4, int(math.Floor(messages.Clamp01(v)*5+1e-9))) }

// degree describes v in [0, 1] in words, such as "fairly forthright".
func degree(w axisWords, v float64) string {
	step := axisStep(v)
	switch {
	case step == 10:
		return "balanced between " + w.low + " and " + w.high
	case step > 10:
		return degrees()[step-10] + " " + w.high
	default:
		return degrees()[10-step] + " " + w.low
	}
}

func axisLine(a messages.PersonalityAxis, v float64, short bool) string {
	w := wordsFor(a)
	if short {
		return "- " + w.name + ": " + degree(w, v) + "."
	}
	return "- " + w.name + ", " + degree(w, v) + ": " + w.bands[axisBand(v)] + "."
}

// moodWords describes one mood dimension far from neutral: a short phrase and
// a sentence for each side.
type moodWords struct {
	dim                       messages.MoodDimension
	lowShort, highShort       string
	lowSentence, highSentence string
}

func moodTable() []moodWords {
	return []moodWords{
		{messages.MoodEnergy, "low energy", "high energy",
			"Energy is low: keep replies calm and economical.",
			"Energy is high: keep a brisk pace and momentum."},
		{messages.MoodPatience, "thin patience", "ample patience",
			"Patience is thin after repeated problems: stay courteous, be brief and focus on the blocker.",
			"Patience is ample: take time to explain when asked."},
		{messages.MoodCuriosity, "low curiosity", "high curiosity",
			"Curiosity is low: stay narrowly on the task.",
			"Curiosity is high: note interesting angles briefly without leaving the task."},
		{messages.MoodFrustration, "at ease", "frustrated",
			"Things are going well: a settled, positive tone fits.",
			"Frustration has built up from blockers: name the blocker plainly and stay composed; never take it out on the user."},
	}
}

func (e *Engine) moodText(m messages.MoodState, short bool) string {
	var shorts, sentences []string
	for _, w := range moodTable() {
		switch e.moodSide(m, w.dim) {
		case 1:
			shorts, sentences = append(shorts, w.highShort), append(sentences, w.highSentence)
		case -1:
			shorts, sentences = append(shorts, w.lowShort), append(sentences, w.lowSentence)
		}
	}
	switch {
	case len(shorts) == 0:
		return "Mood: steady."
	case short:
		return "Mood: " + strings.Join(shorts, ", ") + "."
	}
	return "Mood: " + strings.Join(sentences, " ")
}

// moodSide is how the directives show mood dimension dim: 1 high, -1 low,
// 0 not at all (within moodShownFrom of neutral).
func (e *Engine) moodSide(m messages.MoodState, dim messages.MoodDimension) int {
	dist := m.Get(dim) - e.neutral.Get(dim)
	switch {
	case dist >= moodShownFrom:
		return 1
	case dist <= -moodShownFrom:
		return -1
	}
	return 0
}

// reminders pad directives that fall short of the minimum length, in order.
func reminders() []string {
	return []string{
		"Lead with the answer or the decision, then the reasons.",
		"When unsure, say what you know, what you do not, and how to find out.",
		"If the user pushes back, re-check the facts; change position only for a better argument.",
		"Match the user's language and level of detail where it fits the style above.",
		"Keep formatting light: use lists only when they help scanning.",
		"Admit mistakes plainly and correct them at once.",
		"Ask one focused question when a request is ambiguous in a way that matters.",
		"Close with the next step when there is one.",
	}
}
