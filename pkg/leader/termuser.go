package leader

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
)

// The term policy judges a stamped create only when it is sent by the
// user named in its TermUserLabel: the stamp stays on the object, and a
// copy or restore of it by anyone else (a user's kubectl, a backup tool)
// must not be refused as a stale create of the operator. The fence writes
// its own username there (TermUserLabelValue), so every create it sends
// is judged. The
// username is the one of the config the fence wraps (its credentials,
// its impersonation), which need not be the Lease client's: the fence
// asks the API server with the create's own headers, through its own
// transport (a SelfSubjectReview, which every authenticated user may
// create), once per term and sender: the stamped user is the one the
// request is sent as, whether set in the config (rest.Config.Impersonate)
// or per request (an Impersonate-User header, or a wrapper inside the
// fence), never a user learned from another request. The sender is told
// by its headers as they go on the wire (termsender.go): not the ones the
// fence sees, above the wrappers the config had when given to Fence.

// whoAmI caches the usernames a fence's requests are sent as, for one
// term, by the headers that say who a request is sent as (identityKey):
// one fenced config may send as several users (an operator that
// impersonates a tenant per request, Impersonate-User on the request), and
// each create must be stamped with its own sender, or the policy takes it
// for another user's copy and admits it unjudged.
type whoAmI struct {
	mu     sync.Mutex
	termID string            // the term the usernames were learned in
	users  map[string]string // by identityKey
}

// maxCachedUsers bounds whoAmI's usernames of one term: past it, the cache
// starts again (each sender is then asked again, at a review per create
// at worst).
const maxCachedUsers = 256

// identityKey returns the key, in whoAmI, of the user the headers h send
// a request as: a hash of its credentials (Authorization) and its
// impersonation (Impersonate-User, -Group, -Uid, -Extra-*), in a canonical
// order. A client certificate is the transport's, the same for every
// request of the fence. The hash keeps no credential in the cache.
func identityKey(h http.Header) string {
	var names []string
	for name := range h {
		c := http.CanonicalHeaderKey(name)
		if c == "Authorization" || strings.HasPrefix(c, "Impersonate-") {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		return http.CanonicalHeaderKey(names[i]) < http.CanonicalHeaderKey(names[j])
	})
	sum := sha256.New()
	for _, name := range names {
		_, _ = fmt.Fprintf(sum, "%q:%q\n", http.CanonicalHeaderKey(name), h[name])
	}
	return string(sum.Sum(nil))
}

// selfSubjectReview is the body of a SelfSubjectReview create.
const selfSubjectReview = `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`

// user returns the username req is sent as, and the identityKey of its
// sender (found by a probe: termsender.go), asking the API server the
// first time in the term termID that a request is sent as that sender.
// An error fails the create unsent: an unstamped user would let it
// through unjudged.
func (f *fence) user(req *http.Request, termID string) (user, key string, err error) {
	if key, err = f.sender(req); err != nil {
		return "", "", err // termsender.go
	}
	f.who.mu.Lock()
	defer f.who.mu.Unlock()
	if f.who.termID != termID || len(f.who.users) >= maxCachedUsers {
		f.who.termID, f.who.users = termID, map[string]string{}
	}
	if user := f.who.users[key]; user != "" {
		return user, key, nil
	}
	r, err := http.NewRequestWithContext(sentAs(req, key).Context(), http.MethodPost, "", bytes.NewReader([]byte(selfSubjectReview)))
	if err != nil {
		return "", "", err
	}
	u := *req.URL
	u.Path, u.RawPath, u.RawQuery = f.prefix+"/apis/authentication.k8s.io/v1/selfsubjectreviews", "", ""
	r.URL, r.Host = &u, req.Host
	r.Header = req.Header.Clone() // the credentials and impersonation of the create
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json")
	resp, err := f.next.RoundTrip(r)
	if err != nil {
		return "", "", fmt.Errorf("leader: ask the API server who the fenced config is (SelfSubjectReview): %w", err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return "", "", fmt.Errorf("leader: read the SelfSubjectReview: %w", err)
	}
	var review struct {
		Status struct {
			UserInfo struct {
				Username string `json:"username"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK || json.Unmarshal(body, &review) != nil ||
		review.Status.UserInfo.Username == "" {
		return "", "", fmt.Errorf("leader: the API server did not say who the fenced config is (SelfSubjectReview: %s): %.300s", resp.Status, body)
	}
	f.who.users[key] = review.Status.UserInfo.Username
	return review.Status.UserInfo.Username, key, nil
}
