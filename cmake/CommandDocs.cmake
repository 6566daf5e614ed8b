# Build-time script (cmake -P): the man pages and the bash completion of vtime, generated from the
# programs themselves so that they never drift from `--help`.
#   - one page per command path that `vtime completion list` prints (vtime.1, vtime-exec.1,
#     vtime-trace-show.1, ...), made by help2man from that command's --help; the pages of
#     `vtime slurm` and `vtime k8s` also hold the --help of the programs they run (vtime-slurm,
#     vtime-k8s), so `man vtime-slurm` documents both;
#   - share/bash-completion/completions/vtime from `vtime completion bash`.
# Inputs: VTIME (the vtime binary), HELP2MAN, VERSION, OUT (directory), COMPANIONS (NAME=PATH
# items separated by |). vtime-rewrite has no page of its own:
# `vtime rewrite --help` is its help, so vtime-rewrite.1 (the page of `vtime rewrite`) is its page.

cmake_minimum_required(VERSION 3.25)
foreach(v VTIME HELP2MAN VERSION OUT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "CommandDocs.cmake: ${v} not set")
  endif()
endforeach()

file(REMOVE_RECURSE ${OUT}/man1 ${OUT}/completions)
file(MAKE_DIRECTORY ${OUT}/man1 ${OUT}/completions)

# Every page says where the full documentation lives.
file(WRITE ${OUT}/see-also.h2m
  "[see also]\n.BR vtime (1)\n.PP\nThe full documentation: README.md and docs/*.md in share/doc/vtime under the installation\nprefix (/usr/share/doc/vtime from the Debian package), or in the source tree.\n")

# make_page(PAGE SUMMARY PROGRAM HELP_OPTION VERSION_STRING [EXTRA_INCLUDE])
function(make_page page summary program help_option version_string)
  set(args --no-info --no-discard-stderr --section=1 "--name=${summary}"
           "--help-option=${help_option}" "--include=${OUT}/see-also.h2m" --output=${OUT}/man1/${page}.1)
  if(version_string)
    list(APPEND args "--version-string=${version_string}")
  endif()
  if(ARGC GREATER 5)
    list(APPEND args "--include=${ARGV5}")
  endif()
  execute_process(COMMAND ${HELP2MAN} ${args} ${program} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "help2man failed for ${page}: ${err}")
  endif()
endfunction()

# The companions vtime-slurm and vtime-k8s are what `vtime slurm` and `vtime k8s` run: their page
# is the subcommand's (vtime-slurm.1), with the program's own --help as one more section.
set(companion_sections)
string(REPLACE "|" ";" COMPANIONS "${COMPANIONS}")
foreach(companion IN LISTS COMPANIONS)
  string(REPLACE "=" ";" pair "${companion}")
  list(GET pair 0 name)
  list(GET pair 1 program)
  execute_process(COMMAND ${program} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "`${program} --help` failed (${rc})")
  endif()
  string(REPLACE "${program}" "${name}" help "${help}")  # the usage line names the build tree's path
  # Verbatim in roff: backslashes escaped, no line may start a request.
  string(REPLACE "\\" "\\e" help "${help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
  string(REPLACE "vtime-" "vtime " command "${name}")
  file(WRITE ${OUT}/${name}.h2m "[the ${name} program]\n${name} is the Batsim scheduler `${command}` runs under `vtime run`. Its own options:\n.PP\n.nf\n${help}.fi\n")
  list(APPEND companion_sections ${name})
endforeach()

execute_process(COMMAND ${VTIME} completion list OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "`${VTIME} completion list` failed (${rc})")
endif()
string(REPLACE ";" "," listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
foreach(line IN LISTS lines)
  if(line STREQUAL "")
    continue()
  endif()
  string(FIND "${line}" "\t" tab)
  string(SUBSTRING "${line}" 0 ${tab} path)
  math(EXPR after "${tab} + 1")
  string(SUBSTRING "${line}" ${after} -1 summary)
  if(path STREQUAL "")
    make_page(vtime "${summary}" ${VTIME} "--help" "vtime ${VERSION}")
  else()
    string(REPLACE " " "-" page "vtime-${path}")
    if(page IN_LIST companion_sections)
      make_page(${page} "${summary}" ${VTIME} "${path} --help" "${page} ${VERSION}" ${OUT}/${page}.h2m)
    else()
      make_page(${page} "${summary}" ${VTIME} "${path} --help" "${page} ${VERSION}")
    endif()
  endif()
endforeach()

string(REPLACE "|" ";" COMPANIONS "${COMPANIONS}")
execute_process(COMMAND ${VTIME} completion bash OUTPUT_FILE ${OUT}/completions/vtime RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "`${VTIME} completion bash` failed (${rc})")
endif()
file(WRITE ${OUT}/stamp "")
