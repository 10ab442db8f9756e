package certs

// CanonicalJSON is the RFC 8785 form of one JSON value, for tests.
func CanonicalJSON(data []byte) ([]byte, error) {
	tree, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	return writeCanonical(tree)
}
