package guardrails

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// DefaultJailbreakThreshold is the score at or above which the jailbreak
// check blocks, unless the gate's config sets "threshold".
const DefaultJailbreakThreshold = 0.5

// maxScanBytes caps how much of a text the jailbreak heuristics read. An
// attack hidden after 64 KiB of padding is still caught if the padding is
// long because the caller's message-size limit (far smaller) applies first.
const maxScanBytes = 64 << 10

// Jailbreak signal categories. A text's score combines the strongest signal
// of each category it shows.
const (
	CategoryOverride    = "instruction_override" // "ignore all previous instructions"
	CategoryExtraction  = "prompt_extraction"    // "reveal your system prompt"
	CategoryPersona     = "persona_jailbreak"    // "you are now DAN"
	CategoryRestriction = "restriction_removal"  // "without any filters"
	CategoryDelimiter   = "role_delimiter"       // "<|im_start|>system"
)

// jailbreakPattern is one heuristic: a regular expression over the
// normalised text (lower case, single spaces, confusables and leetspeak
// folded) and the weight in (0, 1) it contributes to its category.
type jailbreakPattern struct {
	id       string
	category string
	weight   float64
	re       *regexp.Regexp
	lits     []string // one of them occurs in every match (prefilter.go)
}

// Word lists shared by several patterns.
const (
	fillerWords = `(?:(?:all|any|the|your|my|of|everything|each|every|these|those|that|said|above|of the) )*`
	ruleNouns   = `(?:instructions?|prompts?|rules|directives?|guidelines|context|messages?|commands?|constraints|programming|policies|polic(?:y)|orders|training)`
	priorWords  = `(?:previous|prior|above|earlier|preceding|initial|original|system|existing|former|old|developer)`
	secretNouns = `(?:system (?:prompt|message|instructions?)|(?:initial|hidden|original|secret|internal|developer|pre-?prompt) (?:instructions?|prompt|message|rules)|instructions you (?:were|have been) given|prompt you (?:were|have been) given|pre-?prompt)`
)

