package mcpserver

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/runtime"
)

// progress turns run events into MCP progress notifications: one per
// finished top-level step, plus batch item progress inside a step. The
// progress value only ever increases, as the spec requires.
type progress struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any
	total int

	mu   sync.Mutex
	done int
	last float64
}

func newProgress(ctx context.Context, ss *mcp.ServerSession, token any, total int) *progress {
	return &progress{ctx: ctx, ss: ss, token: token, total: total}
}

func (p *progress) send(v float64, msg string) {
	p.mu.Lock()
	if v <= p.last {
		p.mu.Unlock()
		return
	}
	p.last = v
	p.mu.Unlock()
	if p.ss == nil {
		return
	}
	_ = p.ss.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: v, Total: float64(p.total), Message: msg})
}

func (p *progress) StepStarted(ev runtime.StepEvent) {}

func (p *progress) StepFinished(ev runtime.StepEvent, s *runtime.Step) {
	if ev.Depth != 0 {
		return
	}
	p.mu.Lock()
	p.done++
	n := p.done
	p.mu.Unlock()
	status := "done"
	if s != nil && s.Status != "" {
		status = s.Status
	}
	p.send(float64(n), fmt.Sprintf("step %d/%d '%s' (%s): %s", n, p.total, ev.NodeID, ev.Type, status))
}

func (p *progress) BatchProgress(ev runtime.StepEvent, done, total int) {
	if ev.Depth != 0 || total <= 0 {
		return
	}
	p.mu.Lock()
	base := p.done
	p.mu.Unlock()
	p.send(float64(base)+float64(done)/float64(total+1), fmt.Sprintf("step '%s': %d/%d items", ev.NodeID, done, total))
}
