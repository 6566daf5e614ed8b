# What `cmake --install` puts where, the CMake package and pkg-config file of libvtime, the man
# pages and bash completion (generated at build time), and the Debian package (`cpack -G DEB`).
# Layout, from the prefix (docs/install.md):
#   bin/                      vtime, vtime-rewrite, vtime-slurm, vtime-k8s
#   lib/vtime/                libvtime-shim.so, vtime-tracer (found from bin/vtime by a relative
#                             path), install-kubernetes, examples/ (the example schedulers)
#   LIBDIR/                   libvtime.so.0, libvtime.a, cmake/vtime/, pkgconfig/vtime.pc
#   include/vtime/            vtime.h (C API), std.h (C++)
#   share/man/man1/           a page per command
#   share/bash-completion/completions/vtime
#   share/doc/vtime/          README.md, docs/
#   share/vtime/examples/     platforms/ and workloads/ for the example schedulers

include(CMakePackageConfigHelpers)

# The CMake package: find_package(vtime CONFIG) gives vtime::vtime and vtime::vtime_static.
set(VTIME_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/vtime)
install(EXPORT vtimeTargets NAMESPACE vtime:: DESTINATION ${VTIME_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/vtimeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/vtimeConfig.cmake INSTALL_DESTINATION ${VTIME_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/vtimeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/vtimeConfig.cmake ${PROJECT_BINARY_DIR}/vtimeConfigVersion.cmake
  DESTINATION ${VTIME_CMAKE_DIR})

# pkg-config: relocatable (the prefix is found from the .pc file's own folder), so a package
# unpacked anywhere (DESTDIR) works with PKG_CONFIG_PATH alone.
file(RELATIVE_PATH VTIME_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" VTIME_PC_TO_PREFIX "${VTIME_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/vtime.pc.in ${PROJECT_BINARY_DIR}/vtime.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/vtime.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Documentation.
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/platforms ${PROJECT_SOURCE_DIR}/examples/workloads
  DESTINATION ${CMAKE_INSTALL_DATADIR}/vtime/examples)

# Man pages and bash completion, from the built programs (cmake/CommandDocs.cmake). Not in the
# sanitizer builds, which are not installed.
find_program(VTIME_HELP2MAN help2man)
if(VTIME_HELP2MAN AND NOT VTIME_SANITIZE AND NOT VTIME_FUZZ)
  set(docs_out ${PROJECT_BINARY_DIR}/command-docs)
  set(companions)
  set(deps vtime)
  foreach(c vtime-slurm vtime-k8s)
    if(TARGET ${c})
      list(APPEND companions "${c}=$<TARGET_FILE:${c}>")
      list(APPEND deps ${c})
    endif()
  endforeach()
  if(TARGET vtime-rewrite)
    list(APPEND deps vtime-rewrite)
  endif()
  string(JOIN "|" companions ${companions})  # one command-line argument
  add_custom_command(OUTPUT ${docs_out}/stamp
    COMMAND ${CMAKE_COMMAND} -DVTIME=$<TARGET_FILE:vtime> -DHELP2MAN=${VTIME_HELP2MAN}
            -DVERSION=${PROJECT_VERSION} -DOUT=${docs_out} "-DCOMPANIONS=${companions}"
            -P ${PROJECT_SOURCE_DIR}/cmake/CommandDocs.cmake
    DEPENDS ${deps} ${PROJECT_SOURCE_DIR}/cmake/CommandDocs.cmake
    COMMENT "Man pages and bash completion from the programs' --help" VERBATIM)
  add_custom_target(vtime_command_docs ALL DEPENDS ${docs_out}/stamp)
  install(DIRECTORY ${docs_out}/man1 DESTINATION ${CMAKE_INSTALL_MANDIR})
  install(FILES ${docs_out}/completions/vtime DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
elseif(NOT VTIME_HELP2MAN)
  message(STATUS "vtime: help2man not found: no man pages (Debian: help2man)")
endif()

# The Debian package: the files above, with the run-time dependencies dpkg-shlibdeps finds for
# the binaries (libzmq5, libbpf1, libclang1-19, libslurm38, ...), never the -dev packages of the
# build. Programs vtime starts by name rather than links are recommended or suggested.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME vtime)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "vtime developers <vtime@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "run real schedulers under a virtual clock driven by Batsim")
set(CPACK_PACKAGE_DESCRIPTION
  "vtime runs real, unmodified programs and job schedulers (Slurm, Kubernetes' kube-scheduler, your own)
under a virtual clock: time is frozen while any thread runs and jumps to the next deadline when the
whole tree is idle. It records their decisions, replays them deterministically, and includes a
Batsim-compatible simulator. This package holds the vtime command, its LD_PRELOAD shim and tracer,
the source rewriter, the Slurm and Kubernetes bridges and libvtime (headers, shared and static).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gnuplot-nox, libcap2-bin")  # vtime sweep and trace export draw with gnuplot; postinst uses setcap
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurmctld, slurmd, etcd-server, openssl")  # vtime slurm, vtime k8s
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/debian/postinst)  # VtimeCaps.cmake
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
