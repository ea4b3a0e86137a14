// Package bundled holds the default skills shipped inside the silas binary
// (spec 10.7): coding and skill-maker, and the connection skills
// oauth-device, oauth-browser and api-key (spec 10.6). Each is a skill
// directory here, embedded at build time, so their bytes and hashes are
// fixed by the build.
package bundled

import (
	"embed"
	"io/fs"
)

// files holds the bundled skill directories. Files whose names start with
// '.' or '_' (and so __pycache__) are not embedded.
//
//go:embed coding skill-maker oauth-device oauth-browser api-key
var files embed.FS

// FS returns the bundled skills: one skill directory per top-level entry,
// to pass to skills.Load.
func FS() fs.FS { return files }

// Names lists the bundled skills.
func Names() []string {
	return []string{"coding", "skill-maker", "oauth-device", "oauth-browser", "api-key"}
}
