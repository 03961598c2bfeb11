# Sourced by every script that compiles (build.sh, fuzz.sh, build-rpms.sh): ccache
# (installed by install-deps.sh; CMakeLists.txt uses it as the compiler launcher when
# present) keeps each object it compiled, so a later build of the same code on the same
# machine -- CI's fresh clone after a session, the RPM's build from its tarball after the
# test tree, the next run in a Debian root -- takes it from the cache instead.
# Objects are shared between checkouts in different directories: paths under the source
# tree are hashed relative to it (base_dir), the build directory is not hashed
# (hash_dir=false: debug information keeps the first build's directory, which nothing
# here reads), no compile command names an absolute path of the checkout
# (tests/support/test_paths.h, core/failpoint.h), and the locale is not hashed.
# ccache_env SOURCE_DIR: exports the settings for builds of the tree at SOURCE_DIR.
ccache_env() {
  export CCACHE_BASEDIR=$1
  export CCACHE_NOHASHDIR=1
  # The locale only translates the compiler's messages, and rpmbuild's %build runs with
  # LANG=C: without this, none of the test tree's objects would serve the RPM's build.
  export CCACHE_SLOPPINESS=locale
  # Four trees of the suite (gcc, the RPM's, clang sanitizer+fuzz, a Debian root's) with
  # -g1: about 2.5 GB; room for a few generations of each.
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-12G}
}
