package generic

// Reserve records that by (a registration's name, for people) uses name
// on this factory, for parts of one operator that must not share
// something: two registrations writing one condition of one kind, say.
// The first to reserve a name keeps it until it releases it: Reserve
// returns whether name was free (and is now by's), and otherwise who
// holds it (by itself too: a second reservation is refused as well).
func (f *Factory) Reserve(name, by string) (holder string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h, taken := f.reserved[name]; taken {
		return h, false
	}
	if f.reserved == nil {
		f.reserved = map[string]string{}
	}
	f.reserved[name] = by
	return by, true
}

// Release gives up name, if by holds it (see Reserve).
func (f *Factory) Release(name, by string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reserved[name] == by {
		delete(f.reserved, name)
	}
}
