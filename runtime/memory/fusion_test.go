package memory

import (
	"math"
	"slices"
	"testing"
)

func ids(f []Fused) []string {
	out := make([]string, len(f))
	for i := range f {
		out[i] = f[i].ID
	}
	return out
}

func TestFuse(t *testing.T) {
	tests := []struct {
		name  string
		lists []List
		limit int
		want  []string
	}{
		{
			name: "agreement beats one first place",
			lists: []List{
				{Name: "keyword", IDs: []string{"a", "b"}, Admits: true},
				{Name: "semantic", IDs: []string{"c", "b"}, Admits: true},
			},
			limit: 10, want: []string{"b", "a", "c"},
		},
		{
			name: "a list that does not admit only re-ranks",
			lists: []List{
				{Name: "keyword", IDs: []string{"old", "new"}, Admits: true},
				{Name: "session", IDs: []string{"newest", "new", "x", "old"}},
			},
			limit: 10, want: []string{"new", "old"},
		},
		{
			name: "weight",
			lists: []List{
				{Name: "keyword", IDs: []string{"a"}, Admits: true},
				{Name: "semantic", IDs: []string{"b"}, Admits: true, Weight: 2},
			},
			limit: 10, want: []string{"b", "a"},
		},
		{
			name: "bounded by limit, ties by best rank then id",
			lists: []List{
				{Name: "keyword", IDs: []string{"z", "y"}, Admits: true},
				{Name: "semantic", IDs: []string{"x", "w"}, Admits: true},
			},
			limit: 3, want: []string{"x", "z", "w"},
		},
		{
			name:  "repeats count once",
			lists: []List{{Name: "keyword", IDs: []string{"a", "a", "b"}, Admits: true}},
			limit: 5, want: []string{"a", "b"},
		},
		{name: "nothing", lists: nil, limit: 5, want: []string{}},
		{name: "zero limit", lists: []List{{Name: "k", IDs: []string{"a"}, Admits: true}}, limit: 0, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(Fuse(tt.lists, tt.limit))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Fuse = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFuseScoreAndLists(t *testing.T) {
	got := Fuse([]List{
		{Name: "keyword", IDs: []string{"a"}, Admits: true},
		{Name: "temporal", IDs: []string{"b", "a"}, Admits: true},
	}, 5)
	if got[0].ID != "a" || math.Abs(got[0].Score-(1.0/61+1.0/62)) > 1e-12 || !slices.Equal(got[0].Lists, []string{"keyword", "temporal"}) {
		t.Fatalf("got %+v", got[0])
	}
}
