package contextmgr

// renderStats is what the window remembers of its last Render to tell how
// much of it the next one repeats.
type renderStats struct {
	// subs are the subscription blocks of each zone last rendered.
	subs [len(renderOrder)]string
	// stable and size describe the last Render (see RenderStats).
	stable, size int
}

// noteRender records the parts of a Render of n bytes and how many of its
// leading bytes repeat the previous Render. A zone's blocks repeat as far
// as nothing before them changed (zoneState.intact); once a zone's text
// grew or changed, what follows has moved and counts as new.
func (w *Window) noteRender(parts *[2 * len(renderOrder)]string, n int) {
	stable := 0
	for k, z := range renderOrder {
		zs := &w.state[zoneIndex(z)]
		if zs.intact < zs.shown {
			stable += zs.intact
			break
		}
		stable += zs.shown
		if len(parts[2*k]) != zs.shown {
			break
		}
		subs, prev := parts[2*k+1], w.last.subs[k]
		if subs != prev {
			stable += commonPrefix(subs, prev)
			break
		}
		stable += len(subs)
	}
	for k, z := range renderOrder {
		zs := &w.state[zoneIndex(z)]
		zs.shown, zs.intact = len(parts[2*k]), len(parts[2*k])
		w.last.subs[k] = parts[2*k+1]
	}
	w.last.stable, w.last.size = stable, n
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// RenderStats returns the size in bytes of the last Render and how many of
// its leading bytes repeat the Render before it, byte for byte. A model
// provider's prompt cache reuses a prompt's longest cached prefix, so when
// the system prompt before it did not change, stable/size is the share of
// the rendered context the provider does not process again. The chronicle
// is rendered first and only appended to between evictions, and eviction
// leaves room in batches, so on most turns only the newest blocks, the
// memory zone and the workspace are new.
func (w *Window) RenderStats() (stable, size int) { return w.last.stable, w.last.size }
