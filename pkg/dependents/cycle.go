package dependents

import "strings"

// cycles finds the objects that wait, through After and Requires, for
// themselves: they can never be created. It returns, for each object on a
// cycle, the cycle as labels ("ConfigMap p → ConfigMap q → ConfigMap p").
// Excluded objects wait for nothing and are waited for by no one here (what
// waits for one is reported as waiting for an object not wanted).
func cycles(objs []*Object, label map[*Object]string) map[*Object]string {
	const (
		unseen = iota
		onPath
		done
	)
	state := map[*Object]int{}
	out := map[*Object]string{}
	var path []*Object
	var visit func(o *Object)
	visit = func(o *Object) {
		state[o] = onPath
		path = append(path, o)
		for _, next := range append(append([]*Object(nil), o.after...), o.requires...) {
			if next == nil || next.excluded || label[next] == "" {
				continue
			}
			switch state[next] {
			case unseen:
				visit(next)
			case onPath:
				markCycle(path, next, label, out)
			}
		}
		path = path[:len(path)-1]
		state[o] = done
	}
	for _, o := range objs {
		if o != nil && !o.excluded && state[o] == unseen {
			visit(o)
		}
	}
	return out
}

// markCycle records the cycle that path closes at start.
func markCycle(path []*Object, start *Object, label map[*Object]string, out map[*Object]string) {
	i := len(path) - 1
	for i > 0 && path[i] != start {
		i--
	}
	names := make([]string, 0, len(path)-i+1)
	for _, o := range path[i:] {
		names = append(names, label[o])
	}
	names = append(names, label[start])
	c := strings.Join(names, " → ")
	for _, o := range path[i:] {
		if out[o] == "" {
			out[o] = c
		}
	}
}
