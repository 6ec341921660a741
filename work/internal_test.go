package work

import (
	"context"
	"crypto/sha256"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// item returns the registry's record of a visible Work.
func (s *Supervisor) itemFor(o Owner, id string) *item {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owners[o.id].items[id]
}

// startBlocked starts an agent Work whose child blocks until release is
// closed and hands back its Execution once it runs.
func startBlocked(t *testing.T, s *Supervisor, o Owner, release chan struct{}) (Ref, *Execution) {
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
		if _, err := s.Send(o, ref.ID, "call-"+string(rune('a'+i)), m); err != nil {
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
	got := ex.Guidance()
	if !slices.Equal(got, msgs) {
		t.Fatalf("drained %q", got)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if it.mb.queued != nil || it.mb.bytes != 0 {
		t.Fatalf("engine still holds %q (cap %d, %d bytes)", it.mb.queued, cap(it.mb.queued), it.mb.bytes)
	}
	assertNoText(t, reflect.ValueOf(it).Elem(), msgs, "item")
}

func TestCommandRecordsHoldOnlyADigest(t *testing.T) {
	s := New()
	defer s.Close(context.Background())
	o := NewOwner("coord")
	release := make(chan struct{})
	defer close(release)
	ref, _ := startBlocked(t, s, o, release)
	const text = "please also check the appendix"
	if _, err := s.Send(o, ref.ID, "call-1", text); err != nil {
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
// Supervisor) and returns the path of the first string containing one of
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
		if e := v.Type().Elem(); !v.IsNil() && e.PkgPath() == pkg && e.Name() != "ownerState" && e.Name() != "Supervisor" &&
			e.Name() != "item" && e.Name() != "scope" {
			return findText(v.Elem(), texts, path)
		}
	}
	return ""
}

func TestTopKMatchesFullSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 5, 12, 13, 100, 1000} {
		m := map[string]*item{}
		for i := range n {
			it := &item{seq: uint64(r.IntN(50)), state: States[r.IntN(len(States))], hasOutput: r.IntN(2) == 0, read: r.IntN(2) == 0}
			m[string(rune(i))+newID()] = it
		}
		better := func(a, b *item) bool {
			if pa, pb := a.priority(), b.priority(); pa != pb {
				return pa < pb
			}
			return a.seq > b.seq
		}
		for _, k := range []int{1, 12, 50} {
			got := topK(m, k, better)
			all := make([]*item, 0, n)
			for _, it := range m {
				all = append(all, it)
			}
			slices.SortStableFunc(all, func(a, b *item) int {
				if better(a, b) {
					return -1
				}
				if better(b, a) {
					return 1
				}
				return 0
			})
			if len(got) != min(k, n) {
				t.Fatalf("n=%d k=%d: %d items", n, k, len(got))
			}
			for i := range got {
				if better(got[i], all[i]) || better(all[i], got[i]) {
					t.Fatalf("n=%d k=%d: position %d differs", n, k, i)
				}
			}
		}
	}
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
	if _, err := s.Send(o, ref.ID, "call-1", "text"); err != nil {
		t.Fatal(err)
	}
	it := s.itemFor(o, ref.ID)
	if _, err := s.Detach(o, ref.ID); err != nil {
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
	s.Send(o, ref2.ID, "call-2", "text") // may find it terminal already
	if _, _, err := s.Result(context.Background(), o, ref2.ID, MaxResultWait); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	it2 := s.owners[o.id].items[ref2.ID]
	s.mu.Unlock()
	ref3, _ := startBlocked(t, s, o, release2)
	if _, _, err := s.Result(context.Background(), o, ref3.ID, MaxResultWait); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.owners[o.id].items[ref2.ID]; ok {
		t.Fatal("not evicted")
	}
	if it2.mb != nil {
		t.Error("an evicted Work keeps its mailbox")
	}
}

// terminalIDs is an Observer that hands out the id of each Work that
// reaches a terminal state.
type terminalIDs struct {
	NopObserver
	ch chan string
}

func (o terminalIDs) Event(_ context.Context, e Event) {
	if e.To.Terminal() && e.Type == EventType(e.To) {
		o.ch <- e.WorkID
	}
}

// TestEvictionClassCounts: through random completions, failures, reads,
// detaches and evictions, an owner's per-class counts always match its
// terminal list (eviction relies on them to pick its class).
func TestEvictionClassCounts(t *testing.T) {
	ctx := context.Background()
	obs := terminalIDs{ch: make(chan string, 1)}
	s := New(WithObserver(obs), WithRetention(5, 0), WithMaxStarts(0))
	defer s.Close(ctx)
	o := NewOwner("coord")
	rng := rand.New(rand.NewPCG(1, 2))
	var ids []string
	check := func() {
		t.Helper()
		s.mu.Lock()
		defer s.mu.Unlock()
		os := s.owners[o.id]
		var want [evictUnread + 1]int
		for it := os.terminal.front(); it != nil; it = it.next {
			want[it.evictClass()]++
		}
		if os.classes != want {
			t.Fatalf("class counts %v, the list holds %v", os.classes, want)
		}
	}
	for range 500 {
		switch k := rng.IntN(4); {
		case k <= 1:
			failed := k == 1
			ref, err := s.Start(ctx, Spec{Owner: o, Target: Target{Label: "f", Kind: KindFunction},
				Run: func(context.Context) (string, error) {
					if failed {
						return "", context.DeadlineExceeded
					}
					return "x", nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			<-obs.ch // terminal, unread
			ids = append(ids, ref.ID)
		case k == 2 && len(ids) > 0:
			s.Detach(o, ids[rng.IntN(len(ids))])
		case len(ids) > 0:
			s.Result(ctx, o, ids[rng.IntN(len(ids))], 0)
		}
		check()
	}
}

// TestItemSizeClass: a Work's record stays within the allocator's
// 896-byte size class (the next one is 1024 bytes: 15% more memory per
// queued Work and per retained result).
func TestItemSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(item{}); n > 896 {
		t.Fatalf("item is %d bytes, over the 896-byte size class", n)
	}
}
