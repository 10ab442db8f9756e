package genome

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file turns expression source into an exNode tree. Lexing is lazy, one
// token ahead of the parser, so the first error in source order is reported.

type exTokKind uint8

const (
	exTEOF exTokKind = iota
	exTInt
	exTFloat
	exTStr
	exTName
	exTKeyword
	exTOp
)

type exToken struct {
	kind exTokKind
	col  int    // 1-based rune column of the first character
	text string // source text
	val  Value  // literal value
}

// exMaxDepth bounds nesting so hostile input cannot exhaust the stack; CPython's
// parser has a similar limit.
const exMaxDepth = 200

// exMaxStr bounds string results so constant folding or evaluation cannot be
// made to allocate without limit.
const exMaxStr = 1 << 20

// exBail carries a *SyntaxError out of the recursive parser and compiler.
type exBail struct{ err *SyntaxError }

func exCatch(err *error) {
	if r := recover(); r != nil {
		b, ok := r.(exBail)
		if !ok {
			panic(r)
		}
		*err = b.err
	}
}

func exFail(src string, col int, msg string) {
	panic(exBail{&SyntaxError{Expr: src, Col: col, Msg: msg}})
}

// Python keywords; True and False are literals, the rest are never names.
var exKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true,
	"async": true, "await": true, "break": true, "class": true, "continue": true,
	"def": true, "del": true, "elif": true, "else": true, "except": true, "finally": true,
	"for": true, "from": true, "global": true, "if": true, "import": true, "in": true,
	"is": true, "lambda": true, "nonlocal": true, "not": true, "or": true, "pass": true,
	"raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
}

// Longest first, so "**" wins over "*". "&&" and "||" are lexed only to give a
// helpful error.
var exOps = []string{
	"**", "//", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"+", "-", "*", "/", "%", "<", ">", "(", ")", "[", "]", ",", "&", "|", "^", "~",
}

type exLexer struct {
	src string
	pos int // byte offset
	col int // rune column of src[pos], 1-based
}

func (lx *exLexer) fail(col int, msg string) { exFail(lx.src, col, msg) }

// moveTo advances to byte offset end, counting runes for the column.
func (lx *exLexer) moveTo(end int) {
	lx.col += utf8.RuneCountInString(lx.src[lx.pos:end])
	lx.pos = end
}

func exIsDigit(c byte) bool { return '0' <= c && c <= '9' }

func exIsIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }

func exIsIdentPart(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc)
}

func (lx *exLexer) next() exToken {
	for lx.pos < len(lx.src) {
		switch lx.src[lx.pos] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			lx.pos++
			lx.col++
			continue
		}
		break
	}
	if lx.pos >= len(lx.src) {
		return exToken{kind: exTEOF, col: lx.col}
	}
	s, start, col := lx.src, lx.pos, lx.col
	c := s[start]
	if exIsDigit(c) || c == '.' && start+1 < len(s) && exIsDigit(s[start+1]) {
		return lx.number()
	}
	if c == '\'' || c == '"' {
		return lx.str(false)
	}
	r, size := utf8.DecodeRuneInString(s[start:])
	if exIsIdentStart(r) {
		end := start + size
		for end < len(s) {
			r, size := utf8.DecodeRuneInString(s[end:])
			if !exIsIdentPart(r) {
				break
			}
			end += size
		}
		word := s[start:end]
		if end < len(s) && (s[end] == '\'' || s[end] == '"') {
			switch strings.ToLower(word) {
			case "r", "u":
				lx.moveTo(end)
				t := lx.str(word == "r" || word == "R")
				t.col, t.text = col, s[start:lx.pos]
				return t
			case "b", "br", "rb":
				lx.fail(col, "bytes literals are not supported")
			case "f", "fr", "rf":
				lx.fail(col, "f-strings are not supported")
			}
		}
		lx.moveTo(end)
		if exKeywords[word] {
			return exToken{kind: exTKeyword, col: col, text: word}
		}
		return exToken{kind: exTName, col: col, text: word}
	}
	for _, op := range exOps {
		if strings.HasPrefix(s[start:], op) {
			lx.moveTo(start + len(op))
			return exToken{kind: exTOp, col: col, text: op}
		}
	}
	msg := "unexpected " + strconv.Quote(string(r))
	switch r {
	case '=':
		msg += `; use "==" to compare`
	case '!':
		msg += `; use "not"`
	}
	lx.fail(col, msg)
	panic("unreachable")
}

