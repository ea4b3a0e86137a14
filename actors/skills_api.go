package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/silas-ai/silas/messages"
)

// The SkillInstaller as the owner's HTTP endpoints call it (silas skills
// install|import|remove).

// skillCallTimeout bounds a call without a deadline: validation runs the
// Python syntax check in a sandbox, which may take a while on a loaded host.
const skillCallTimeout = 2 * time.Minute

// askSkills sends msg to the SkillInstaller and waits for its reply until
// ctx ends.
func (s *System) askSkills(ctx context.Context, msg any) (any, error) {
	if s.d.skills == nil {
		return nil, ErrSkillsUnavailable
	}
	timeout := skillCallTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	if timeout <= 0 {
		return nil, context.DeadlineExceeded
	}
	res, err := s.d.sys.Root.RequestFuture(s.d.skills, msg, timeout).Result()
	if err != nil {
		return nil, fmt.Errorf("ask the skill installer: %w", err)
	}
	return res, nil
}

// InstallSkill validates the skill directory of req and, when it passes,
// puts its skill_install card to the owner; it returns once the card is
// out (answer.RequestID) or refused (answer.Err, with the report when
// validation failed). The install itself happens when the owner approves.
func (s *System) InstallSkill(ctx context.Context, req InstallSkill) (*SkillInstallAnswer, error) {
	req.Notify = nil
	res, err := s.askSkills(ctx, &req)
	if err != nil {
		return nil, err
	}
	a, ok := res.(*SkillInstallAnswer)
	if !ok {
		return nil, fmt.Errorf("ask the skill installer: unexpected answer %T", res)
	}
	return a, nil
}

// RemoveSkill uninstalls a skill: its record, then its files under
// skills_dir; work items that use it end blocked (messages.SkillRemoved).
// Bundled skills are refused (ErrSkillBundled).
func (s *System) RemoveSkill(ctx context.Context, name string) (*SkillRemoveAnswer, error) {
	res, err := s.askSkills(ctx, &RemoveSkill{Name: name})
	if err != nil {
		return nil, err
	}
	a, ok := res.(*SkillRemoveAnswer)
	if !ok {
		return nil, fmt.Errorf("ask the skill installer: unexpected answer %T", res)
	}
	return a, nil
}

// SkillRequests returns the skill_install cards waiting for the owner and
// how the recent requests ended, both oldest first.
func (s *System) SkillRequests(ctx context.Context) ([]messages.SkillInstallRequestEvent, []SkillInstallOutcome, error) {
	res, err := s.askSkills(ctx, &skillRequestsQuery{})
	if err != nil {
		return nil, nil, err
	}
	r, ok := res.(*skillRequestsReply)
	if !ok {
		return nil, nil, fmt.Errorf("ask the skill installer: unexpected answer %T", res)
	}
	return r.pending, r.outcomes, nil
}
