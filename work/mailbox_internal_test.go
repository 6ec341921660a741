package work

import (
	"context"
	"crypto/sha256"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// item returns the registry's record of a visible Work.
func (s *Engine) itemFor(o Owner, id string) *item {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owners[o.id].items.get(id)
}

// startBlocked starts an agent Work whose child blocks until release is
// closed and hands back its Execution once it runs.
func startBlocked(t *testing.T, s *Engine, o Owner, release chan struct{}) (Ref, *Execution) {
	t.Helper()
	exc := make(chan *Execution, 1)
	ref, err := s.Start(context.Background(), Spec{Owner: o, Target: Target{Label: "research", Kind: KindAgent},
		Run: func(ctx context.Context) (string, error) {
			ex, _ := ExecutionFrom(ctx)
			exc <- ex
			<-release
			return "", nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return ref, <-exc
}

func TestEngineHoldsNoGuidanceAfterDrain(t *testing.T) {
	s := New()
	defer s.Close(context.Background())
	o := NewOwner("coord")
	release := make(chan struct{})
	defer close(release)
	ref, ex := startBlocked(t, s, o, release)
	msgs := []string{"first secret", "second secret", "third secret"}
	for i, m := range msgs {
		if _, err := s.Send(t.Context(), o, ref.ID, "call-"+string(rune('a'+i)), m); err != nil {
			t.Fatal(err)
		}
	}
	it := s.itemFor(o, ref.ID)
	s.mu.Lock()
	queued := slices.Clone(it.mb.queued)
	s.mu.Unlock()
	if !slices.Equal(queued, msgs) {
		t.Fatalf("mailbox = %q", queued)
	}
	s.mu.Lock()
	where := findText(reflect.ValueOf(it).Elem(), msgs, "item")
	s.mu.Unlock()
	if where != "item.mb.queued[]" {
		t.Fatalf("walker found the queued text at %q, want item.mb.queued[]", where)
	}
	got := ex.guidance()
	if !slices.Equal(got, msgs) {
		t.Fatalf("drained %q", got)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if it.mb.queued != nil || it.mb.bytes != 0 {
		t.Fatalf("engine still holds %q (cap %d, %d bytes)", it.mb.queued, cap(it.mb.queued), it.mb.bytes)
	}
	assertNoText(t, reflect.ValueOf(it).Elem(), msgs, "item")
	assertNoText(t, reflect.ValueOf(s).Elem(), msgs, "engine") // its own fields: Works are walked as roots
}

func TestCommandRecordsHoldOnlyADigest(t *testing.T) {
	s := New()
	defer s.Close(context.Background())
	o := NewOwner("coord")
	release := make(chan struct{})
	defer close(release)
	ref, _ := startBlocked(t, s, o, release)
	const text = "please also check the appendix"
	if _, err := s.Send(t.Context(), o, ref.ID, "call-1", text); err != nil {
		t.Fatal(err)
	}
	it := s.itemFor(o, ref.ID)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := it.mb.records[sha256.Sum256([]byte("call-1"))]
	if !ok {
		t.Fatal("no command record under the digest of the command id")
	}
	if c.digest != sha256.Sum256([]byte(text)) {
		t.Fatal("digest is not the SHA-256 of the text")
	}
	assertNoText(t, reflect.ValueOf(it.mb.records), []string{text, "call-1"}, "records")
	assertNoText(t, reflect.ValueOf(it.mb.order), []string{text, "call-1"}, "order")
	// The digest is the only field that depends on the text.
	if n := reflect.TypeOf(c).NumField(); n != 3 {
		t.Fatalf("record has %d fields; review this test", n)
	}
}

// assertNoText fails if any string reachable from v contains one of texts.
func assertNoText(t *testing.T, v reflect.Value, texts []string, path string) {
	t.Helper()
	if where := findText(v, texts, path); where != "" {
		t.Fatalf("%s holds guidance text", where)
	}
}

// findText walks v (the engine's own types; not into the owner or the
// Engine) and returns the path of the first string containing one of
// texts, or "".
func findText(v reflect.Value, texts []string, path string) string {
	const pkg = "github.com/agentwork/agentwork/work"
	switch v.Kind() {
	case reflect.String:
		for _, s := range texts {
			if strings.Contains(v.String(), s) {
				return path
			}
		}
	case reflect.Struct:
		if v.Type().PkgPath() != pkg {
			return "" // sync, time, context: no strings of ours
		}
		for i := range v.NumField() {
			if w := findText(v.Field(i), texts, path+"."+v.Type().Field(i).Name); w != "" {
				return w
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if w := findText(v.Index(i), texts, path+"[]"); w != "" {
				return w
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if w := findText(it.Key(), texts, path+"{key}"); w != "" {
				return w
			}
			if w := findText(it.Value(), texts, path+"{}"); w != "" {
				return w
			}
		}
	case reflect.Pointer:
		// Not into other Works (lender, borrower), scopes or owners:
		// they are walked as their own roots.
		if e := v.Type().Elem(); !v.IsNil() && e.PkgPath() == pkg && e.Name() != "ownerState" && e.Name() != "Engine" &&
			e.Name() != "item" && e.Name() != "scope" {
			return findText(v.Elem(), texts, path)
		}
	}
	return ""
}

// TestCommandRecordsDroppedAtDetachAndEviction: a detached Work keeps no
// command records (its owner can no longer replay), nor does an evicted
// one.
func TestCommandRecordsDroppedAtDetachAndEviction(t *testing.T) {
	s := New(WithRetention(1, 0))
	defer s.Close(context.Background())
	o := NewOwner("coord")
	release := make(chan struct{})
	ref, _ := startBlocked(t, s, o, release)
	if _, err := s.Send(t.Context(), o, ref.ID, "call-1", "text"); err != nil {
		t.Fatal(err)
	}
	it := s.itemFor(o, ref.ID)
	if _, err := s.Detach(t.Context(), o, ref.ID); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	if it.mb.records != nil || it.mb.order != nil {
		t.Errorf("a detached Work keeps %d command records", len(it.mb.records))
	}
	s.mu.Unlock()
	close(release)

	release2 := make(chan struct{})
	close(release2)
	ref2, _ := startBlocked(t, s, o, release2)
	s.Send(t.Context(), o, ref2.ID, "call-2", "text") // may find it terminal already
	if _, _, err := s.Result(context.Background(), o, ref2.ID, MaxResultWait); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	it2 := s.owners[o.id].items.get(ref2.ID)
	s.mu.Unlock()
	ref3, _ := startBlocked(t, s, o, release2)
	if _, _, err := s.Result(context.Background(), o, ref3.ID, MaxResultWait); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owners[o.id].items.get(ref2.ID) != nil {
		t.Fatal("not evicted")
	}
	if it2.mb != nil {
		t.Error("an evicted Work keeps its mailbox")
	}
}
