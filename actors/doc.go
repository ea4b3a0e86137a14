// Package actors holds Silas's actors and is the only package that spawns or
// supervises them.
//
//	Stream (root supervisor: scopes by id, drain on shutdown)
//	└── Scope[scope_id]   one turn at a time, an ordered bounded queue of waiting messages
//	    ├── AgentLoop[proxy], AgentLoop[planner], AgentLoop[scorer]
//	    ├── GateLane[policy]    blocking gate checks of a turn
//	    ├── GateLane[quality]   advisory checks; never delay the answer, report to audit
//	    ├── WorkItem[id]        an approved task: the escalation ladder
//	    │   └── Attempt[n]      the executor agent and its sandboxed tool calls;
//	    │                       a panicking attempt is a failed attempt
//	    └── Project[id]         an approved project: its tasks in order, each a
//	        └── WorkItem[task]  WorkItem child with its own Attempts
//	Scheduler             the scheduled goals' verification cycles (gocron); pause, resume, remove
//	Consolidator          periodic memory consolidation (gocron)
//	VectorWriter          embeds memories off the turns for semantic search (when configured)
//	Audit                 single writer of the hash chain, group commit
//	Connection[id]        one per WebSocket (spawned through Gateway)
//
// Actors never block in Receive. IO (Badger, model calls, sandbox runs) runs
// in tracked goroutines whose results come back as messages tagged with the
// turn or attempt they belong to; results for a turn that is no longer
// current are dropped.
package actors
