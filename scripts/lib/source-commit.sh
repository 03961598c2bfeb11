# source_commit SRC: the checkout's commit (short), for run records. Read by git where
# it is installed, else from .git itself (a fresh root has no git); "unknown" otherwise.
source_commit() {
  local git_dir=$1/.git head ref
  if command -v git >/dev/null && git -C "$1" rev-parse --short HEAD 2>/dev/null; then return; fi
  head=$(cat "$git_dir/HEAD" 2>/dev/null) || { echo unknown; return; }
  if [[ $head == "ref: "* ]]; then
    ref=${head#ref: }
    head=$(cat "$git_dir/$ref" 2>/dev/null || awk -v r="$ref" '$2 == r {print $1}' "$git_dir/packed-refs" 2>/dev/null)
  fi
  [[ $head =~ ^[0-9a-f]{40}$ ]] && echo "${head:0:7}" || echo unknown
}
