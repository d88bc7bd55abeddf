package files_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

func TestVectorsRoundTrip(t *testing.T) {
	sc := memory.Scope{UserID: "u1"}
	a := []memory.PageVector{{TurnID: "t1", Vector: []float32{0.6, 0.8}}, {TurnID: "t2", Vector: []float32{1, 0}}}
	b := []memory.PageVector{{TurnID: "t3", Vector: []float32{0, -1}}}
	tests := []struct {
		name  string
		saves []struct {
			model string
			vecs  []memory.PageVector
		}
		model string
		want  []memory.PageVector
	}{
		{"nothing stored", nil, "m/2", nil},
		{"appends accumulate", []struct {
			model string
			vecs  []memory.PageVector
		}{{"m/2", a}, {"m/2", b}}, "m/2", append(append([]memory.PageVector{}, a...), b...)},
		{"another model's vectors are not returned", []struct {
			model string
			vecs  []memory.PageVector
		}{{"m/2", a}}, "other/2", nil},
		{"a new model replaces the old vectors", []struct {
			model string
			vecs  []memory.PageVector
		}{{"m/2", a}, {"n/2", b}}, "n/2", b},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mustOpen(t, t.TempDir())
			for _, sv := range tc.saves {
				if err := s.SaveVectors(t.Context(), sc, sv.model, sv.vecs); err != nil {
					t.Fatalf("SaveVectors() = %v", err)
				}
			}
			got, err := s.LoadVectors(t.Context(), sc, tc.model)
			if err != nil {
				t.Fatalf("LoadVectors() = %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("LoadVectors(%q) = %v, want %v", tc.model, got, tc.want)
			}
		})
	}
}

func TestVectorsTornTail(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	sc := memory.Scope{UserID: "u1"}
	first := []memory.PageVector{{TurnID: "t1", Vector: []float32{1, 2, 3}}}
	if err := s.SaveVectors(t.Context(), sc, "m", first); err != nil {
		t.Fatalf("SaveVectors() = %v", err)
	}
	path := filepath.Join(dir, "users", "u1", "vectors.bin")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{2, 't', '9', 3, 0, 0}) // a record cut short by a crash
	f.Close()
	got, err := s.LoadVectors(t.Context(), sc, "m")
	if err != nil || !reflect.DeepEqual(got, first) {
		t.Fatalf("LoadVectors() = %v, %v; want %v", got, err, first)
	}
	second := []memory.PageVector{{TurnID: "t2", Vector: []float32{4, 5, 6}}}
	if err := s.SaveVectors(t.Context(), sc, "m", second); err != nil {
		t.Fatalf("SaveVectors() = %v", err)
	}
	got, err = s.LoadVectors(t.Context(), sc, "m")
	if want := append(first, second...); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("LoadVectors() after append = %v, %v; want %v", got, err, want)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("vectors file mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
}

func TestReplaceVectors(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	sc := memory.Scope{UserID: "u1"}
	old := []memory.PageVector{{TurnID: "t1", Vector: []float32{1}}, {TurnID: "t2", Vector: []float32{2}}}
	if err := s.SaveVectors(t.Context(), sc, "m", old); err != nil {
		t.Fatalf("SaveVectors() = %v", err)
	}
	keep := old[1:]
	if err := s.ReplaceVectors(t.Context(), sc, "m", keep); err != nil {
		t.Fatalf("ReplaceVectors() = %v", err)
	}
	got, err := s.LoadVectors(t.Context(), sc, "m")
	if err != nil || !reflect.DeepEqual(got, keep) {
		t.Errorf("LoadVectors() = %v, %v; want %v", got, err, keep)
	}
}
