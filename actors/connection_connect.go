package actors

import (
	"errors"
	"fmt"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/skills/connection"
)

// connectCommand starts the owner's chat command that proposes a service
// connection: /connect <skill> [name=<label>] [key=value ...]. Settings
// are not secret; the setup asks for secrets through the secure form.
const connectCommand = "/connect"

// isConnectCommand reports whether an owner message is the command.
func isConnectCommand(text string) bool {
	return text == connectCommand || strings.HasPrefix(text, connectCommand+" ")
}

// parseConnect reads the command's arguments.
func parseConnect(text string) (*ProposeConnection, error) {
	fields := strings.Fields(strings.TrimPrefix(text, connectCommand))
	if len(fields) == 0 {
		return nil, errors.New("usage: /connect <skill> [name=<label>] [setting=value ...]; `silas skills list` shows the connection skills")
	}
	p := &ProposeConnection{Skill: fields[0], Settings: map[string]any{}}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not setting=value", f)
		}
		switch {
		case k == "name":
			p.Name = v
		case k == "permission":
			p.Permissions = append(p.Permissions, messages.ConnectionPermission(v))
		case connection.SecretKey(k):
			return nil, fmt.Errorf("%s looks like a secret, and chat messages are stored; leave it out: the setup asks for secrets through the secure form", k)
		default:
			p.Settings[k] = v
		}
	}
	return p, nil
}

// onConnectCommand proposes the connection; the answer comes back as a
// ConnectionAnswer (onConnectAnswer). The command is not a turn: no model
// sees it, and what follows are cards.
func (c *Connection) onConnectCommand(ctx actor.Context, f *messages.Frame) {
	p, err := parseConnect(f.Text)
	if err != nil {
		c.out.Send(webError(messages.CodeBadRequest, err.Error(), f.Type))
		return
	}
	ctx.Request(c.d.connections, p)
}

func (c *Connection) onConnectAnswer(a *ConnectionAnswer) {
	if a.Err != nil {
		c.out.Send(webError(messages.CodeBadRequest, a.Err.Error(), messages.TypeMessage))
		return
	}
	c.out.Send(&messages.ConnectionStatusEvent{Type: messages.EventConnectionStatus, ConnectionID: a.Connection.ConnectionID,
		Name: a.Connection.Name, Status: a.Connection.Status,
		Detail: "Silas is checking the service; approve the \"Connect to ...?\" card to sign in."})
}
