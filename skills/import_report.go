package skills

// Format is the dialect a skill was written in (spec 10.4.1).
type Format string

// Formats Import recognises.
const (
	// FormatSilas is Silas's own SKILL.md (and plain Agent Skills with only
	// name and description).
	FormatSilas Format = "silas"
	// FormatOpenAI is an OpenAI/Codex skill (agents/openai.yaml,
	// metadata.short-description).
	FormatOpenAI Format = "openai"
	// FormatClaude is a Claude skill (allowed-tools, context, hooks, ...).
	FormatClaude Format = "claude"
	// FormatOpenClaw is an OpenClaw/ClawHub skill (metadata.openclaw,
	// top-level version).
	FormatOpenClaw Format = "openclaw"
)

// TransformationReport is the spec's transformation_report (10.4.1 step
// 5): where an imported skill came from and everything the import changed,
// shown with the validation report on the skill_install card. Every list
// is present (possibly empty) in JSON.
type TransformationReport struct {
	Source ImportSource `json:"source"`
	// Name is the skill's name after normalisation; StagedDir is where the
	// adapted skill was written.
	Name      string `json:"name"`
	StagedDir string `json:"staged_dir"`

	RemovedFields    []FieldChange   `json:"removed_fields"`
	TranslatedFields []FieldChange   `json:"translated_fields"`
	RewrittenScripts []ScriptRewrite `json:"rewritten_scripts"`
	MovedFiles       []FileMove      `json:"moved_files"`
	DroppedFiles     []DroppedFile   `json:"dropped_files"`
	RemovedSecrets   []SecretRemoval `json:"removed_secrets"`
	ManualReview     []ReviewItem    `json:"manual_review"`
}

// ImportSource identifies the imported source.
type ImportSource struct {
	// URI is file://<absolute path>.
	URI string `json:"uri"`
	// Commit is the git commit checked out in the source's repository ("" when
	// it is not in a git working tree).
	Commit string `json:"commit"`
	Format Format `json:"format"`
	// DetectedBy lists the signals the format was recognised by.
	DetectedBy []string `json:"detected_by"`
}

// FieldChange is a front matter field removed or translated.
type FieldChange struct {
	Field string `json:"field"`
	// To is the Silas field it became (translations only).
	To     string `json:"to,omitempty"`
	Reason string `json:"reason"`
}

// ScriptRewrite is a shell script given a Python entry point.
type ScriptRewrite struct {
	Original   string   `json:"original"`
	Entrypoint string   `json:"entrypoint"`
	Args       []string `json:"args"`
	Reason     string   `json:"reason"`
}

// FileMove is a file moved into the Silas layout.
type FileMove struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// DroppedFile is a source file left out of the import.
type DroppedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// SecretRemoval is a credential removed from a file; the value is never
// recorded.
type SecretRemoval struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Kind string `json:"kind"`
}

// ReviewItem is something the owner should check before approving.
type ReviewItem struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func newReport() TransformationReport {
	return TransformationReport{
		Source:           ImportSource{DetectedBy: []string{}},
		RemovedFields:    []FieldChange{},
		TranslatedFields: []FieldChange{},
		RewrittenScripts: []ScriptRewrite{},
		MovedFiles:       []FileMove{},
		DroppedFiles:     []DroppedFile{},
		RemovedSecrets:   []SecretRemoval{},
		ManualReview:     []ReviewItem{},
	}
}

func (r *TransformationReport) removed(field, reason string) {
	r.RemovedFields = append(r.RemovedFields, FieldChange{Field: field, Reason: reason})
}

func (r *TransformationReport) translated(field, to, reason string) {
	r.TranslatedFields = append(r.TranslatedFields, FieldChange{Field: field, To: to, Reason: reason})
}

func (r *TransformationReport) review(file string, line int, msg string) {
	r.ManualReview = append(r.ManualReview, ReviewItem{File: file, Line: line, Message: msg})
}
