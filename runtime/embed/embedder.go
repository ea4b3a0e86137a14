package embed

import (
	"context"
	"fmt"
	"math"
)

// Embedder turns texts into vectors. It is safe for concurrent use.
type Embedder interface {
	// Embed returns one unit-length vector per text, in the order of
	// texts, all of the same size. An empty texts returns nothing.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model names the vectors' space, e.g. "openai:text-embedding-3-small"
	// or "openai:text-embedding-3-small/256": vectors of different models
	// (or sizes) are never compared, so stored vectors whose Model differs
	// from the current one are embedded again.
	Model() string
}

// Normalize scales v to unit length in place. It fails for a vector with
// a non-finite value or no length, which no cosine can be taken of.
func Normalize(v []float32) error {
	var sum float64
	for i, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("value %d is %v: %w", i, x, ErrInvalidResponse)
		}
		sum += f * f
	}
	if sum == 0 || len(v) == 0 {
		return fmt.Errorf("vector of %d values has no length: %w", len(v), ErrInvalidResponse)
	}
	n := math.Sqrt(sum)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return nil
}
