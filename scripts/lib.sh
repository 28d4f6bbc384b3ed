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

# The build directory every script uses unless told otherwise.
jobtap_build_dir() {
	echo "${SLURM_JOBTAP_BUILD:-$JOBTAP_TOP/build}"
}

say() { printf '%s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Run as root, or through sudo when we are not.
as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}
