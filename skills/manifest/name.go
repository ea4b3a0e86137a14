package manifest

import "fmt"

// MaxNameLen is the longest skill name (spec 10.1).
const MaxNameLen = 64

// ValidName checks the skill naming rule of spec 10.1: 1 to 64 lowercase
// ASCII letters and digits in groups joined by single hyphens (no leading,
// trailing or doubled hyphen). The name is also the directory name and a
// Badger key component, so nothing else is allowed.
func ValidName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: the name is empty", ErrInvalidName)
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("%w: %q is %d characters, at most %d are allowed", ErrInvalidName, name, len(name), MaxNameLen)
	}
	prevHyphen := true // a leading hyphen counts as doubled
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			prevHyphen = false
		case c == '-':
			if prevHyphen {
				return fmt.Errorf("%w: %q: use lowercase letters and digits joined by single hyphens, not starting with a hyphen", ErrInvalidName, name)
			}
			prevHyphen = true
		default:
			return fmt.Errorf("%w: %q: only lowercase letters, digits and hyphens are allowed", ErrInvalidName, name)
		}
	}
	if prevHyphen {
		return fmt.Errorf("%w: %q ends with a hyphen", ErrInvalidName, name)
	}
	return nil
}
