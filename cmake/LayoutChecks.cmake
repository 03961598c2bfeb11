# The link half of the dependency picture (docs/architecture.md): a library that must stay
# narrow fails the configure step when anything it links, directly or through other
# targets, is on its forbidden list. tests/layout/check_layout.py checks the includes.

# The targets and libraries `target` links, transitively (PRIVATE ones included).
function(attrib_link_closure target out)
  set(seen "")
  set(queue ${target})
  while(queue)
    list(POP_FRONT queue current)
    if(NOT TARGET ${current})
      continue()
    endif()
    get_target_property(links ${current} LINK_LIBRARIES)
    get_target_property(interface ${current} INTERFACE_LINK_LIBRARIES)
    foreach(item IN LISTS links interface)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" item "${item}")
      if(item AND NOT item STREQUAL "links-NOTFOUND" AND NOT item STREQUAL "interface-NOTFOUND"
         AND NOT item IN_LIST seen)
        list(APPEND seen ${item})
        list(APPEND queue ${item})
      endif()
    endforeach()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

function(attrib_forbid_links target)
  attrib_link_closure(${target} closure)
  foreach(forbidden IN LISTS ARGN)
    if(forbidden IN_LIST closure)
      message(FATAL_ERROR "${target} links ${forbidden}, which docs/architecture.md forbids it "
                          "(it links: ${closure})")
    endif()
  endforeach()
endfunction()

# core: plain data, nothing of attrib above it, no RPC or storage.
attrib_forbid_links(attrib_core attrib_proto attrib_common attrib_rules attrib_collectors attrib_slurm
  gRPC::grpc++ protobuf::libprotobuf PkgConfig::SQLITE3 PkgConfig::RE2 PkgConfig::HS)
# The rules engine: no gRPC, SQLite or collector dependency, and not its evidence library
# (bundles and evaluation sit on the engine, never under it).
attrib_forbid_links(attrib_rules attrib_proto attrib_common attrib_collectors attrib_slurm attrib_rules_evidence
  gRPC::grpc++ protobuf::libprotobuf PkgConfig::SQLITE3)
attrib_forbid_links(attrib_rules_evidence attrib_proto attrib_common attrib_collectors attrib_slurm
  gRPC::grpc++ protobuf::libprotobuf PkgConfig::SQLITE3)
# Collectors hand over lines; extraction is the caller's: no rules engine, no regex libraries.
attrib_forbid_links(attrib_collectors attrib_rules PkgConfig::RE2 PkgConfig::HS attrib_proto gRPC::grpc++)
# The SPANK plugin is loaded into srun, slurmd and slurmstepd: nothing heavy, no network.
attrib_forbid_links(spank_attrib attrib_rules attrib_collectors attrib_proto attrib_common
  PkgConfig::RE2 PkgConfig::HS gRPC::grpc++ protobuf::libprotobuf yaml-cpp)
