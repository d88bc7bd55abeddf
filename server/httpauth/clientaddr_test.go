package httpauth

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestClientAddresses(t *testing.T) {
	proxies, err := ParseTrustedProxies([]string{"127.0.0.2", "10.0.0.0/8", " ", "2001:db8:ffff::/48"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		remote string
		header map[string][]string
		want   string
	}{
		{"no proxy, no header", "192.0.2.1:4000", nil, "192.0.2.1"},
		{"untrusted sender's header ignored", "192.0.2.1:4000", map[string][]string{"X-Forwarded-For": {"198.51.100.7"}}, "192.0.2.1"},
		{"untrusted sender's Forwarded ignored", "192.0.2.1:4000", map[string][]string{"Forwarded": {"for=198.51.100.7"}}, "192.0.2.1"},
		{"trusted proxy", "127.0.0.2:4000", map[string][]string{"X-Forwarded-For": {"198.51.100.7"}}, "198.51.100.7"},
		{"right-most untrusted", "127.0.0.2:4000", map[string][]string{"X-Forwarded-For": {"203.0.113.9, 198.51.100.7, 10.1.2.3"}}, "198.51.100.7"},
		{"several header lines", "127.0.0.2:4000", map[string][]string{"X-Forwarded-For": {"203.0.113.9", "198.51.100.7"}}, "198.51.100.7"},
		{"all trusted: the farthest", "127.0.0.2:4000", map[string][]string{"X-Forwarded-For": {"10.0.0.9, 10.0.0.8"}}, "10.0.0.9"},
		{"garbage hop: the nearest trusted", "127.0.0.2:4000", map[string][]string{"X-Forwarded-For": {"198.51.100.7, 10.0.0.8, not-an-ip"}}, "127.0.0.2"},
		{"garbage behind a trusted hop", "127.0.0.2:4000", map[string][]string{"X-Forwarded-For": {"nope, 10.0.0.8"}}, "10.0.0.8"},
		{"no header from proxy", "127.0.0.2:4000", nil, "127.0.0.2"},
		{"v4 with port", "127.0.0.2:4000", map[string][]string{"X-Forwarded-For": {"198.51.100.7:5555"}}, "198.51.100.7"},
		{"v6 in brackets", "[2001:db8:ffff::1]:4000", map[string][]string{"X-Forwarded-For": {"[2001:db8::7]"}}, "2001:db8::7"},
		{"v4-mapped proxy", "[::ffff:127.0.0.2]:4000", map[string][]string{"X-Forwarded-For": {"::ffff:198.51.100.7"}}, "198.51.100.7"},
		{"Forwarded", "127.0.0.2:4000", map[string][]string{"Forwarded": {`for=203.0.113.9, for="[2001:db8::7]:4711";proto=https;by=10.0.0.1`}}, "2001:db8::7"},
		{"Forwarded case and spaces", "127.0.0.2:4000", map[string][]string{"Forwarded": {`proto=http; For = 198.51.100.7`}}, "198.51.100.7"},
		{"Forwarded unknown: the proxy", "127.0.0.2:4000", map[string][]string{"Forwarded": {`for=unknown`}}, "127.0.0.2"},
		{"X-Forwarded-For before Forwarded", "127.0.0.2:4000", map[string][]string{"X-Forwarded-For": {"198.51.100.7"}, "Forwarded": {"for=203.0.113.9"}}, "198.51.100.7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			h := ClientAddresses(proxies)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = ClientAddr(r) }))
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tt.remote
			for k, vs := range tt.header {
				for _, v := range vs {
					r.Header.Add(k, v)
				}
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
			if got != tt.want {
				t.Errorf("ClientAddr() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClientAddressesTrustsNoneByDefault(t *testing.T) {
	var got string
	h := ClientAddresses(TrustedProxies{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = ClientAddr(r) }))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "127.0.0.1:4000"
	r.Header.Set("X-Forwarded-For", "198.51.100.7")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got != "127.0.0.1" {
		t.Errorf("ClientAddr() = %q, want the connecting address 127.0.0.1", got)
	}
}

func TestParseTrustedProxiesRefuses(t *testing.T) {
	for _, in := range []string{"proxy.example.com", "10.0.0.0/33", "10.0.0.1:80", "fe80::1%eth0", "10.0.0.0/8/8"} {
		if _, err := ParseTrustedProxies([]string{"10.0.0.1", in}); err == nil {
			t.Errorf("ParseTrustedProxies(%q) = nil error, want one naming it", in)
		}
	}
}
