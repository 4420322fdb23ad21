package dependents

// An owner refused an object (another owner keeps it, or the live object
// is a deleted owner's, see claimer) is computed again whenever the loop
// sees that object change: its deletion, once the owner that kept it let
// it go (deleted, or no longer wanting it), frees it, and the refused
// owner then claims it. Without this, the refused owner would stay FAILED
// until an event of its own.

// unclaim drops the objects and the refusals of the owner at key from
// the loop's indexes.
func (h *loopHandler[T]) unclaim(key string) {
	d := h.desired[key]
	if d == nil {
		return
	}
	for objKey := range d.objectKeys() {
		if h.childOf[objKey] == key {
			delete(h.childOf, objKey)
		}
	}
	for _, o := range d.objects {
		if owners := h.refused[o.key]; owners != nil {
			delete(owners, key)
			if len(owners) == 0 {
				delete(h.refused, o.key)
			}
		}
	}
}

// noteRefusals records the objects d's owner, at key, was refused.
func (h *loopHandler[T]) noteRefusals(key string, d *desired) {
	for _, o := range d.objects {
		if o.contested == "" && o.stale == "" {
			continue
		}
		if h.refused[o.key] == nil {
			h.refused[o.key] = map[string]bool{}
		}
		h.refused[o.key][key] = true
	}
}
