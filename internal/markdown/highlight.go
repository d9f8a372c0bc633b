package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// kind is what a piece of code is, for its colour.
type kind int

const (
	plain kind = iota
	keyword
	builtin
	str
	number
	comment
	numKinds
)

// lang is how to scan one language: enough to tell comments, strings,
// numbers, keywords and builtin names apart, which is what a reader
// skimming an answer needs (a full lexer per language, as chroma has,
// costs its registry at init).
type lang struct {
	lineComment  []string
	blockComment [][2]string
	// quotes open and close strings, longest first; raw ones take no
	// backslash escapes and may span lines.
	quotes, raw []string
	keywords    map[string]bool
	builtins    map[string]bool
	diff        bool
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// langFor returns the scanner of a fenced block's language (its info
// string's first word, as Markdown writers spell it), or nil when it is
// none the UI knows. The word lists are built here, on first use.
func langFor(name string) *lang {
	cStyle := func(kw, bi string) *lang {
		return &lang{lineComment: []string{"//"}, blockComment: [][2]string{{"/*", "*/"}},
			quotes: []string{`"`, `'`}, keywords: words(kw), builtins: words(bi)}
	}
	switch strings.ToLower(name) {
	case "go", "golang":
		l := cStyle("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var",
			"any append bool byte cap clear close complex copy delete error false float32 float64 int int8 int16 int32 int64 iota len make max min new nil panic print println real recover rune string true uint uint8 uint16 uint32 uint64 uintptr")
		l.raw = []string{"`"}
		return l
	case "c", "h", "cpp", "c++", "cc", "hpp", "java", "cs", "csharp", "kotlin", "kt", "swift":
		return cStyle("auto break case catch class const continue default delete do else enum extends extern final finally for fun func goto if implements import in inline interface let namespace new override package private protected public return sizeof static struct super switch template this throw throws try typedef typename union using val var virtual void volatile when while",
			"bool boolean byte char double false float int long null nullptr short signed size_t string String true unsigned")
	case "rust", "rs":
		return cStyle("as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while",
			"bool char f32 f64 false i8 i16 i32 i64 i128 isize None Ok Err Option Result Some str String true u8 u16 u32 u64 u128 usize Vec")
	case "js", "javascript", "jsx", "ts", "typescript", "tsx", "mjs":
		l := cStyle("as async await break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof interface let new of return static super switch this throw try type typeof var void while yield",
			"Array boolean console document false JSON Map null number Object Promise Set string true undefined window")
		l.raw = []string{"`"}
		return l
	case "python", "py", "python3":
		return &lang{lineComment: []string{"#"}, quotes: []string{`"`, `'`}, raw: []string{`"""`, `'''`},
			keywords: words("and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield"),
			builtins: words("bool dict False float int len list None object print range self set str True tuple")}
	case "sh", "bash", "shell", "zsh", "console", "shell-session":
		return &lang{lineComment: []string{"#"}, quotes: []string{`"`}, raw: []string{`'`},
			keywords: words("case do done elif else esac fi for function if in local return then until while"),
			builtins: words("cd echo exit export printf read set shift source test trap unset")}
	case "json", "jsonc", "json5":
		return &lang{lineComment: []string{"//"}, quotes: []string{`"`}, keywords: words("true false null")}
	case "yaml", "yml", "toml", "ini":
		return &lang{lineComment: []string{"#"}, quotes: []string{`"`, `'`}, keywords: words("true false null yes no on off")}
	case "sql":
		l := &lang{lineComment: []string{"--"}, blockComment: [][2]string{{"/*", "*/"}}, quotes: []string{`'`, `"`}, keywords: map[string]bool{}}
		for w := range words("select from where and or not insert into values update set delete create table index drop alter join left right inner outer on group by order having limit as null is in like distinct union primary key") {
			l.keywords[w], l.keywords[strings.ToUpper(w)] = true, true
		}
		return l
	case "diff", "patch":
		return &lang{diff: true}
	}
	return nil
}

// highlight returns body's lines, each coloured on its own (a style
// never runs across a line break, so the transcript may cut anywhere).
func (r *Renderer) highlight(language string, body string) []string {
	if f := strings.Fields(language); len(f) > 0 {
		language = f[0]
	}
	l, ok := r.langs[language]
	if !ok {
		l = langFor(language)
		r.langs[language] = l
	}
	var out []string
	cur := ""
	emit := func(k kind, s string) {
		for i, part := range strings.Split(s, "\n") {
			if i > 0 {
				out = append(out, cur)
				cur = ""
			}
			if part != "" {
				cur += r.st.code[k].render(part)
			}
		}
	}
	switch {
	case l == nil:
		emit(plain, body)
	case l.diff:
		for i, line := range strings.Split(body, "\n") {
			if i > 0 {
				emit(plain, "\n")
			}
			emit(diffKind(line), line)
		}
	default:
		l.scan(body, emit)
	}
	return append(out, cur)
}

func diffKind(line string) kind {
	switch {
	case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"), strings.HasPrefix(line, "@@"):
		return builtin
	case strings.HasPrefix(line, "+"):
		return str
	case strings.HasPrefix(line, "-"):
		return keyword
	}
	return plain
}

// scan cuts s into pieces and hands each to emit with its kind; runs of
// anything else go out as plain.
func (l *lang) scan(s string, emit func(kind, string)) {
	start := 0 // of the pending plain run
	flush := func(end int) {
		if end > start {
			emit(plain, s[start:end])
		}
	}
	for i := 0; i < len(s); {
		k, n := l.token(s[i:])
		if n == 0 {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			continue
		}
		if k == plain {
			i += n
			continue
		}
		flush(i)
		emit(k, s[i:i+n])
		i += n
		start = i
	}
	flush(len(s))
}

// token returns the kind and length of the token s starts with, or 0
// for a single character of punctuation or space.
func (l *lang) token(s string) (kind, int) {
	for _, bc := range l.blockComment {
		if strings.HasPrefix(s, bc[0]) {
			if end := strings.Index(s[len(bc[0]):], bc[1]); end >= 0 {
				return comment, len(bc[0]) + end + len(bc[1])
			}
			return comment, len(s)
		}
	}
	for _, lc := range l.lineComment {
		if strings.HasPrefix(s, lc) {
			if end := strings.IndexByte(s, '\n'); end >= 0 {
				return comment, end
			}
			return comment, len(s)
		}
	}
	for _, q := range l.raw {
		if strings.HasPrefix(s, q) {
			if end := strings.Index(s[len(q):], q); end >= 0 {
				return str, len(q) + end + len(q)
			}
			return str, len(s)
		}
	}
	for _, q := range l.quotes {
		if strings.HasPrefix(s, q) {
			return str, quoted(s, q[0])
		}
	}
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case r >= '0' && r <= '9':
		n := size
		for n < len(s) && (isWord(rune(s[n])) || s[n] == '.') {
			n++
		}
		return number, n
	case isWord(r):
		n := size
		for n < len(s) {
			r, sz := utf8.DecodeRuneInString(s[n:])
			if !isWord(r) {
				break
			}
			n += sz
		}
		switch w := s[:n]; {
		case l.keywords[w]:
			return keyword, n
		case l.builtins[w]:
			return builtin, n
		}
		return plain, n
	}
	return plain, 0
}

// quoted is the length of the string s starts with, closed by q,
// backslash escapes skipped; an unclosed one ends at the line.
func quoted(s string, q byte) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\n':
			return i
		case q:
			return i + 1
		}
	}
	return len(s)
}

func isWord(r rune) bool {
	return r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