// digits scans digit (["_"] digit)* from i, as Python's grammar allows
// underscores only between digits. It returns the end offset, or i if there is
// no leading digit.
func (lx *exLexer) digits(i int, isDigit func(byte) bool, col int, what string) int {
	s := lx.src
	if i >= len(s) || !isDigit(s[i]) {
		return i
	}
	for i < len(s) {
		switch {
		case isDigit(s[i]):
			i++
		case s[i] == '_' && i+1 < len(s) && isDigit(s[i+1]):
			i += 2
		case s[i] == '_':
			lx.fail(col, "invalid "+what+" literal")
		default:
			return i
		}
	}
	return i
}

func (lx *exLexer) number() exToken {
	s, start, col := lx.src, lx.pos, lx.col
	i := start
	if s[i] == '0' && i+1 < len(s) && strings.IndexByte("xXoObB", s[i+1]) >= 0 {
		var base int
		var isDigit func(byte) bool
		var what string
		switch s[i+1] | 0x20 {
		case 'x':
			base, what = 16, "hexadecimal"
			isDigit = func(c byte) bool { return exIsDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }
		case 'o':
			base, what = 8, "octal"
			isDigit = func(c byte) bool { return '0' <= c && c <= '7' }
		default:
			base, what = 2, "binary"
			isDigit = func(c byte) bool { return c == '0' || c == '1' }
		}
		i += 2
		if i < len(s) && s[i] == '_' {
			i++
		}
		end := lx.digits(i, isDigit, col, what)
		if end == i {
			lx.fail(col, "invalid "+what+" literal")
		}
		lx.checkSuffix(end, col, what)
		u, err := strconv.ParseUint(strings.ReplaceAll(s[i:end], "_", ""), base, 64)
		if err != nil || u > 1<<63-1 {
			lx.fail(col, "integer literal too large")
		}
		lx.moveTo(end)
		return exToken{kind: exTInt, col: col, text: s[start:end], val: Int(int64(u))}
	}
	end := lx.digits(i, exIsDigit, col, "decimal")
	intEnd := end
	isFloat := false
	if end < len(s) && s[end] == '.' {
		isFloat = true
		end = lx.digits(end+1, exIsDigit, col, "decimal")
	}
	if end < len(s) && s[end]|0x20 == 'e' {
		j := end + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		e := lx.digits(j, exIsDigit, col, "decimal")
		if e == j {
			lx.fail(col, "invalid decimal literal")
		}
		isFloat, end = true, e
	}
	lx.checkSuffix(end, col, "decimal")
	text := s[start:end]
	clean := strings.ReplaceAll(text, "_", "")
	lx.moveTo(end)
	if isFloat {
		// A range error still yields Python's value: inf on overflow.
		f, err := strconv.ParseFloat(clean, 64)
		if errors.Is(err, strconv.ErrSyntax) {
			lx.fail(col, "invalid decimal literal")
		}
		return exToken{kind: exTFloat, col: col, text: text, val: Float(f)}
	}
	digits := s[start:intEnd]
	if len(digits) > 1 && digits[0] == '0' && strings.Trim(digits, "0_") != "" {
		lx.fail(col, "leading zeros in decimal integer literals are not permitted")
	}
	n, err := strconv.ParseInt(clean, 10, 64)
	if err != nil {
		lx.fail(col, "integer literal too large")
	}
	return exToken{kind: exTInt, col: col, text: text, val: Int(n)}
}

// checkSuffix rejects a number running straight into a name, like "1abc" or "1j".
func (lx *exLexer) checkSuffix(end, col int, what string) {
	if end >= len(lx.src) {
		return
	}
	r, _ := utf8.DecodeRuneInString(lx.src[end:])
	if r == 'j' || r == 'J' {
		lx.fail(col, "complex numbers are not supported")
	}
	if exIsIdentPart(r) || r == '.' {
		lx.fail(col, "invalid "+what+" literal")
	}
}

// str lexes a quoted string at lx.pos, with Python's escapes unless raw.
func (lx *exLexer) str(raw bool) exToken {
	s, start, col := lx.src, lx.pos, lx.col
	quote := s[start : start+1]
	if strings.HasPrefix(s[start:], strings.Repeat(quote, 3)) {
		quote = s[start : start+3]
	}
	i := start + len(quote)
	var b strings.Builder
	for {
		if i >= len(s) || len(quote) == 1 && s[i] == '\n' {
			lx.fail(col, "unterminated string literal")
		}
		if strings.HasPrefix(s[i:], quote) {
			i += len(quote)
			break
		}
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			lx.fail(col, "unterminated string literal")
		}
		if raw {
			// The backslash stays, but still keeps the next character from ending the string.
			b.WriteString(s[i : i+2])
			i += 2
			continue
		}
		i = lx.escape(&b, i, col)
	}
	if b.Len() > exMaxStr {
		lx.fail(col, "string literal too long")
	}
	lx.moveTo(i)
	return exToken{kind: exTStr, col: col, text: s[start:i], val: Str(b.String())}
}

