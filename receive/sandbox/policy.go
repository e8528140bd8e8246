package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Policy is what a confined command may touch on the filesystem, by path:
// a right on a directory holds for everything beneath it. Nothing outside
// these paths can be read, written or run. It is an input: the caller
// composes it (receive/checkrun: System, the checkout, the scratch
// directory, the caches, the objects the checkout borrows).
type Policy struct {
	// Exec: read and execute (the system and toolchain trees).
	Exec []string
	// Read: read only (configuration files, /proc, borrowed objects).
	Read []string
	// Write: read, write, execute, create, remove and rename beneath
	// (the checkout, the scratch directory).
	Write []string
	// Caches: as Write; named apart so the run can say them (--cache).
	Caches []string
	// WriteOnly: create, write, truncate, remove and rename beneath, but
	// neither read, list nor run what is there (a checkout whose reads
	// are confined: build outputs may be written anywhere in it, and read
	// back only where another grant allows it).
	WriteOnly []string
	// Devices: device files read and written, with their ioctls.
	Devices []string
}

// Merge returns p with q's paths added.
func (p Policy) Merge(q Policy) Policy {
	cat := func(a, b []string) []string { return append(slices.Clip(a), b...) }
	return Policy{Exec: cat(p.Exec, q.Exec), Read: cat(p.Read, q.Read), Write: cat(p.Write, q.Write),
		Caches: cat(p.Caches, q.Caches), WriteOnly: cat(p.WriteOnly, q.WriteOnly), Devices: cat(p.Devices, q.Devices)}
}

// systemExec are the trees of programs and libraries every command may run.
var systemExec = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcRead is what of /etc a command may read: what the C library, git,
// TLS clients and shells read (users and groups, name resolution, the
// dynamic linker's cache, time zone and locale, certificate authorities,
// the system git configuration). Not /etc as a whole: it holds password
// hashes (shadow), the SSH host keys, TLS private keys (ssl/private) and
// other services' credentials (npmrc, pip.conf, maven's settings).
var etcRead = []string{
	"passwd", "group", "nsswitch.conf", "hosts", "host.conf", "resolv.conf", "gai.conf",
	"services", "protocols", "networks", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
	"localtime", "timezone", "locale.alias", "locale.conf", "locale.gen", "default/locale",
	"ssl/certs", "ssl/openssl.cnf", "ca-certificates", "ca-certificates.conf",
	"pki/ca-trust", "pki/tls/certs", "pki/tls/openssl.cnf", "crypto-policies",
	"alternatives", "gitconfig", "mime.types", "magic", "magic.mime", "terminfo",
	"os-release", "lsb-release", "debian_version", "bash.bashrc", "profile", "inputrc",
}

// systemDevices are the device files a command may read and write.
var systemDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// System is the policy of the system and toolchain trees for a command
// whose PATH is pathEnv: run /usr, /bin, /sbin, /lib*; run every
// directory of PATH and the Go root of a go found there; read the part of
// /etc etcRead lists, /proc (where Landlock's ptrace rule keeps other
// processes' files closed) and /sys; read and write /dev/null and the
// other devices of systemDevices.
func System(pathEnv string) Policy {
	p := Policy{Exec: slices.Clone(systemExec), Devices: slices.Clone(systemDevices), Read: []string{"/proc", "/sys"}}
	for _, e := range etcRead {
		p.Read = append(p.Read, "/etc/"+e)
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue // "." and relative entries name the current directory: the checkout, granted anyway
		}
		p.Exec = append(p.Exec, dir)
		if root := goRoot(dir); root != "" {
			p.Exec = append(p.Exec, root)
		}
	}
	return p
}

// goRoot is the Go root of dir/go: the directory above the bin directory
// that holds the real binary, when it has the toolchain's pkg/tool.
func goRoot(dir string) string {
	bin, err := filepath.EvalSymlinks(filepath.Join(dir, "go"))
	if err != nil {
		return ""
	}
	if filepath.Base(filepath.Dir(bin)) != "bin" {
		return ""
	}
	root := filepath.Dir(filepath.Dir(bin))
	if fi, err := os.Stat(filepath.Join(root, "pkg", "tool")); err != nil || !fi.IsDir() {
		return ""
	}
	return root
}

// Without returns p without the grants that would reach a path of hidden —
// a grant of the path itself or of a directory above it — or write one of
// noWrite — a writable grant (Write, Caches, WriteOnly) of it, above it or beneath it
// — and the grants it dropped. Reading beneath a hidden path stays
// possible (the checkout's borrowed objects lie in the worker's
// repository; a toolchain may lie in the worker's home), and so does
// writing beneath a hidden path that is not in noWrite (a cache in the
// worker's home). Paths are compared with their symbolic links resolved,
// as Landlock sees them.
func (p Policy) Without(hidden, noWrite []string) (Policy, []string) {
	resolveAll := func(ps []string) []string {
		var out []string
		for _, d := range ps {
			if d != "" {
				out = append(out, resolve(d))
			}
		}
		return out
	}
	hs, ws := resolveAll(hidden), resolveAll(noWrite)
	var dropped []string
	keep := func(grants []string, writes bool) []string {
		var out []string
		for _, g := range grants {
			r := resolve(g)
			bad := false
			for _, d := range hs {
				bad = bad || within(d, r)
			}
			for _, d := range ws {
				bad = bad || writes && (within(d, r) || within(r, d))
			}
			if bad {
				dropped = append(dropped, g)
				continue
			}
			out = append(out, g)
		}
		return out
	}
	out := Policy{Exec: keep(p.Exec, false), Read: keep(p.Read, false), Write: keep(p.Write, true),
		Caches: keep(p.Caches, true), WriteOnly: keep(p.WriteOnly, true), Devices: keep(p.Devices, false)}
	return out, dropped
}

// within reports whether path p is dir or lies beneath it (both clean and
// absolute).
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// resolve is p absolute, clean, with its symbolic links resolved as far as
// it exists.
func resolve(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	// Resolve the part that exists; the rest is kept as written.
	dir, rest := filepath.Dir(p), filepath.Base(p)
	if dir == p {
		return p
	}
	return filepath.Join(resolve(dir), rest)
}
