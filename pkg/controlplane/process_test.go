package controlplane

import (
	"errors"
	"testing"
)

func TestOnFreePorts(t *testing.T) {
	taken := errors.New("etcd exited: exit status 1; last log lines:\nlisten tcp 127.0.0.1:40123: bind: address already in use")
	other := errors.New("kube-apiserver exited: exit status 1; last log lines:\ninvalid flag")
	for _, tc := range []struct {
		name      string
		errs      []error // what each attempt returns, nil for success
		wantCalls int
		wantErr   error
	}{
		{"started at once", []error{nil}, 1, nil},
		{"a port taken, then started", []error{taken, nil}, 2, nil},
		{"ports taken three times", []error{taken, taken, taken, nil}, 3, taken},
		{"another failure is not retried", []error{other, nil}, 1, other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			_, err := onFreePorts(func() (int, error) {
				err := tc.errs[calls]
				calls++
				return calls, err
			})
			if calls != tc.wantCalls || !errors.Is(err, tc.wantErr) {
				t.Errorf("%d attempts, err %v; want %d, %v", calls, err, tc.wantCalls, tc.wantErr)
			}
		})
	}
}
