# File capabilities for vtime's one privileged helper (vtime-treewatch: CAP_BPF and CAP_PERFMON,
# what loading the tree watch needs; libvtime/src/tree_watch_load.h says why that is safe).
# vtime_grant_caps(TGT DEST) installs TGT into DEST and grants the capabilities
#  - in the build tree, after every link (linking writes a new file, which has none), when the
#    build runs as root, so that the README's build serves unprivileged users at once;
#  - at `cmake --install` as root without DESTDIR;
#  - in the Debian package, from its postinst (a .deb's archive keeps no file capabilities).
# Elsewhere nothing is granted and unprivileged runs read /proc (docs/install.md "Without root").
find_program(VTIME_SETCAP setcap PATHS /usr/sbin /sbin)
set(VTIME_CAPS "cap_bpf,cap_perfmon=ep")

function(vtime_grant_caps tgt dest)
  install(TARGETS ${tgt} RUNTIME DESTINATION ${dest})
  if(NOT VTIME_SETCAP)
    message(STATUS "vtime: setcap not found (Debian: libcap2-bin): ${tgt} gets no capabilities")
    return()
  endif()
  add_custom_command(TARGET ${tgt} POST_BUILD
    COMMAND sh -c "[ \"$(id -u)\" != 0 ] || ${VTIME_SETCAP} ${VTIME_CAPS} \"$0\" || echo \"vtime: cannot grant ${VTIME_CAPS} to $0: unprivileged runs will read /proc\" >&2"
            $<TARGET_FILE:${tgt}>
    VERBATIM)
  get_target_property(name ${tgt} OUTPUT_NAME)
  install(CODE "
    set(file \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${dest}/${name}\")
    execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(\"\$ENV{DESTDIR}\" STREQUAL \"\" AND uid STREQUAL \"0\")
      execute_process(COMMAND ${VTIME_SETCAP} ${VTIME_CAPS} \${file} RESULT_VARIABLE r)
      if(NOT r EQUAL 0)
        message(WARNING \"cannot grant ${VTIME_CAPS} to \${file}: unprivileged runs will read /proc\")
      endif()
    endif()")
endfunction()

# The package's postinst grants the same, to the installed path (cmake/debian/postinst.in).
set(VTIME_PACKAGED_HELPER /usr/lib/vtime/vtime-treewatch)
configure_file(${CMAKE_CURRENT_LIST_DIR}/debian/postinst.in ${CMAKE_BINARY_DIR}/debian/postinst @ONLY
  FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
