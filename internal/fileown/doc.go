// Package fileown keeps the files quasimd makes owned as the files around
// them are. Run as root (a salvage by hand, quasimd started with sudo
// before the package was installed), a new file would belong to root and
// the service's user could not open it; these functions give it the owner,
// and where it replaces another file the mode, of a reference path. They
// do nothing for any other user, who can only make files of its own. Tree
// does the same for everything under a directory, for what a run as root
// made there.
//
// Denied reports, for a permission error on a path, who owns the path and
// the chown that lets the process open it.
package fileown
