package site

import "strconv"

// maxArrayDepth bounds how deep phpData follows nested arrays.
const maxArrayDepth = 12

// phpData reads the data a PHP configuration file assigns, by PHP's
// tokens, without running any of it, as flat names:
//
//	$wgDBname = 'wiki';                    $wgDBname
//	$CFG->dbhost = 'localhost';            $CFG.dbhost
//	public $host = 'localhost';            $host (a class's property)
//	$CONFIG = ['dbhost' => 'localhost'];   $CONFIG.dbhost
//	$CONFIG['redis']['host'] = 'x';        $CONFIG.redis.host
//	return ['db' => ['host' => 'x']];      return.db.host
//	$list = ['a', 'b'];                    $list.0, $list.1
//	define('NAME', 'x');                   define.NAME (the first wins, as in PHP)
//
// Each value is one literal, or named as computed (a call, a
// concatenation, a variable, a constant: its word kept). The last
// assignment of a name wins, as when PHP runs the file top to bottom;
// an assignment inside a condition counts as if it ran.
func phpData(toks []phpTok) *settings {
	var s settings
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		var name string
		j := i + 1
		switch {
		case t.kind == 'w' && lower(t.text) == "define" && i+4 < len(toks) && toks[i+1].text == "(" && toks[i+2].kind == 's' && toks[i+3].text == ",":
			expr, end := untilClose(toks, i+4)
			v := exprValue(expr)
			v.line = t.line
			s.put("define."+toks[i+2].text, v)
			i = end
			continue
		case t.kind == 'w' && lower(t.text) == "return":
			name = "return"
		case t.kind == 'v':
			name = "$" + t.text
			for j+2 < len(toks) && toks[j].kind == 'p' && toks[j].text == "-" && toks[j+1].kind == 'p' && toks[j+1].text == ">" && toks[j+2].kind == 'w' {
				name += "." + toks[j+2].text
				j += 3
			}
			keys, next := subscripts(toks, j)
			for _, k := range keys {
				name += "." + k
			}
			j = next
			if j+1 >= len(toks) || toks[j].kind != 'p' || toks[j].text != "=" || toks[j+1].kind == 'p' && toks[j+1].text == "=" {
				continue
			}
			j++
		default:
			continue
		}
		expr, end := untilSemicolon(toks, j)
		putData(&s, name, expr, 0)
		i = end
	}
	return &s
}

// putData records expr under name: an array's elements under name.KEY,
// anything else as exprValue.
func putData(s *settings, name string, expr []phpTok, depth int) {
	body, ok := arrayBody(expr)
	if !ok {
		s.set(name, exprValue(expr))
		return
	}
	if depth >= maxArrayDepth {
		return
	}
	next := 0
	for len(body) > 0 {
		item, rest := splitItem(body)
		body = rest
		if len(item) == 0 {
			continue
		}
		key := ""
		if len(item) >= 2 && item[1].kind == 'p' && item[1].text == "=>" {
			switch k := item[0]; {
			case k.kind == 's' && k.literal:
				key = k.text
			case k.kind == 'n':
				if n, err := strconv.Atoi(k.text); err == nil {
					key, next = k.text, n+1
				}
			}
			if key == "" {
				continue // a computed key
			}
			item = item[2:]
		} else {
			key = strconv.Itoa(next)
			next++
		}
		putData(s, name+"."+key, item, depth+1)
	}
}

// arrayBody is the inside of expr when expr is exactly one array
// literal ([...] or array(...)).
func arrayBody(expr []phpTok) ([]phpTok, bool) {
	i := 0
	if len(expr) > 0 && expr[0].kind == 'w' && lower(expr[0].text) == "array" {
		i = 1
	}
	if i >= len(expr) || expr[i].kind != 'p' || expr[i].text != "[" && expr[i].text != "(" {
		return nil, false
	}
	body, end := untilClose(expr, i+1)
	if end != len(expr)-1 {
		return nil, false // [..] followed by more: an expression
	}
	return body, true
}

// splitItem cuts body at its first "," outside brackets: the item before
// it and the rest after it.
func splitItem(body []phpTok) ([]phpTok, []phpTok) {
	depth := 0
	for x, t := range body {
		if t.kind != 'p' {
			continue
		}
		switch t.text {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
		case ",":
			if depth == 0 {
				return body[:x], body[x+1:]
			}
		}
	}
	return body, nil
}
