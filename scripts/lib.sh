# Shared shell helpers for scripts/bootstrap, scripts/demo and scripts/test.
# Sourced, not run.

JOBTAP_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Where the Slurm source tree is cached between runs (machine-wide when root,
# so a fresh clone of the repository does not download it again).
jobtap_cache_dir() {
	if [ -n "${SLURM_JOBTAP_CACHE:-}" ]; then
		echo "$SLURM_JOBTAP_CACHE"
	elif [ "$(id -u)" = 0 ]; then
		echo /var/cache/slurm-jobtap
	else
		echo "${XDG_CACHE_HOME:-$HOME/.cache}/slurm-jobtap"
	fi
}

# The build directory every script uses unless told otherwise: build/ on
# the host, build-<release>/ in a release root (never the host's).
jobtap_build_dir() {
	if [ -n "${SLURM_JOBTAP_BUILD:-}" ]; then
		echo "$SLURM_JOBTAP_BUILD"
	elif [ -n "${SLURM_JOBTAP_IN_ROOT:-}" ]; then
		echo "$JOBTAP_TOP/build-$(jobtap_host_release)"
	else
		echo "$JOBTAP_TOP/build"
	fi
}

say() { printf '%s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Run as root, or through sudo when we are not.
as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# apt-get as root, one at a time on this machine (or in this root): the
# lanes of scripts/test install at once (bootstrap's packages, release-root's
# mmdebstrap), and apt-get fails at once on a lock another holds.
jobtap_apt_get() {
	as_root mkdir -p /run/lock
	as_root flock /run/lock/slurm-jobtap-apt env DEBIAN_FRONTEND=noninteractive apt-get "$@"
}

# The Debian packages a machine needs to build, test and package slurm-jobtap
# (scripts/bootstrap installs them; a release root is made with them).
# slurmctld/slurmd/munge are the real daemons of the private test cluster;
# dpkg-dev gives `apt-get source`; libmunge-dev is needed by Slurm's configure.
# pytest and the rest of the python3-* run Slurm's own testsuite/python
# (test/slurm-testsuite); slurmdbd and MariaDB's servers without their
# service packages give that cluster accounting (test/lib/accounting.sh).
#   jobtap_packages RELEASE   (major.minor)
jobtap_packages() {
	local dev=libslurm-dev daemons="slurmctld slurmd slurm-client" dbd=slurmdbd
	# A release built from source has Slurm's build dependencies instead
	# (MariaDB's client library for slurmdbd's accounting plugin; json-c and
	# libyaml for --json and --yaml, as Debian builds it), and mount, which
	# Debian's Slurm packages bring (the harness's second slurmctld mounts in
	# a namespace of its own).
	if jobtap_release_from_source "$1"; then
		dev="libjson-c-dev libyaml-dev" daemons="mount" dbd=default-libmysqlclient-dev
	fi
	echo build-essential gcc g++ make pkg-config meson ninja-build dpkg-dev python3 \
		$dev libjansson-dev liblua5.4-dev lua5.4 libtomlplusplus-dev libmunge-dev \
		munge $daemons iproute2 procps valgrind gdb \
		debhelper fakeroot lintian \
		python3-pytest python3-pytest-timeout python3-pexpect python3-py python3-requests \
		$dbd mariadb-server-core mariadb-client-core
}

# The fuzzing harnesses' compiler (test/fuzz): clang and its runtime
# (libFuzzer, the sanitizers); the same names on Debian 12 (clang 14) and
# 13 (clang 19). Only the host's bootstrap installs them: the fuzz runs of
# scripts/test are host-only, so a release root does without.
jobtap_fuzz_packages() {
	echo clang libclang-rt-dev
}

# What a clean root for the package install test starts with: the Slurm
# daemons and pkg-config, nothing of ours and none of our build dependencies.
jobtap_clean_root_packages() {
	echo munge slurmctld slurmd slurm-client pkg-config iproute2 procps hostname mawk
}

# The Slurm releases (major.minor) we build and test against, each with the
# Debian suite whose root it runs in: Debian's own Slurm package, or (for a
# release Debian does not ship) Slurm built there from SchedMD's source.
jobtap_release_suite() {
	case "$1" in
	22.05) echo bookworm ;;
	24.11 | 25.11 | 26.05) echo trixie ;;
	*) return 1 ;;
	esac
}

jobtap_suite_release() {
	case "$1" in
	bookworm) echo 22.05 ;;
	trixie) echo 24.11 ;;
	*) return 1 ;;
	esac
}