var (
	exEscapes   = map[byte]byte{'\\': '\\', '\'': '\'', '"': '"', 'a': 7, 'b': 8, 'f': 12, 'n': 10, 'r': 13, 't': 9, 'v': 11}
	exEscapeLen = map[byte]int{'x': 2, 'u': 4, 'U': 8}
)

// escape decodes the escape sequence at s[i] == '\\' and returns the offset after it.
func (lx *exLexer) escape(b *strings.Builder, i, col int) int {
	s := lx.src
	c := s[i+1]
	if r, ok := exEscapes[c]; ok {
		b.WriteByte(r)
		return i + 2
	}
	switch {
	case c == '\n':
		return i + 2
	case '0' <= c && c <= '7':
		j, v := i+1, 0
		for j < len(s) && j < i+4 && '0' <= s[j] && s[j] <= '7' {
			v = v*8 + int(s[j]-'0')
			j++
		}
		b.WriteRune(rune(v))
		return j
	case c == 'x' || c == 'u' || c == 'U':
		n := exEscapeLen[c]
		j := i + 2
		if j+n > len(s) {
			lx.fail(col, "truncated \\"+string(c)+" escape")
		}
		v, err := strconv.ParseUint(s[j:j+n], 16, 32)
		if err != nil || strings.ContainsAny(s[j:j+n], "+-_") {
			lx.fail(col, "truncated \\"+string(c)+" escape")
		}
		if v > unicode.MaxRune {
			lx.fail(col, "illegal Unicode character")
		}
		b.WriteRune(rune(v))
		return j + n
	case c == 'N':
		lx.fail(col, `\N{...} escapes are not supported`)
	}
	// Python keeps unknown escapes as written.
	b.WriteByte('\\')
	return i + 1
}

type exOpcode uint8

const (
	exConst exOpcode = iota
	exName
	exList  // list or tuple display; kids are the elements
	exRange // range(...); kids are the arguments
	exComp  // [kids[0] for name in kids[1] if kids[2:]...]
	exCall  // builtin call; name is the function, kids the arguments
	exCond  // kids[0] if kids[1] else kids[2]
	exOr
	exAnd
	exNot
	exChain // chain: kids are operands, cmps the operators between them
	exBitOr
	exBitXor
	exBitAnd
	exLsh
	exRsh
	exAdd
	exSub
	exMul
	exDiv
	exFloorDiv
	exMod
	exNeg
	exPos
	exInvert
	exPow
	exLT
	exLE
	exGT
	exGE
	exEQ
	exNE
	exIn
	exNotIn
)

var exOpText = [...]string{
	exOr: "or", exAnd: "and", exNot: "not",
	exBitOr: "|", exBitXor: "^", exBitAnd: "&", exLsh: "<<", exRsh: ">>",
	exAdd: "+", exSub: "-", exMul: "*", exDiv: "/", exFloorDiv: "//", exMod: "%",
	exNeg: "-", exPos: "+", exInvert: "~", exPow: "** or pow()",
	exLT: "<", exLE: "<=", exGT: ">", exGE: ">=", exEQ: "==", exNE: "!=", exIn: "in", exNotIn: "not in",
}

// exNode is the parsed form; kids are always in source order, so a pre-order
// walk meets names in first-use order.
type exNode struct {
	op   exOpcode
	col  int
	val  Value  // exConst, or the folded value when folded
	name string // exName, exCall, exComp (loop variable)
	slot int    // exName, once resolved
	kids []*exNode
	cmps []exOpcode // exChain

	folded bool // the general compiler reduced the node to the constant val
}

func (n *exNode) isList() bool { return n.op == exList || n.op == exRange || n.op == exComp }

type exParser struct {
	lx    exLexer
	tok   exToken
	depth int
}

// exParse parses src as one expression. first is the column of its first token.
func exParse(src string) (root *exNode, first int, err error) {
	defer exCatch(&err)
	p := &exParser{lx: exLexer{src: src, col: 1}}
	p.advance()
	if p.tok.kind == exTEOF {
		p.fail(1, "empty expression")
	}
	first = p.tok.col
	root = p.test()
	if p.tok.kind != exTEOF {
		p.unexpected()
	}
	return root, first, nil
}

