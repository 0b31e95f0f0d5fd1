// Package recent holds a map whose entries go when they have not been
// used for a number of rounds: the per-camera caches of work shared by
// overlapping windows (a round is a window), which must forget what
// left every window.
package recent

import "maps"

// Map is a map from K to V that remembers the round each entry was last
// put or read in. The zero Map is not ready; use New. Not safe for
// concurrent use: its owner locks.
type Map[K comparable, V any] struct {
	m map[K]entry[V]
}

type entry[V any] struct {
	v    V
	used uint64
}

// New returns an empty Map.
func New[K comparable, V any]() Map[K, V] { return Map[K, V]{m: map[K]entry[V]{}} }

// Get returns k's value and marks it used in round.
func (m Map[K, V]) Get(k K, round uint64) (V, bool) {
	e, ok := m.m[k]
	if ok {
		e.used = round
		m.m[k] = e
	}
	return e.v, ok
}

// Peek returns k's value without marking it used.
func (m Map[K, V]) Peek(k K) (V, bool) {
	e, ok := m.m[k]
	return e.v, ok
}

// Put sets k's value, used in round.
func (m Map[K, V]) Put(k K, v V, round uint64) { m.m[k] = entry[V]{v: v, used: round} }

// Update applies f to k's value, if k is there, without marking it used.
func (m Map[K, V]) Update(k K, f func(*V)) {
	if e, ok := m.m[k]; ok {
		f(&e.v)
		m.m[k] = e
	}
}

// Sweep drops the entries unused for more than keep rounds before round.
func (m Map[K, V]) Sweep(round, keep uint64) {
	for k, e := range m.m {
		if round-e.used > keep {
			delete(m.m, k)
		}
	}
}

// Clone returns a copy of m: the same entries, used in the same rounds.
func (m Map[K, V]) Clone() Map[K, V] { return Map[K, V]{m: maps.Clone(m.m)} }

// Len is the number of entries.
func (m Map[K, V]) Len() int { return len(m.m) }
