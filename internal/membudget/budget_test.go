package membudget

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func TestANilBudgetHoldsNothingAndNeverWaits(t *testing.T) {
	var b *Budget
	h, err := b.Take(context.Background(), 1<<40)
	if err != nil || h != nil {
		t.Fatalf("take of a nil budget = %v, %v", h, err)
	}
	if err := h.Grow(context.Background(), 1<<40); err != nil {
		t.Fatal(err)
	}
	h.Release()
	if New("off", 0) != nil {
		t.Fatal("a budget of 0 bytes is no budget")
	}
}

func TestATakeWaitsForRoomAndIsNotRefused(t *testing.T) {
	b := New("test", 100)
	first, err := b.Take(context.Background(), 80)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *Hold)
	go func() {
		h, err := b.Take(context.Background(), 30)
		if err != nil {
			t.Error(err)
		}
		got <- h
	}()
	select {
	case <-got:
		t.Fatal("a take past the limit went ahead")
	case <-time.After(50 * time.Millisecond):
	}
	first.Release()
	second := <-got
	if b.Held() != 30 || b.Waits() != 1 {
		t.Fatalf("held %d, waits %d; want 30 and 1", b.Held(), b.Waits())
	}
	second.Release()
	// A take larger than the budget waits for an empty budget, then holds all of it.
	big, err := b.Take(context.Background(), 1000)
	if err != nil || big.Bytes() != 100 {
		t.Fatalf("take of more than the limit: %d bytes, %v", big.Bytes(), err)
	}
	big.Release()
	big.Release() // twice is harmless
	if b.Held() != 0 {
		t.Fatalf("held %d after every release", b.Held())
	}
}

func TestAWaitEndsWithItsContext(t *testing.T) {
	b := New("test", 10)
	h, _ := b.Take(context.Background(), 10)
	defer h.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := b.Take(ctx, 5); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("take = %v, want the context's deadline", err)
	}
}

func TestOneHoldOverdrawsWhileTheOthersWait(t *testing.T) {
	b := New("test", 100)
	a, _ := b.Take(context.Background(), 60)
	c, _ := b.Take(context.Background(), 40)
	// The budget is full: a grows past it (the overdraft), c waits for room.
	if err := a.Grow(context.Background(), 50); err != nil {
		t.Fatal(err)
	}
	grown := make(chan error)
	go func() { grown <- c.Grow(context.Background(), 10) }()
	select {
	case <-grown:
		t.Fatal("a second hold overdrew the budget")
	case <-time.After(50 * time.Millisecond):
	}
	// A fresh take waits behind the grower, even once bytes are free.
	took := make(chan *Hold)
	go func() { h, _ := b.Take(context.Background(), 1); took <- h }()
	a.Release()
	if err := <-grown; err != nil {
		t.Fatal(err)
	}
	h := <-took
	if b.Held() != 51 {
		t.Fatalf("held %d, want 51 (c's 50 and the take's 1)", b.Held())
	}
	c.Release()
	h.Release()
}

// Many holds growing at once in small steps, as bodies of unknown length are read: every one
// finishes (no deadlock), and the bytes held never pass the limit plus one hold's largest size.
func TestGrowingHoldsAlwaysFinishWithinTheBound(t *testing.T) {
	const limit, maxBody, holds = 1 << 20, 256 << 10, 64
	b := New("test", limit)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := range holds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 7))
			h, err := b.Take(ctx, 4<<10)
			if err != nil {
				t.Error(err)
				return
			}
			defer h.Release()
			size := r.Int64N(maxBody-4<<10) + 4<<10
			for h.Bytes() < size {
				if err := h.Grow(ctx, min(size-h.Bytes(), 8<<10)); err != nil {
					t.Error(err)
					return
				}
				if r.IntN(4) == 0 {
					time.Sleep(time.Duration(r.IntN(200)) * time.Microsecond)
				}
			}
		}()
	}
	wg.Wait()
	if b.Held() != 0 {
		t.Fatalf("held %d once all released", b.Held())
	}
	if b.Peak() > limit+maxBody {
		t.Fatalf("peak %d past the bound %d", b.Peak(), limit+maxBody)
	}
	if b.Waits() == 0 {
		t.Fatal("64 holds of up to 256 KiB in a 1 MiB budget never waited: the budget did not bind")
	}
}

// A take waiting for the whole budget is not passed for ever by small takes that would fit:
// once it waits, later takes wait behind it.
func TestTakesAreServedInTheOrderTheyCame(t *testing.T) {
	b := New("test", 100)
	small, _ := b.Take(context.Background(), 10)
	big := make(chan *Hold)
	go func() { h, _ := b.Take(context.Background(), 100); big <- h }()
	for b.Waits() == 0 {
		time.Sleep(time.Millisecond)
	}
	later := make(chan *Hold)
	go func() { h, _ := b.Take(context.Background(), 10); later <- h }()
	select {
	case <-later:
		t.Fatal("a small take passed a large one waiting before it")
	case <-time.After(50 * time.Millisecond):
	}
	small.Release()
	h := <-big
	h.Release()
	(<-later).Release()
	if b.Held() != 0 {
		t.Fatalf("held %d", b.Held())
	}
}

// A hold released while it waits to grow gives nothing back twice and holds nothing after.
func TestAHoldReleasedWhileItWaitsToGrowHoldsNothing(t *testing.T) {
	b := New("test", 100)
	waiting, _ := b.Take(context.Background(), 0)
	over, _ := b.Take(context.Background(), 100)
	if err := over.Grow(context.Background(), 50); err != nil { // the overdraft
		t.Fatal(err)
	}
	grown := make(chan error)
	go func() { grown <- waiting.Grow(context.Background(), 50) }()
	time.Sleep(30 * time.Millisecond)
	waiting.Release()
	over.Release()
	if err := <-grown; err == nil {
		t.Fatal("a released hold grew")
	}
	if b.Held() != 0 {
		t.Fatalf("%d bytes held after every release", b.Held())
	}
}

func TestShrinkGivesBackWhatIsNoLongerNeeded(t *testing.T) {
	b := New("test", 100)
	h, _ := b.Take(context.Background(), 80)
	h.Shrink(30)
	if b.Held() != 30 || h.Bytes() != 30 {
		t.Fatalf("held %d (hold %d) after shrinking to 30", b.Held(), h.Bytes())
	}
	h.Shrink(50) // never grows
	h.Release()
	if b.Held() != 0 {
		t.Fatalf("held %d", b.Held())
	}
}