func (p *exParser) fail(col int, msg string) { exFail(p.lx.src, col, msg) }
func (p *exParser) advance()                 { p.tok = p.lx.next() }
func (p *exParser) isOp(s string) bool       { return p.tok.kind == exTOp && p.tok.text == s }
func (p *exParser) isKw(s string) bool       { return p.tok.kind == exTKeyword && p.tok.text == s }

func (p *exParser) unexpected() {
	t := p.tok
	if t.kind == exTEOF {
		p.fail(t.col, "unexpected end of expression")
	}
	msg := "unexpected " + strconv.Quote(t.text)
	switch t.text {
	case "&&":
		msg += `; use "and"`
	case "||":
		msg += `; use "or"`
	}
	p.fail(t.col, msg)
}

func (p *exParser) enter() {
	p.depth++
	if p.depth > exMaxDepth {
		p.fail(p.tok.col, "expression nested too deeply")
	}
}

func (p *exParser) leave() { p.depth-- }

// close consumes the closing bracket of the one opened at col.
func (p *exParser) close(open, closer string, col int) {
	if p.isOp(closer) {
		p.advance()
		return
	}
	if p.tok.kind == exTEOF {
		p.fail(col, strconv.Quote(open)+" was never closed")
	}
	p.unexpected()
}

func (p *exParser) test() *exNode {
	p.enter()
	x := p.or()
	if p.isKw("if") {
		col := p.tok.col
		p.advance()
		c := p.or()
		if !p.isKw("else") {
			p.unexpected()
		}
		p.advance()
		y := p.test()
		x = &exNode{op: exCond, col: col, kids: []*exNode{x, c, y}}
	}
	p.leave()
	return x
}

func (p *exParser) or() *exNode {
	x := p.and()
	for p.isKw("or") {
		col := p.tok.col
		p.advance()
		x = &exNode{op: exOr, col: col, kids: []*exNode{x, p.and()}}
	}
	return x
}

func (p *exParser) and() *exNode {
	x := p.not()
	for p.isKw("and") {
		col := p.tok.col
		p.advance()
		x = &exNode{op: exAnd, col: col, kids: []*exNode{x, p.not()}}
	}
	return x
}

func (p *exParser) not() *exNode {
	if !p.isKw("not") {
		return p.comparison()
	}
	col := p.tok.col
	p.advance()
	p.enter()
	x := p.not()
	p.leave()
	return &exNode{op: exNot, col: col, kids: []*exNode{x}}
}

var exCmpOps = map[string]exOpcode{"<": exLT, "<=": exLE, ">": exGT, ">=": exGE, "==": exEQ, "!=": exNE}

func (p *exParser) comparison() *exNode {
	x := p.binary(0)
	var n *exNode
	for {
		var op exOpcode
		col := p.tok.col
		switch {
		case p.tok.kind == exTOp && exCmpOps[p.tok.text] != 0:
			op = exCmpOps[p.tok.text]
		case p.isKw("in"):
			op = exIn
		case p.isKw("not"):
			p.advance()
			if !p.isKw("in") {
				p.unexpected()
			}
			op = exNotIn
		case p.isKw("is"):
			p.fail(col, `"is" is not supported; use "=="`)
		default:
			if n != nil {
				return n
			}
			return x
		}
		p.advance()
		if n == nil {
			n = &exNode{op: exChain, col: col, kids: []*exNode{x}}
		}
		n.kids = append(n.kids, p.binary(0))
		n.cmps = append(n.cmps, op)
	}
}

// Binary operator levels from lowest to highest precedence, below unary minus.
var exLevels = []map[string]exOpcode{
	{"|": exBitOr},
	{"^": exBitXor},
	{"&": exBitAnd},
	{"<<": exLsh, ">>": exRsh},
	{"+": exAdd, "-": exSub},
	{"*": exMul, "/": exDiv, "//": exFloorDiv, "%": exMod},
}

func (p *exParser) binary(level int) *exNode {
	if level == len(exLevels) {
		return p.factor()
	}
	x := p.binary(level + 1)
	for p.tok.kind == exTOp {
		op, ok := exLevels[level][p.tok.text]
		if !ok {
			break
		}
		col := p.tok.col
		p.advance()
		x = &exNode{op: op, col: col, kids: []*exNode{x, p.binary(level + 1)}}
	}
	return x
}

var exUnaryOps = map[string]exOpcode{"-": exNeg, "+": exPos, "~": exInvert}

func (p *exParser) factor() *exNode {
	if p.tok.kind == exTOp {
		op, ok := exUnaryOps[p.tok.text]
		if ok {
			col := p.tok.col
			p.advance()
			p.enter()
			x := p.factor()
			p.leave()
			return &exNode{op: op, col: col, kids: []*exNode{x}}
		}
	}
	x := p.atom()
	if p.isOp("**") {
		col := p.tok.col
		p.advance()
		p.enter()
		y := p.factor() // right-associative, and 2**-1 is allowed
		p.leave()
		x = &exNode{op: exPow, col: col, kids: []*exNode{x, y}}
	}
	return x
}

