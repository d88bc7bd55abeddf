package update

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Upload scrubbing: a sentence is about an uploaded file when it has an
// upload marker, or an upload word together with a file word, in English
// or Chinese.
var (
	uploadMarker = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)</?uploaded_files>|/mnt/user-data/uploads`) })
	uploadWord   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\bupload(?:s|ed|ing)?\b|上传`) })
	uploadThing  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(?:files?|documents?|attachments?|pdfs?|spreadsheets?|images?|screenshots?|photos?|pictures?|slides?|csvs?)\b|\.(?:pdf|docx?|xlsx?|csv|pptx?|txt|md|json|png|jpe?g|gif|zip)\b|文件|文档|附件|图片|照片|截图|表格|档案`)
	})
	spaceRun = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[ \t]{2,}`) })
)

func aboutUpload(sentence string) bool {
	return uploadMarker().MatchString(sentence) ||
		(uploadWord().MatchString(sentence) && uploadThing().MatchString(sentence))
}

// ScrubUploads removes the sentences of s that are about uploaded files.
// It returns s unchanged when there are none, and "" when nothing with a
// letter or digit is left.
func ScrubUploads(s string) string {
	if !uploadMarker().MatchString(s) && !uploadWord().MatchString(s) {
		return s
	}
	var b strings.Builder
	removed := false
	for _, sent := range splitSentences(s) {
		if aboutUpload(sent) {
			removed = true
			continue
		}
		b.WriteString(sent)
	}
	if !removed {
		return s
	}
	out := strings.TrimSpace(spaceRun().ReplaceAllString(b.String(), " "))
	if strings.IndexFunc(out, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return ""
	}
	return out
}

// splitSentences splits s after sentence ends, keeping every byte: a
// sentence runs through its terminators and the white space after them.
// '.', '!' and '?' end a sentence only before white space or the end (so
// "report.pdf" stays whole); '。', '！', '？' and a newline always do.
func splitSentences(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		end := false
		switch r {
		case '。', '！', '？', '\n':
			end = true
		case '.', '!', '?':
			next, _ := utf8.DecodeRuneInString(s[i:])
			end = i == len(s) || unicode.IsSpace(next)
		}
		if !end {
			continue
		}
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsSpace(r) && !strings.ContainsRune(".!?。！？", r) {
				break
			}
			i += n
		}
		out = append(out, s[start:i])
		start = i
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
