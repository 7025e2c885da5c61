// Package outdir writes and reads handoff's output files safely. Every
// file a command writes goes through WriteIn, into an output folder
// the user named (-o DIR, or the folder of --trace FILE and calibrate -o
// FILE). The folder's own path is the user's; below it, paths are resolved
// inside the folder (os.Root), so a symbolic link planted in it that leads
// out of it is an error, never followed. Each file is written to a
// temporary name in its folder, synced and renamed over the real name, so
// a reader or a killed run never sees half a file, and a symbolic link of
// that name is replaced, not written through. Commands check their output
// paths (CheckDir, CheckFile) before they simulate anything.
package outdir
