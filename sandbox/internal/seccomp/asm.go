package seccomp

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// asm assembles a classic BPF program with symbolic jump targets, so the
// program reads as a list of decisions and no offset is counted by hand.
type asm struct {
	insns  []insn
	labels map[string]int
}

// insn is one instruction; jt and jf name labels ("" is the next one).
type insn struct {
	f      unix.SockFilter
	jt, jf string
}

func newAsm() *asm { return &asm{labels: map[string]int{}} }

// label names the position of the next instruction.
func (a *asm) label(name string) { a.labels[name] = len(a.insns) }

// load loads the 32-bit word at offset off of struct seccomp_data.
func (a *asm) load(off uint32) {
	a.insns = append(a.insns, insn{f: unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}})
}

// ret returns action.
func (a *asm) ret(action uint32) {
	a.insns = append(a.insns, insn{f: unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: action}})
}

// jump compares the accumulator with k (op is BPF_JEQ, BPF_JGE or BPF_JSET)
// and goes to jt when true, jf when false.
func (a *asm) jump(op uint16, k uint32, jt, jf string) {
	a.insns = append(a.insns, insn{f: unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k}, jt: jt, jf: jf})
}

// assemble resolves the labels. Classic BPF only jumps forward, at most 255
// instructions.
func (a *asm) assemble() ([]unix.SockFilter, error) {
	out := make([]unix.SockFilter, len(a.insns))
	for i, in := range a.insns {
		f := in.f
		var err error
		if f.Jt, err = a.offset(i, in.jt); err != nil {
			return nil, err
		}
		if f.Jf, err = a.offset(i, in.jf); err != nil {
			return nil, err
		}
		out[i] = f
	}
	if len(out) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp: program of %d instructions is too long", len(out))
	}
	return out, nil
}

func (a *asm) offset(from int, label string) (uint8, error) {
	if label == "" {
		return 0, nil
	}
	to, ok := a.labels[label]
	if !ok {
		return 0, fmt.Errorf("seccomp: undefined label %q", label)
	}
	d := to - from - 1
	if d < 0 || d > 255 {
		return 0, fmt.Errorf("seccomp: jump from %d to %q (%d) out of range", from, label, to)
	}
	return uint8(d), nil
}
