package baseline

import "errors"

// ErrNoModelURL means Options.ModelURL is empty: point the baseline at the
// mock model's base URL, e.g. http://127.0.0.1:8421/v1.
var ErrNoModelURL = errors.New("baseline: no model URL; pass the mock model's base URL, e.g. http://127.0.0.1:8421/v1")
