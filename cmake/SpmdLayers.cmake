# The layer table of DESIGN.md, bottom up, made visible to the compiler: each layer's target
# sees the public headers and, under src/, only itself and the layers before it. A tree of
# symbolic links per layer in the build directory is its include root, so an #include that
# points up the table does not compile (tests/layers/check_layers.py says the same with the
# file and line, for every arrow at once).
set(SPMD_LAYER_ORDER coord cluster runtime comm sharding array kernels compute jit lib multihost
  checkpoint data)

# spmd_layer_includes(<target> <layer> [INTERFACE]): <target>'s include directories are the
# public headers and the include root of <layer> (every layer up to it in the table), PUBLIC, or
# INTERFACE for an interface library.
function(spmd_layer_includes target layer)
  list(FIND SPMD_LAYER_ORDER ${layer} last)
  if(last LESS 0)
    message(FATAL_ERROR "spmd_layer_includes: '${layer}' is not in the layer table")
  endif()
  set(root ${PROJECT_BINARY_DIR}/layer_includes/${layer})
  file(MAKE_DIRECTORY ${root})
  foreach(index RANGE ${last})
    list(GET SPMD_LAYER_ORDER ${index} below)
    if(EXISTS ${PROJECT_SOURCE_DIR}/src/${below} AND NOT EXISTS ${root}/${below})
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${below} ${root}/${below} SYMBOLIC)
    endif()
  endforeach()
  set(scope PUBLIC)
  if(ARGV2 STREQUAL "INTERFACE")
    set(scope INTERFACE)
  endif()
  target_include_directories(${target} ${scope} ${PROJECT_SOURCE_DIR}/include ${root})
endfunction()
