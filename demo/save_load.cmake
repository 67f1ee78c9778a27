# A run of 2N frames equals a run of N frames saved with --save, loaded
# with --load and run N more: the same checksum line (a CTest case:
# cmake -P this file).
#   DEMO      the boids executable
#   EMULATOR  what runs it in a cross build, separated by '|' (optional)
#   ARGS      the arguments of every run, separated by '|'
#   N         frames of each half
#   FILE      the snapshot file to write
string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "|" ";" emulator "${EMULATOR}")
math(EXPR twice "${N} * 2")
file(REMOVE "${FILE}")
set(sums "")
foreach(run "--frames;${twice}" "--frames;${N};--save;${FILE}" "--frames;${N};--load;${FILE}")
  execute_process(COMMAND ${emulator} "${DEMO}" ${args} ${run} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${run}: exit status ${rc}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  if(NOT out MATCHES "checksum ([0-9a-f]+)")
    message(FATAL_ERROR "${run}: no checksum line:\n${out}")
  endif()
  message(STATUS "${run}: checksum ${CMAKE_MATCH_1}")
  list(APPEND sums "${CMAKE_MATCH_1}")
endforeach()
list(GET sums 0 whole)
list(GET sums 2 resumed)
if(NOT whole STREQUAL resumed)
  message(FATAL_ERROR "${twice} frames: checksum ${whole}; ${N} + save + load + ${N}: ${resumed}")
endif()
