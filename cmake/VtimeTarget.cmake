# Common compile settings. vtime_target(TGT [NO_SANITIZE]) adds the warning set and, unless
# NO_SANITIZE is given, the sanitizers chosen with VTIME_SANITIZE. The shim is built without
# sanitizers: it is preloaded into arbitrary programs, where a sanitizer runtime cannot come first.
set(VTIME_WARNINGS -Wall -Wextra -Wpedantic -Wshadow $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict> -Wnon-virtual-dtor -Wcast-align
    -Wunused -Woverloaded-virtual -Wformat=2)
set(VTIME_C_WARNINGS -Wall -Wextra -Wshadow -Wformat=2)

function(vtime_target tgt)
  cmake_parse_arguments(ARG "NO_SANITIZE;C_WARNINGS" "" "" ${ARGN})
  get_target_property(type ${tgt} TYPE)
  set(scope PRIVATE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    return()
  endif()
  target_compile_options(${tgt} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${VTIME_WARNINGS}>
    $<$<COMPILE_LANGUAGE:C>:${VTIME_C_WARNINGS}>)
  if(VTIME_WERROR)
    target_compile_options(${tgt} PRIVATE -Werror)
  endif()
  if(VTIME_SANITIZE AND NOT ARG_NO_SANITIZE)
    list(JOIN VTIME_SANITIZE "," san)
    target_compile_options(${tgt} PRIVATE -fsanitize=${san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
    target_link_options(${tgt} PRIVATE -fsanitize=${san})
  endif()
endfunction()
