package site

import "strconv"

// ParseDrupalSettings reads the default connection of a Drupal
// settings.php, best effort: the assignment
//
//	$databases['default']['default'] = [ 'database' => '...', ... ];
//
// (array( ... ) too) with literal values, and Redis's
// $settings['redis.connection']['host'] / ['port']. Its limits: a
// connection built elsewhere (Drupal 7's $databases = array('default' =>
// ...), keys assigned one by one, an included settings.local.php, values
// from getenv()) is not followed; a computed value is named in
// NotLiteral.
func ParseDrupalSettings(file string, src []byte) (*App, error) {
	toks := lexPHP(string(src))
	var s settings
	found, line := false, 0
	for i := 0; i < len(toks); i++ {
		if toks[i].kind != 'v' {
			continue
		}
		keys, next := subscripts(toks, i+1)
		if next >= len(toks) || toks[next].text != "=" || toks[next].kind != 'p' {
			continue
		}
		switch {
		case toks[i].text == "databases" && len(keys) == 2 && keys[0] == "default" && keys[1] == "default" && !found:
			found, line = true, toks[i].line
			end := readArray(toks, next+1, &s)
			i = end
		case toks[i].text == "settings" && len(keys) == 2 && keys[0] == "redis.connection":
			expr, end := untilSemicolon(toks, next+1)
			s.put("redis."+keys[1], exprValue(expr))
			i = end
		}
	}
	if !found {
		return nil, errNoApp("Drupal ($databases['default']['default'])", file)
	}
	a := &App{Kind: "drupal", File: file, Line: line}
	nl := &a.NotLiteral
	s.readDB(&a.DB, dbSettings{Driver: "driver", Name: "database", User: "username", Password: "password",
		Host: "host", Port: "port", Socket: "unix_socket"}, nl)
	a.TablePrefix, _ = s.get("prefix", nl)
	if h, ok := s.get("redis.host", nl); ok && h != "" {
		port, _ := s.get("redis.port", nl)
		a.Caches = append(a.Caches, Cache{Kind: "redis", Addr: tcpAddr(h, port, 6379), Setting: "$settings['redis.connection']"})
	}
	return a, nil
}

// subscripts reads ['a']['b'] after a variable: the literal keys, and the
// index of the token after them.
func subscripts(toks []phpTok, i int) ([]string, int) {
	var keys []string
	for i+2 < len(toks) && toks[i].text == "[" && toks[i].kind == 'p' && toks[i+2].text == "]" && toks[i+2].kind == 'p' &&
		(toks[i+1].kind == 's' && toks[i+1].literal || toks[i+1].kind == 'n') {
		keys = append(keys, toks[i+1].text)
		i += 3
	}
	return keys, i
}

// readArray reads the literal 'key' => value pairs of the array starting
// at toks[i] ("[" or "array" "("), nested arrays skipped, into s; it
// returns the index of the array's last token.
func readArray(toks []phpTok, i int, s *settings) int {
	if i < len(toks) && toks[i].kind == 'w' && lower(toks[i].text) == "array" {
		i++
	}
	if i >= len(toks) || toks[i].kind != 'p' || toks[i].text != "[" && toks[i].text != "(" {
		return i
	}
	body, end := untilClose(toks, i+1)
	for j := 0; j < len(body); {
		// key => value-tokens up to the next "," at depth 0
		k := j
		depth, stop := 0, len(body)
		for x := j; x < len(body); x++ {
			if body[x].kind != 'p' {
				continue
			}
			switch body[x].text {
			case "(", "[":
				depth++
			case ")", "]":
				depth--
			case ",":
				if depth == 0 {
					stop = x
					x = len(body)
				}
			}
		}
		item := body[k:stop]
		j = stop + 1
		if len(item) >= 3 && item[1].text == "=>" && item[1].kind == 'p' && (item[0].kind == 's' || item[0].kind == 'n') {
			key := item[0].text
			if item[0].kind == 'n' {
				if _, err := strconv.Atoi(key); err != nil {
					continue
				}
			}
			s.put(key, exprValue(item[2:]))
		}
	}
	return end
}
