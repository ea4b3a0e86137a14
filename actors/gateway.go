package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
)

// gateway attaches a Connection actor to every new WebSocket.
type gateway struct {
	d *shared
}

var _ messages.Gateway = (*gateway)(nil)

// connectionGuardian stops a Connection that panics instead of restarting
// it: a restarted one would start over, and a customer would silently get
// a new scope and session token. The stopped actor closes its socket with
// closeInternal (Connection.Receive), and the client reconnects and
// resumes its session with its token.
func connectionGuardian() actor.SupervisorStrategy {
	return actor.NewOneForOneStrategy(0, 0, func(any) actor.Directive { return actor.StopDirective })
}

// Attach spawns the socket's Connection actor.
func (g *gateway) Attach(info messages.ConnInfo, out messages.Outbound) messages.Conn {
	props := actor.PropsFromProducer(func() actor.Actor { return newConnection(g.d, info, out) },
		append(g.d.props, actor.WithGuardian(connectionGuardian()))...)
	pid := g.d.sys.Root.SpawnPrefix(props, "conn/")
	return &conn{root: g.d.sys.Root, pid: pid}
}

// conn forwards what the transport reads to the Connection actor.
type conn struct {
	root *actor.RootContext
	pid  *actor.PID
}

func (c *conn) Frame(f *messages.Frame) { c.root.Send(c.pid, f) }
func (c *conn) Closed()                 { c.root.Send(c.pid, &connClosed{}) }
