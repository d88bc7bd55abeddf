package redact

import "testing"

// BenchmarkText redacts an exchange's reply of ordinary prose, without
// and with a word that opens a rule ("password"): almost every add is
// the first case, where the rules' gates decide in one scan that none
// needs running.
func BenchmarkText(b *testing.B) {
	prose := "Sure, for the migration start with the build job: pin the Go version, cache the module " +
		"downloads and run the tests with -race before the deploy step. Your rotation note is " +
		"fine as it is; the cluster move can wait until staging is back. Let me know if " +
		"the nightly job still fails after that, and we can look at the logs together tomorrow morning."
	for _, bc := range []struct{ name, text string }{
		{"prose", prose},
		{"password", prose + " The password policy stays."},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				Text(bc.text)
			}
		})
	}
}
