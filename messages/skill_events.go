package messages

import (
	"encoding/json"
	"time"
)

// Event types of the skill install flow (spec 10.4). A skill install card
// travels as an approval_request whose scope is skill_install, so every
// client that answers plan approvals (the PWA's Review, `silas chat`)
// answers it with the same approval_response frame.
const (
	// EventSkillInstallResult tells the owner's connections how an install
	// they were asked about ended (installed, declined, expired, failed).
	EventSkillInstallResult = "skill_install_result"
)

// Outcomes of a skill install request (SkillInstallResultEvent.Status).
const (
	SkillInstallInstalled  = "installed"
	SkillInstallDeclined   = "declined"
	SkillInstallExpired    = "expired"
	SkillInstallDryRunFail = "dry_run_failed"
	SkillInstallFailed     = "failed"
)

// SkillInstallRequestEvent is the skill_install Review card (server event
// `approval_request` with scope "skill_install"): everything the owner
// approves, namely SKILL.md, every script's content, the validation_report
// and, for an import, the transformation_report. The client answers with
// approval_response {request_id, verdict}. RiskLevel is "high": installing
// code needs the slide on the PWA. ExpiresAt is when the server declines it
// unanswered (silas.approval.request_timeout_seconds).
type SkillInstallRequestEvent struct {
	Type      string        `json:"type"`
	RequestID string        `json:"request_id"`
	Scope     ApprovalScope `json:"scope"`
	Title     string        `json:"title"`
	Body      string        `json:"body"`
	RiskLevel string        `json:"risk_level"`
	ExpiresAt time.Time     `json:"expires_at"`
	Skill     SkillCard     `json:"skill"`
	// Card is the card contract of spec 0.5.3 (runtime/review).
	Card *CardContract `json:"card,omitempty"`
}

// SkillCard is what a skill_install card shows of one skill. The approval
// binds Hash, the skill hash over every file listed in Files.
type SkillCard struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description"`
	Activation  string `json:"activation"`
	// Origin says who asked: "local" (an owner-written directory),
	// "imported" (spec 10.4.1) or "skill-maker" (spec 10.5).
	Origin string `json:"origin"`
	// Dir is the directory the skill was validated from.
	Dir  string `json:"dir"`
	Hash string `json:"hash"`
	// Replaces is the hash of the installed version this one replaces, ""
	// for a new skill.
	Replaces string `json:"replaces,omitempty"`
	// SkillMD is SKILL.md exactly as it will be installed.
	SkillMD string `json:"skill_md"`
	// Scripts are the files under scripts/ with their content.
	Scripts []SkillCardFile `json:"scripts"`
	// Files lists every file the hash covers (content only for text files
	// outside scripts/ that are small enough to show).
	Files []SkillCardFile `json:"files"`
	// DryRuns are the script calls that run in the sandbox after approval
	// and before the skill is installed.
	DryRuns []string `json:"dry_runs"`
	// ValidationReport is the skills.ValidationReport of spec 10.4 step 3.
	ValidationReport json.RawMessage `json:"validation_report"`
	// TransformationReport is the skills.TransformationReport of an import
	// (spec 10.4.1 step 5); absent otherwise.
	TransformationReport json.RawMessage `json:"transformation_report,omitempty"`
}

// SkillCardFile is one file of a SkillCard.
type SkillCardFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	// Content is the file's text; empty with Binary for files that are not
	// UTF-8 text, and with Omitted for text too long to show.
	Content string `json:"content,omitempty"`
	Binary  bool   `json:"binary,omitempty"`
	Omitted bool   `json:"omitted,omitempty"`
}

// SkillInstallResultEvent reports how a skill install request ended (server
// event `skill_install_result`). Detail says why for anything but
// installed, in words the owner can act on. Name is the skill's name (not
// "skill", which on the card is an object).
type SkillInstallResultEvent struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Hash      string `json:"hash,omitempty"`
	Detail    string `json:"detail,omitempty"`
}

// SkillRemoved says that the owner removed an installed skill: its record
// and files are gone, so work that uses it can no longer run. Sender: the
// SkillInstaller, to the Stream, which forwards it to every scope; a Scope
// forwards it to its running work items. A WorkItem whose skills include
// Name ends blocked with Reason.
type SkillRemoved struct {
	Name   string
	Hash   string
	Reason string
}
