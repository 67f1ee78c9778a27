# Run the demo once per entry of RUNS and check that every run prints the
# same checksum line (a CTest case: cmake -P this file).
#   DEMO      the boids executable
#   EMULATOR  what runs it in a cross build, separated by '|' (optional)
#   ARGS      the arguments of every run, separated by '|'
#   RUNS      the arguments of each run, runs separated by '|', words by ' '
string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "|" ";" emulator "${EMULATOR}")
string(REPLACE "|" ";" runs "${RUNS}")
set(first "")
foreach(run ${runs})
  separate_arguments(extra UNIX_COMMAND "${run}")
  execute_process(COMMAND ${emulator} "${DEMO}" ${args} ${extra} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${run}: exit status ${rc}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  if(NOT out MATCHES "checksum ([0-9a-f]+)")
    message(FATAL_ERROR "${run}: no checksum line:\n${out}")
  endif()
  set(sum "${CMAKE_MATCH_1}")
  message(STATUS "${run}: checksum ${sum}")
  if(first STREQUAL "")
    set(first "${sum}")
  elseif(NOT sum STREQUAL first)
    message(FATAL_ERROR "${run}: checksum ${sum}, the first run's ${first}\n${out}")
  endif()
endforeach()
