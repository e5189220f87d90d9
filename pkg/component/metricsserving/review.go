package metricsserving

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// How long answers of the API server are kept: a caller scraping every
// few seconds costs one review a minute, and a revoked permission holds
// at most this long.
const (
	allowTTL = time.Minute
	denyTTL  = 10 * time.Second
	// maxCached bounds the cache; past it, it starts empty again.
	maxCached = 1024
)

// Reviewer asks the API server who a caller is (TokenReview) and whether
// it may do what it asks (SubjectAccessReview on the request's path and
// method), and keeps the answers for a while.
type Reviewer struct {
	client kubernetes.Interface
	now    func() time.Time

	mu     sync.Mutex
	tokens map[[32]byte]cached[*authenticationv1.UserInfo]
	access map[accessKey]cached[bool]
}

type cached[T any] struct {
	value   T
	expires time.Time
}

type accessKey struct {
	user, verb, path string
}

// NewReviewer reviews callers with client.
func NewReviewer(client kubernetes.Interface) *Reviewer {
	return &Reviewer{
		client: client,
		now:    time.Now,
		tokens: map[[32]byte]cached[*authenticationv1.UserInfo]{},
		access: map[accessKey]cached[bool]{},
	}
}

// Filter has controller-runtime's metrics server review callers as
// Wrap does.
func Filter(c *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	client, err := kubernetes.NewForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, err
	}
	r := NewReviewer(client)
	return func(log logr.Logger, h http.Handler) (http.Handler, error) { return r.Wrap(log, h), nil }, nil
}

// Wrap answers 401 to a request without a bearer token the API server
// accepts, 403 to one whose caller may not use the request's method
// (lower-cased, as the verb) on its path, and passes the rest to h. It
// answers 500 when the API server cannot be asked.
func (r *Reviewer) Wrap(log logr.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		token, ok := bearer(req)
		if !ok {
			http.Error(w, "Unauthorized: send a bearer token", http.StatusUnauthorized)
			return
		}
		user, err := r.authenticate(req.Context(), token)
		if err != nil {
			log.Error(err, "Reviewing a metrics caller's token failed")
			http.Error(w, "Authentication failed: the API server could not be asked", http.StatusInternalServerError)
			return
		}
		if user == nil {
			http.Error(w, "Unauthorized: the API server does not accept the token", http.StatusUnauthorized)
			return
		}
		verb := strings.ToLower(req.Method)
		allowed, err := r.authorize(req.Context(), user, verb, req.URL.Path)
		if err != nil {
			log.Error(err, "Reviewing a metrics caller's access failed", "user", user.Username)
			http.Error(w, "Authorization failed: the API server could not be asked", http.StatusInternalServerError)
			return
		}
		if !allowed {
			log.V(4).Info("Metrics caller refused", "user", user.Username, "verb", verb, "path", req.URL.Path)
			http.Error(w, "Forbidden: "+user.Username+" may not "+verb+" "+req.URL.Path, http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, req)
	})
}

func bearer(req *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// authenticate returns the token's user, or nil when the API server does
// not accept it.
func (r *Reviewer) authenticate(ctx context.Context, token string) (*authenticationv1.UserInfo, error) {
	key := sha256.Sum256([]byte(token))
	r.mu.Lock()
	c, ok := r.tokens[key]
	r.mu.Unlock()
	if ok && r.now().Before(c.expires) {
		return c.value, nil
	}
	review, err := r.client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	var user *authenticationv1.UserInfo
	ttl := denyTTL
	if review.Status.Authenticated {
		user, ttl = &review.Status.User, allowTTL
	}
	r.mu.Lock()
	if len(r.tokens) >= maxCached {
		clear(r.tokens)
	}
	r.tokens[key] = cached[*authenticationv1.UserInfo]{value: user, expires: r.now().Add(ttl)}
	r.mu.Unlock()
	return user, nil
}

// authorize says whether user may verb path.
func (r *Reviewer) authorize(ctx context.Context, user *authenticationv1.UserInfo, verb, path string) (bool, error) {
	// The groups are part of who asks: a grant may be to a group.
	key := accessKey{user: user.UID + "/" + user.Username + "/" + strings.Join(user.Groups, ","), verb: verb, path: path}
	r.mu.Lock()
	c, ok := r.access[key]
	r.mu.Unlock()
	if ok && r.now().Before(c.expires) {
		return c.value, nil
	}
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	review, err := r.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:                  user.Username,
			UID:                   user.UID,
			Groups:                user.Groups,
			Extra:                 extra,
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	allowed := review.Status.Allowed && !review.Status.Denied
	ttl := denyTTL
	if allowed {
		ttl = allowTTL
	}
	r.mu.Lock()
	if len(r.access) >= maxCached {
		clear(r.access)
	}
	r.access[key] = cached[bool]{value: allowed, expires: r.now().Add(ttl)}
	r.mu.Unlock()
	return allowed, nil
}
