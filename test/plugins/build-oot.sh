#!/bin/sh
# Build a plugin out of tree using nothing but pkg-config, as a site would.
# usage: build-oot.sh PKG_CONFIG_DIR CC SOURCE OUTPUT
set -e
PKG_CONFIG_PATH="$1"
export PKG_CONFIG_PATH
flags=$(pkg-config --cflags --libs slurm-jobtap)
exec $2 -shared -fPIC -Wall -Werror -o "$4" "$3" $flags
