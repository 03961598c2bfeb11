# checkout_tar SRC [PREFIX]: writes to stdout an uncompressed tar of the checkout's files,
# each path under PREFIX ("attrib-1.2.3/", or none). In a git work tree: the tracked and
# the untracked-but-not-ignored files, as git sees them. Elsewhere (a release tarball,
# scripts/in-debian.sh's copy of a checkout): the tree less what .gitignore's top-level
# "/name/" entries name (the build trees) and a .git directory.
checkout_tar() {
  local src=$1 prefix=${2:-}
  if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    local transform=()
    [ -z "$prefix" ] || transform=(--transform "s,^,$prefix,")
    (cd "$src" && git ls-files -z --cached --others --exclude-standard | tar --null -T - "${transform[@]}" -cf -)
  else
    local excludes=(--exclude=./.git) entry transform=()
    if [ -f "$src/.gitignore" ]; then
      while IFS= read -r entry; do
        [[ $entry =~ ^/([^/]+)/$ ]] && excludes+=("--exclude=./${BASH_REMATCH[1]}")
      done <"$src/.gitignore"
    fi
    [ -z "$prefix" ] || transform=(--transform "s,^\.,${prefix%/},")
    tar -C "$src" "${excludes[@]}" "${transform[@]}" -cf - .
  fi
}
