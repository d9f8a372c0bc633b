package session

import (
	"testing"
)

// TestClosedSubscriptionsLeaveTheHub: every closed subscription leaves the
// session's hub, the first one made included, so a long session whose
// clients come and go (a web console reloaded, an editor reconnecting)
// holds and serves only the live ones. Mutant caught (subscribe.go:224,
// alive in this round's diff run): the index test made i > 0, so the
// first subscription was never removed.
func TestClosedSubscriptionsLeaveTheHub(t *testing.T) {
	s, _, stop := newSession(t, &fake{}, Config{})
	stop() // the helper's own recorder, the first subscription
	var subs []func()
	for range 3 {
		subs = append(subs, s.Subscribe(func(Event) {}))
	}
	for _, closeSub := range subs {
		closeSub()
	}
	s.hub.mu.Lock()
	n := len(s.hub.subs)
	s.hub.mu.Unlock()
	if n != 0 {
		t.Errorf("%d subscriptions left in the hub after all were closed", n)
	}
}
