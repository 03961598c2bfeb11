#!/usr/bin/env bash
# spank_attrib.so is loaded into srun, sbatch, slurmd and slurmstepd: it must not drag
# gRPC, protobuf, abseil, RE2, vectorscan or yaml-cpp into them (its NEEDED entries).
set -euo pipefail
module=$1
needed=$(readelf -d "$module" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "spank_attrib.so needs: $(echo $needed)"
if bad=$(grep -E 'grpc|protobuf|absl|re2|libhs|yaml|sqlite|curl|munge' <<<"$needed"); then
  echo "FAIL: the SPANK module links $bad" >&2
  exit 1
fi