// jailbreakPatterns is the documented heuristic set. Weights are chosen so
// that one strong signal (an explicit instruction override, a demand for the
// system prompt, a named jailbreak persona, a chat-template delimiter) blocks
// on its own, while weak signals ("pretend", "developer mode", "from now
// on", a bare mention of a system prompt) only block in combination.
func jailbreakPatterns() []jailbreakPattern {
	p := func(id, category string, weight float64, expr string) jailbreakPattern {
		return jailbreakPattern{id: id, category: category, weight: weight, re: regexp.MustCompile(expr), lits: requiredLiterals(expr)}
	}
	return []jailbreakPattern{
		// Instruction override.
		p("ignore_previous_instructions", CategoryOverride, 0.9,
			`\b(?:ignore|disregard|forget|skip|override|bypass|drop|discard|abandon|neglect)s?\b `+fillerWords+priorWords+` (?:[a-z-]+ ){0,2}?`+ruleNouns+`\b`),
		p("ignore_your_instructions", CategoryOverride, 0.85,
			`\b(?:ignore|disregard|forget|override|bypass|discard)s? (?:all (?:of )?)?your (?:[a-z-]+ ){0,2}?`+ruleNouns+`\b`),
		p("stop_following_rules", CategoryOverride, 0.7,
			`\b(?:do not|don't|dont|stop|no longer|never) (?:follow|obey|adhere to|comply with|listen to)(?:ing)? (?:any |all )?(?:of )?(?:your|the|those|these|its) (?:[a-z-]+ )?`+ruleNouns+`\b`),
		p("forget_everything", CategoryOverride, 0.45,
			`\b(?:forget|disregard|ignore)s? (?:about )?(?:everything|all) (?:that )?(?:you|you've|you have) (?:were|was|have been|know|learned|learnt|been told|were told|heard)`),
		p("new_instructions", CategoryOverride, 0.4,
			`\b(?:new|updated|real|actual|true) (?:system )?(?:instructions|rules|directives|system prompt|prompt)\s*:`),
		p("from_now_on", CategoryOverride, 0.15, `\bfrom now on\b`),

		// Prompt extraction.
		p("reveal_system_prompt", CategoryExtraction, 0.8,
			`\b(?:reveal|show|print|display|output|repeat|tell|give|share|leak|dump|expose|write out|recite|spell out|list|paste|echo|return|provide|disclose)\b (?:me |us )?(?:[a-z]+ ){0,3}?(?:your|the|its) (?:full |exact |entire |complete |original )?`+secretNouns),
		p("ask_initial_instructions", CategoryExtraction, 0.7,
			`\b(?:what|which) (?:were|are|was|is) (?:your|the) (?:initial|original|first|hidden|secret|system|internal) (?:instructions|prompt|rules|directives|message)`),
		p("repeat_text_above", CategoryExtraction, 0.7,
			`\brepeat (?:the |all |everything |all the )?(?:text |words |content |messages? |lines )?(?:above|before this|preceding|that came before|prior to this)`),
		p("mentions_system_prompt", CategoryExtraction, 0.25, `\b(?:system prompt|hidden prompt|system message)\b`),

		// Persona jailbreaks.
		p("named_jailbreak_persona", CategoryPersona, 0.85,
			`\byou(?: are|'re| will be| will act as|r new name is) (?:now |going to be |an? )?(?:dan|stan|dude|aim|evil ?bot|evil confidant|jailbroken|unfiltered|unrestricted|uncensored|unaligned)\b`),
		p("do_anything_now", CategoryPersona, 0.9, `\bdo anything now\b`),
		p("enter_special_mode", CategoryPersona, 0.75,
			`\b(?:enable|enabled|activate|activated|enter|entering|switch to|you are in|you're in|now in|in) (?:the )?(?:developer|god|jailbreak|jailbroken|dan|unrestricted|unfiltered|debug|sudo) mode\b`),
		p("special_mode", CategoryPersona, 0.35, `\b(?:developer|god|jailbreak|dan|sudo) mode\b`),
		p("ai_without_rules", CategoryPersona, 0.6,
			`\b(?:ai|assistant|model|chatbot|bot|llm|version of (?:yourself|you)) (?:with|that has|without|who has|having) (?:no|any|zero) (?:[a-z]+ )?(?:restrictions|rules|limits|limitations|filters|guidelines|morals|ethics|content polic(?:y|ies)|boundaries)`),
		p("roleplay_framing", CategoryPersona, 0.15,
			`\b(?:pretend|imagine|act as if|act like|act as|roleplay|role-play|role play|you are going to act)\b`),

		// Restriction removal.
		p("remove_safety", CategoryRestriction, 0.7,
			`\b(?:bypass|disable|override|circumvent|ignore|turn off|deactivate|remove|break|escape)s? (?:all (?:of )?)?(?:your|its) (?:[a-z]+ )?(?:safety|content|ethical|moral|security) (?:protocols|guidelines|rules|filters|measures|checks|policies|settings|restrictions|training|constraints)`),
		p("no_restrictions", CategoryRestriction, 0.45,
			`\b(?:without|no|free of|free from|ignore|bypass|disable|remove|turn off|circumvent|evade)\b (?:any |all |your |the )?(?:[a-z]+ )?(?:restrictions|filters?|censorship|safety (?:guidelines|protocols|measures|rules|filters)|content polic(?:y|ies)|guardrails|limitations|ethical guidelines|moderation)`),
		p("unfiltered_adjective", CategoryRestriction, 0.35, `\b(?:unfiltered|uncensored|unrestricted|unaligned|amoral)\b`),

		// Chat-template and role delimiters.
		p("chat_template_token", CategoryDelimiter, 0.85, `<\|\s*(?:im_start|im_end|system|endoftext|eot_id|start_header_id|end_header_id)\s*\|>`),
		p("system_tag", CategoryDelimiter, 0.6, `</?\s*(?:system|sys|instructions?)\s*>|<<\s*/?sys\s*>>|\[/?inst\]|\[system\]`),
		p("role_prefix", CategoryDelimiter, 0.35, `(?:^|\n)\s*#*\s*(?:system|assistant)\s*:`),
	}
}

