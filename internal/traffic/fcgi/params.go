package fcgi

import (
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// Params returns the parameters nginx would send to php-fpm with Debian's
// fastcgi_params (plus SCRIPT_FILENAME) for a request: method, target (an
// absolute URL "http://host:port/path?query" or just "/path?query"), the
// script to run, request headers and body (only its length is used; send the
// body itself as stdin).
//
// Two deliberate differences from a stock nginx: HTTP_HOST keeps the port
// (WordPress on a non-80 port redirects forever without it), and
// REDIRECT_STATUS is set because php-cgi builds refuse to run without it.
// Header names become HTTP_NAME with dashes as underscores; Content-Type and
// Content-Length go to CONTENT_TYPE and CONTENT_LENGTH instead, as in CGI.
func Params(method, target, scriptFilename string, header http.Header, body []byte) map[string]string {
	host, port := "localhost", "80"
	reqURI := target
	if u, err := url.Parse(target); err == nil && u.Host != "" {
		host = u.Hostname()
		if p := u.Port(); p != "" {
			port = p
		} else if u.Scheme == "https" {
			port = "443"
		}
		reqURI = u.RequestURI()
	}
	if reqURI == "" {
		reqURI = "/"
	}
	docURI, query, _ := strings.Cut(reqURI, "?")
	if dec, err := url.PathUnescape(docURI); err == nil {
		docURI = dec // nginx's $document_uri is decoded
	}

	// SCRIPT_NAME is the URL path of the script. When the URL maps to the
	// script file (SCRIPT_FILENAME = DOCUMENT_ROOT + SCRIPT_NAME, nginx's
	// $fastcgi_script_name) the root follows; otherwise (a front controller
	// such as WordPress's index.php serving /some/page) the script's own
	// name is used.
	scriptName := docURI
	docRoot := path.Dir(scriptFilename)
	if strings.HasSuffix(scriptFilename, docURI) && docURI != "/" && strings.HasSuffix(docURI, ".php") {
		docRoot = strings.TrimSuffix(scriptFilename, docURI)
	} else {
		scriptName = "/" + path.Base(scriptFilename)
	}
	if docRoot == "" {
		docRoot = "/"
	}

	hostHeader := host
	if port != "80" {
		hostHeader = host + ":" + port
	}
	p := map[string]string{
		"SCRIPT_FILENAME":   scriptFilename,
		"SCRIPT_NAME":       scriptName,
		"REQUEST_URI":       reqURI,
		"DOCUMENT_URI":      docURI,
		"DOCUMENT_ROOT":     docRoot,
		"QUERY_STRING":      query,
		"REQUEST_METHOD":    method,
		"CONTENT_TYPE":      "",
		"CONTENT_LENGTH":    "",
		"SERVER_PROTOCOL":   "HTTP/1.1",
		"REQUEST_SCHEME":    "http",
		"GATEWAY_INTERFACE": "CGI/1.1",
		"SERVER_SOFTWARE":   "phptune",
		"REMOTE_ADDR":       "127.0.0.1",
		"REMOTE_PORT":       "0",
		"SERVER_ADDR":       "127.0.0.1",
		"SERVER_PORT":       port,
		"SERVER_NAME":       host,
		"HTTP_HOST":         hostHeader,
		"REDIRECT_STATUS":   "200",
	}
	if len(body) > 0 {
		p["CONTENT_LENGTH"] = strconv.Itoa(len(body))
	}
	for name, values := range header {
		switch http.CanonicalHeaderKey(name) {
		case "Content-Type":
			p["CONTENT_TYPE"] = strings.Join(values, ", ")
			continue
		case "Content-Length":
			if len(body) == 0 {
				p["CONTENT_LENGTH"] = strings.Join(values, ", ")
			}
			continue
		}
		key := "HTTP_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		p[key] = strings.Join(values, ", ")
	}
	return p
}