# The releases a --slurm argument names: "all", "debian" (those Debian
# packages, what CI runs), or one supported release.
jobtap_releases() {
	case "$1" in
	all) echo 22.05 24.11 25.11 26.05 ;;
	debian) echo 22.05 24.11 ;;
	*) jobtap_release_suite "$1" >/dev/null && echo "$1" ;;
	esac
}

# Whether release R is built from source (no Debian package ships it).
jobtap_release_from_source() {
	case "$1" in
	25.11 | 26.05) return 0 ;;
	*) return 1 ;;
	esac
}

# Where SchedMD's source tarballs are (slurm-<version>.tar.gz and
# SHA256SUMS): ../shared/slurm beside the repository unless told otherwise.
jobtap_slurm_sources() {
	echo "${SLURM_JOBTAP_SLURM_SOURCES:-$JOBTAP_TOP/../shared/slurm}"
}

# The newest tarball there for release R (major.minor), as its full version.
jobtap_source_version() {
	local dir f
	dir=$(jobtap_slurm_sources)
	f=$(ls "$dir"/slurm-"$1".*.tar.gz 2>/dev/null | sort -V | tail -n 1)
	[ -n "$f" ] || return 1
	f=${f##*/slurm-}
	echo "${f%.tar.gz}"
}

# Where a release built from source finds Slurm's testsuite/python, which
# its tarball lacks (scripts/bootstrap fetches Debian's there).
jobtap_source_testsuite_dir() {
	echo "$(jobtap_cache_dir)/slurm-testsuite"
}

# Inside a release root whose Slurm is built from source: that release
# (release-root marks the root when it makes it).
jobtap_root_source_release() {
	[ -n "${SLURM_JOBTAP_IN_ROOT:-}" ] && [ -s /.jobtap-slurm-release ] || return 1
	cat /.jobtap-slurm-release
}

# The installed Slurm's upstream version, e.g. 22.05.8 (from the public
# header, the same place meson.build reads it).
jobtap_slurm_version() {
	local num
	num=$(sed -n 's/^#define SLURM_VERSION_NUMBER 0x\([0-9a-fA-F]*\).*/\1/p' \
		/usr/include/slurm/slurm_version.h 2>/dev/null)
	[ -n "$num" ] || return 1
	printf '%d.%02d.%d\n' $((16#${num:0:2})) $((16#${num:2:2})) $((16#${num:4:2}))
}

# This machine's own Slurm release (major.minor): the installed one, else
# the one its Debian release ships (before bootstrap has installed it).
jobtap_host_release() {
	local v
	if v=$(jobtap_root_source_release); then
		echo "$v"
	elif v=$(jobtap_slurm_version); then
		echo "${v%.*}"
	else
		jobtap_suite_release "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")" || echo unknown
	fi
}

# Where release-root keeps the root for SUITE (FLAVOUR: dev or clean).
jobtap_release_root_dir() {
	echo "$(jobtap_cache_dir)/root-$1-${2:-dev}"
}

# apt sources (deb822, deb and deb-src) for Debian SUITE, derived from this
# system's own enabled entries for its release: the same archives, options and
# keys, the suite names changed (bookworm-security -> trixie-security). We
# never name an archive host ourselves.
jobtap_apt_sources() {
	local to=$1 from f
	from=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$from" ] || die "cannot tell the Debian release from /etc/os-release"
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		case "$f" in */slurm-jobtap-deb-src.sources) continue ;; esac
		awk -v from="$from" -v to="$to" '
			function flush(t, i) {
				if (n && is_deb && has_rel && !disabled)
					for (t = 0; t < 2; t++) {
						print (t ? "Types: deb-src" : "Types: deb")
						for (i = 1; i <= n; i++) print lines[i]
						print ""
					}
				n = 0; is_deb = 0; has_rel = 0; disabled = 0
			}
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			/^Types:/ { if ($0 ~ /[ \t]deb([ \t]|$)/) is_deb = 1; next }
			/^Enabled:[ \t]*no/ { disabled = 1 }
			/^Suites:/ { if ($0 ~ ("[ \t]" from "([ \t-]|$)")) has_rel = 1; gsub(from, to) }
			{ lines[++n] = $0 }
			END { flush() }' "$f"
	done
	# one-line format: "deb [opts] uri suite comps".
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -e "$f" ] || continue
		case "$f" in */slurm-jobtap-deb-src.list) continue ;; esac
		awk -v from="$from" -v to="$to" '$1 == "deb" && $0 ~ ("[ \t]" from "([ \t-]|$)") {
			gsub(from, to); print; sub(/^deb/, "deb-src"); print }' "$f"
	done
}
