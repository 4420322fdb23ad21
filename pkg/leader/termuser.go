package leader

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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
// create), once per term.

// whoAmI caches the username a fence's requests are sent as, for one term.
type whoAmI struct {
	mu     sync.Mutex
	termID string // the term the username was learned in
	user   string
}

// selfSubjectReview is the body of a SelfSubjectReview create.
const selfSubjectReview = `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`

// user returns the username req is sent as, asking the API server the
// first time in the term termID. An error fails the create unsent: an
// unstamped user would let it through unjudged.
func (f *fence) user(req *http.Request, termID string) (string, error) {
	f.who.mu.Lock()
	defer f.who.mu.Unlock()
	if f.who.termID == termID && f.who.user != "" {
		return f.who.user, nil
	}
	r, err := http.NewRequestWithContext(req.Context(), http.MethodPost, "", bytes.NewReader([]byte(selfSubjectReview)))
	if err != nil {
		return "", err
	}
	u := *req.URL
	u.Path, u.RawPath, u.RawQuery = f.prefix+"/apis/authentication.k8s.io/v1/selfsubjectreviews", "", ""
	r.URL, r.Host = &u, req.Host
	r.Header = req.Header.Clone() // the credentials and impersonation of the create
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json")
	resp, err := f.next.RoundTrip(r)
	if err != nil {
		return "", fmt.Errorf("leader: ask the API server who the fenced config is (SelfSubjectReview): %w", err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return "", fmt.Errorf("leader: read the SelfSubjectReview: %w", err)
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
		return "", fmt.Errorf("leader: the API server did not say who the fenced config is (SelfSubjectReview: %s): %.300s", resp.Status, body)
	}
	f.who.termID, f.who.user = termID, review.Status.UserInfo.Username
	return f.who.user, nil
}
