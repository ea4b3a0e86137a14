package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/keys"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/skills"
	"github.com/silas-ai/silas/skills/connection"
)

// connScripts runs the scripts of connection skills for an attempt (spec
// 10.6): in a fresh sandbox with network access and the connection's
// credential as a file, never in the attempt's own instance, whose work
// dir and network the executor's other tools share.
type connScripts struct {
	reg     *connRegistry
	vault   *keys.Vault
	sandbox sandbox.Manager
	// used tells the manager a connection ran a script (its last use, and
	// its credential when the script renewed it).
	used func(id string)
	// ask sends a permission escalation to the manager; askTimeout bounds
	// the wait for the owner.
	ask        func(*permissionAsk)
	askTimeout time.Duration
}

// connUsed tells the ConnectionManager that a work item used a
// connection. Sender: an attempt's tool goroutine. The manager forwards it
// to the connection, which records when.
type connUsed struct{ id string }

func (a *Attempt) connScripts() *connScripts {
	root, pid := a.d.sys.Root, a.d.connections
	return &connScripts{reg: a.d.conns, vault: a.d.Vault, sandbox: a.d.Sandbox,
		used: func(id string) {
			if pid != nil {
				root.Send(pid, &connUsed{id: id})
			}
		},
		ask: func(q *permissionAsk) {
			if pid == nil {
				q.reply <- permissionVerdict{detail: "no connection manager runs"}
				return
			}
			root.Send(pid, q)
		},
		askTimeout: time.Duration(a.d.Config.Approval.RequestTimeoutSeconds) * time.Second,
	}
}

// run runs inv, a checked call of the connection skill as, for env.
func (c *connScripts) run(ctx context.Context, as *attemptSkill, inv skills.Invocation, env *messages.ExecutionEnvelope) *messages.ExecutionResult {
	fail := func(msg string) *messages.ExecutionResult { return failedResult(env, msg) }
	if c == nil || c.reg == nil || c.vault == nil {
		return fail("connection skills cannot run in this process: it has no keystore; run the work through `silas serve`")
	}
	conn, ok := c.reg.active(as.skill.Name)
	if !ok {
		return fail(fmt.Sprintf("no active connection uses skill %s; the owner connects it first (`silas connections add %s`, or ask in chat), then the work can run", as.skill.Name, as.skill.Name))
	}
	if msg := c.permit(ctx, conn, as, inv); msg != "" {
		return fail(msg)
	}
	cred, err := c.vault.Credential(conn.CredentialRef)
	if errors.Is(err, keys.ErrNotFound) {
		return fail(fmt.Sprintf("connection %s has no credential; reconnect it", conn.ConnectionID))
	}
	if err != nil {
		return fail("read the connection's credential: " + err.Error())
	}
	defer clear(cred)
	r := connection.Runner{Sandbox: c.sandbox, SkillDir: as.dir, ConnectionID: conn.ConnectionID, CredentialRef: conn.CredentialRef,
		Settings: conn.Settings, Credential: cred}
	p, err := r.Start(ctx, connection.Script{Path: inv.Script, Args: inv.Args, Timeout: sandbox.DefaultTimeout})
	if err != nil {
		return fail(err.Error())
	}
	close(p.Input())
	var stdout []byte
	for l := range p.Lines {
		if len(stdout) < messages.DefaultMaxOutputBytes {
			stdout = append(append(stdout, l...), '\n')
		}
	}
	out := p.Wait()
	c.used(conn.ConnectionID)
	if out.Changed && out.Problem == "" && out.Result.Success() {
		if err := c.vault.PutCredential(conn.CredentialRef, out.Credential); err != nil {
			return fail("the script renewed the credential, but it could not be stored: " + err.Error())
		}
	}
	clear(out.Credential)
	res := &messages.ExecutionResult{
		ExecutionID: env.ExecutionID, StepIndex: env.StepIndex, Success: out.OK(), ReturnValue: string(stdout),
		Content: []map[string]any{
			{"type": "stdout", "text": string(stdout), "truncated": len(stdout) >= messages.DefaultMaxOutputBytes},
			{"type": "stderr", "text": string(out.Result.Stderr), "truncated": out.Result.StderrTruncated},
			{"type": "exit", "exit_code": out.Result.ExitCode, "timed_out": out.Result.TimedOut},
		},
		Metadata:  map[string]any{"network_access": true, "connection_id": conn.ConnectionID},
		Artifacts: map[string]string{}, Taint: messages.TaintExternal,
	}
	if !out.OK() {
		msg := out.Describe()
		res.Error = &msg
	}
	return res
}

// connectionPermissionGate names the policy check of spec 5.10.2 in the
// results and the audit log.
const connectionPermissionGate = "connection_permission"

// permit is the connection_permission policy check: a call that needs
// more than the connection was granted waits for the owner's escalation
// card. It returns "" when the call may run, else why not.
func (c *connScripts) permit(ctx context.Context, conn messages.Connection, as *attemptSkill, inv skills.Invocation) string {
	need := needOf(as.skill, inv)
	tier, scopes := need.missing(conn)
	if tier == "" && len(scopes) == 0 {
		return ""
	}
	if c.ask == nil {
		return "blocked by the policy gate " + connectionPermissionGate + ": the connection lacks the permission and no one can be asked"
	}
	q := &permissionAsk{connID: conn.ConnectionID, tier: tier, scopes: scopes, reply: make(chan permissionVerdict, 1),
		reason: fmt.Sprintf("a work item wants to run %s %s", inv.Script, strings.Join(inv.Args, " "))}
	c.ask(q)
	wait := time.NewTimer(c.askTimeout)
	defer wait.Stop()
	select {
	case v := <-q.reply:
		if v.allowed {
			return ""
		}
		return fmt.Sprintf("blocked by the policy gate %s: the owner did not grant %s more access (%s); the call did not run, so do the work another way or explain why it cannot be done",
			connectionPermissionGate, conn.Name, v.detail)
	case <-wait.C:
		return "blocked by the policy gate " + connectionPermissionGate + ": nobody answered the permission card in time; the call did not run"
	case <-ctx.Done():
		return "not run: " + ctx.Err().Error()
	}
}

// onConnUsed forwards a work item's use to the connection.
func (m *ConnectionManager) onConnUsed(c actor.Context, u *connUsed) {
	if pid := m.children[u.id]; pid != nil {
		c.Send(pid, u)
	}
}
