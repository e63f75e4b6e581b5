package results

import "encoding/json"

// TuneFPMVersion reads the php-fpm version a tune's result.json says it
// measured on ("" when it names none); an error when data is not JSON of
// a result's shape.
func TuneFPMVersion(data []byte) (string, error) {
	var r struct {
		Environment struct {
			Versions map[string]string `json:"versions"`
		} `json:"environment"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return "", err
	}
	return r.Environment.Versions["php-fpm"], nil
}