func (p *exParser) atom() *exNode {
	t := p.tok
	switch t.kind {
	case exTInt, exTFloat:
		p.advance()
		return &exNode{op: exConst, col: t.col, val: t.val}
	case exTStr:
		s := t.val.S
		p.advance()
		for p.tok.kind == exTStr { // adjacent literals concatenate
			s += p.tok.val.S
			if len(s) > exMaxStr {
				p.fail(t.col, "string literal too long")
			}
			p.advance()
		}
		return &exNode{op: exConst, col: t.col, val: Str(s)}
	case exTName:
		p.advance()
		if p.isOp("(") {
			return p.call(t)
		}
		return &exNode{op: exName, col: t.col, name: t.text}
	case exTKeyword:
		switch t.text {
		case "True", "False":
			p.advance()
			return &exNode{op: exConst, col: t.col, val: Bool(t.text == "True")}
		case "None":
			p.fail(t.col, "None is not supported")
		}
	case exTOp:
		switch t.text {
		case "(":
			p.advance()
			if p.isOp(")") {
				p.advance()
				return &exNode{op: exList, col: t.col}
			}
			x := p.test()
			if p.isOp(",") { // a tuple
				x = &exNode{op: exList, col: t.col, kids: []*exNode{x}}
				for p.isOp(",") {
					p.advance()
					if p.isOp(")") {
						break
					}
					x.kids = append(x.kids, p.test())
				}
			}
			p.close("(", ")", t.col)
			return x
		case "[":
			p.advance()
			n := &exNode{op: exList, col: t.col}
			if p.isOp("]") {
				p.advance()
				return n
			}
			x := p.test()
			if p.isKw("for") {
				return p.comprehension(t.col, x)
			}
			n.kids = append(n.kids, x)
			for p.isOp(",") {
				p.advance()
				if p.isOp("]") {
					break
				}
				n.kids = append(n.kids, p.test())
			}
			p.close("[", "]", t.col)
			return n
		}
	}
	p.unexpected()
	panic("unreachable")
}

func (p *exParser) comprehension(col int, elem *exNode) *exNode {
	p.advance() // "for"
	if p.tok.kind != exTName {
		p.unexpected()
	}
	v := p.tok
	p.advance()
	if !p.isKw("in") {
		p.unexpected()
	}
	p.advance()
	n := &exNode{op: exComp, col: col, name: v.text, kids: []*exNode{elem, p.or()}}
	for p.isKw("if") {
		p.advance()
		n.kids = append(n.kids, p.or())
	}
	if p.isKw("for") {
		p.fail(p.tok.col, "nested comprehensions are not supported")
	}
	p.close("[", "]", col)
	return n
}

func (p *exParser) call(fn exToken) *exNode {
	open := p.tok.col
	p.advance()
	var args []*exNode
	for !p.isOp(")") {
		args = append(args, p.test())
		if !p.isOp(",") {
			break
		}
		p.advance()
	}
	p.close("(", ")", open)
	n := &exNode{op: exCall, col: fn.col, name: fn.text, kids: args}
	arity := func(lo, hi int) {
		if len(args) < lo || len(args) > hi {
			want := strconv.Itoa(lo) + " to " + strconv.Itoa(hi) + " arguments"
			if hi == 1 && lo == 1 {
				want = "exactly 1 argument"
			}
			p.fail(fn.col, fn.text+"() takes "+want+", got "+strconv.Itoa(len(args)))
		}
	}
	switch fn.text {
	case "min", "max":
		if len(args) == 0 {
			p.fail(fn.col, fn.text+"() expects at least 1 argument, got 0")
		}
		if len(args) == 1 && args[0].op != exList {
			p.fail(args[0].col, fn.text+"() of one argument needs a list or tuple")
		}
	case "abs", "round":
		arity(1, 1)
	case "int", "float", "bool", "str":
		arity(0, 1)
	case "range":
		arity(1, 3)
		n.op = exRange
	case "list", "tuple":
		arity(0, 1)
		if len(args) == 0 {
			return &exNode{op: exList, col: fn.col}
		}
		if !args[0].isList() {
			p.fail(args[0].col, fn.text+"() argument must be a list, tuple, range or comprehension")
		}
		return args[0]
	default:
		p.fail(fn.col, "unknown function "+strconv.Quote(fn.text))
	}
	return n
}