// JailbreakReport is the outcome of [Detector.Detect].
type JailbreakReport struct {
	// Score combines the strongest signal of each category as
	// 1 - prod(1 - weight); 0 when nothing matched.
	Score float64
	// Signals are the ids of the matched patterns, in pattern order.
	Signals []string
	// Categories are the categories of the matched patterns, sorted.
	Categories []string
}

// Detector runs the jailbreak heuristics. It is immutable after
// construction and safe for concurrent use.
type Detector struct {
	patterns []jailbreakPattern
	spaced   *regexp.Regexp
}

// NewDetector compiles the heuristic pattern set.
func NewDetector() *Detector {
	return &Detector{
		patterns: jailbreakPatterns(),
		// Runs of four or more single letters separated by single spaces,
		// "i g n o r e", are joined before matching.
		spaced: regexp.MustCompile(`\b(?:[a-z] ){3,}[a-z]\b`),
	}
}

// Detect scores text. It reads at most the first 64 KiB.
func (d *Detector) Detect(text string) JailbreakReport {
	return d.detect(text, true)
}

// detect is Detect, with the literal prefilter or without it (for tests
// proving the two agree).
func (d *Detector) detect(text string, prefilter bool) JailbreakReport {
	norm := normalize(text)
	if !prefilter || maySpell(norm) {
		norm = d.spaced.ReplaceAllStringFunc(norm, func(s string) string { return strings.ReplaceAll(s, " ", "") })
	}
	best := map[string]float64{}
	var rep JailbreakReport
	for _, p := range d.patterns {
		if prefilter && !mayMatch(norm, p.lits) {
			continue
		}
		if !p.re.MatchString(norm) {
			continue
		}
		rep.Signals = append(rep.Signals, p.id)
		if p.weight > best[p.category] {
			best[p.category] = p.weight
		}
	}
	keep := 1.0
	for c, w := range best {
		keep *= 1 - w
		rep.Categories = append(rep.Categories, c)
	}
	slices.Sort(rep.Categories)
	if len(best) > 0 {
		rep.Score = 1 - keep
	}
	return rep
}

// Reason describes a report for a gate result; it names signals, never text.
func (r JailbreakReport) Reason() string {
	if len(r.Signals) == 0 {
		return "no prompt-injection signals"
	}
	return fmt.Sprintf("prompt-injection heuristics scored %.2f (%s)", r.Score, strings.Join(r.Signals, ", "))
}

// confusables folds look-alike letters from other scripts, and leetspeak
// digits and symbols, onto the ASCII letters the patterns use.
var confusables = map[rune]rune{
	// Cyrillic.
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's',
	'ԁ': 'd', 'ո': 'n', 'ɡ': 'g', 'һ': 'h', 'ӏ': 'l', 'т': 't', 'к': 'k', 'м': 'm', 'н': 'h', 'в': 'b',
	// Greek.
	'α': 'a', 'ε': 'e', 'ο': 'o', 'ι': 'i', 'ν': 'v', 'τ': 't', 'κ': 'k', 'ρ': 'p', 'υ': 'u', 'η': 'n',
	// Leetspeak.
	'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', '$': 's',
	// Typographic quotes.
	'\u2018': '\'', '\u2019': '\'', '\u201c': '"', '\u201d': '"',
}

// normalize lowers text, drops invisible format characters, folds
// full-width forms, confusables and leetspeak, and collapses every run of
// white space into one space (keeping a newline when the run held one, for
// the line-anchored patterns).
func normalize(text string) string {
	if len(text) > maxScanBytes {
		text = text[:maxScanBytes]
	}
	var b strings.Builder
	b.Grow(len(text))
	space, newline := false, false
	flush := func() {
		if space && b.Len() > 0 {
			if newline {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		space, newline = false, false
	}
	for _, r := range text {
		switch {
		case r == unicode.ReplacementChar:
			continue
		case unicode.Is(unicode.Cf, r): // zero-width joiners, soft hyphens, BOM
			continue
		case r >= 0xFF01 && r <= 0xFF5E: // full-width ASCII
			r -= 0xFEE0
		}
		if unicode.IsSpace(r) {
			space = true
			newline = newline || r == '\n'
			continue
		}
		flush()
		r = unicode.ToLower(r)
		if f, ok := confusables[r]; ok {
			r = f
		}
		b.WriteRune(r)
	}
	return b.String()
}
