package dashboard

import (
	"net/http"
	"time"

	"github.com/lariat-dev/lariat/pkg/shard"
)

// Shard is the read-only introspection of a shard ring's sharder the
// dashboard uses; *shard.Sharder implements it.
type Shard interface {
	// Snapshot returns the ring as the sharder sees it now.
	Snapshot() shard.RingSnapshot
}

// ShardMember is the read-only introspection of a ring member the
// dashboard uses; *shard.Member implements it.
type ShardMember interface {
	// Snapshot returns the member's state now.
	Snapshot() shard.MemberSnapshot
}

// Replicas describes the replicas of an operator at one moment: the answer
// of GET /ui/api/replicas.
type Replicas struct {
	// Mode says how replicas share the work: "single" (no election),
	// "leader" (leader election) or "sharded".
	Mode string `json:"mode"`
	// Identity is this replica's (sharded: its member's, for this term).
	Identity string `json:"identity,omitempty"`
	// Leader is the identity of the leader (sharded: of the elected
	// sharder).
	Leader string `json:"leader,omitempty"`
	// Holding tells whether this replica holds its lease now.
	Holding bool `json:"holding"`
	// Ring is the shard ring's name, and MemberID this replica's ID in it
	// (sharded only).
	Ring     string `json:"ring,omitempty"`
	MemberID string `json:"memberId,omitempty"`
	// Sharding tells whether this replica's sharder is the elected one:
	// only that one watches the members and the objects, so only then are
	// Members (with their shares), Unassigned and Drains known.
	Sharding bool `json:"sharding,omitempty"`
	// Synced tells whether the elected sharder's views follow the API
	// server (it changes nothing while they do not).
	Synced bool `json:"synced,omitempty"`
	// Members are the replicas known, with their shares.
	Members []Member `json:"members,omitempty"`
	// Unassigned counts the sharded objects assigned to no member yet.
	Unassigned int `json:"unassigned,omitempty"`
	// Drains are the objects being handed from one member to another,
	// oldest first.
	Drains []Drain `json:"drains,omitempty"`
}

// Member is one replica of a sharded or elected operator.
type Member struct {
	ID string `json:"id"`
	// Identity is the identity in the member's Lease (sharded).
	Identity string `json:"identity,omitempty"`
	// State is shard.MemberLive, shard.MemberDead or
	// shard.MemberUnconfirmed (sharded).
	State string `json:"state,omitempty"`
	// Share is the fraction of the objects the member holds (0 to 1); zero
	// when unknown.
	Share float64 `json:"share,omitempty"`
	// Objects counts the objects it holds, ByKind per kind, and Keys
	// names the first shard.SnapshotKeys of them (sharded).
	Objects int            `json:"objects,omitempty"`
	ByKind  map[string]int `json:"byKind,omitempty"`
	Keys    []string       `json:"keys,omitempty"`
	// Self marks this replica's member.
	Self bool `json:"self,omitempty"`
	// Leader marks the member that leads.
	Leader bool `json:"leader,omitempty"`
}

// Drain is an object asked to leave its member, which has not let go of
// it yet.
type Drain struct {
	Kind   string    `json:"kind"`
	Key    string    `json:"key"`
	Member string    `json:"member"`
	Since  time.Time `json:"since"`
}

func (d *Dashboard) serveReplicas(w http.ResponseWriter, _ *http.Request) {
	switch {
	case d.opts.Shard != nil:
		writeJSON(w, d.sharded())
	case d.opts.Replicas != nil:
		writeJSON(w, d.opts.Replicas())
	default:
		writeJSON(w, Replicas{Mode: "single", Holding: true})
	}
}

// sharded is the replicas view of a shard ring's member: the sharder's
// snapshot, with this replica's member marked.
func (d *Dashboard) sharded() Replicas {
	ring := d.opts.Shard.Snapshot()
	out := Replicas{Mode: "sharded", Ring: ring.Ring, Leader: ring.Sharder, Sharding: ring.Leading, Synced: ring.Synced, Unassigned: ring.Unassigned}
	if d.opts.ShardMember != nil {
		// A nil member, or a nil *shard.Member (whose snapshot is the
		// zero one), is a replica between terms.
		if m := d.opts.ShardMember(); m != nil {
			if ms := m.Snapshot(); ms.ID != "" {
				out.Identity, out.MemberID, out.Holding = ms.Identity, ms.ID, ms.Holding
			}
		}
	}
	total := ring.Unassigned
	for _, m := range ring.Members {
		total += m.Objects
	}
	for _, m := range ring.Members {
		mem := Member{ID: m.ID, Identity: m.Identity, State: m.State, Objects: m.Objects, ByKind: m.ByKind, Keys: m.Keys, Self: m.ID == out.MemberID}
		if total > 0 {
			mem.Share = float64(m.Objects) / float64(total)
		}
		out.Members = append(out.Members, mem)
	}
	for _, dr := range ring.Drains {
		out.Drains = append(out.Drains, Drain{Kind: dr.Kind, Key: dr.Key, Member: dr.Member, Since: dr.Since})
	}
	return out
}
