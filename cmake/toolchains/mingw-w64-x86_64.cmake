# 64-bit Windows with the mingw-w64 cross compiler (Debian: gcc-mingw-w64-x86-64);
# tests run under wine (Debian: wine64). Used by `make test-cross`.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# Config packages (an installed tinyecs) may live outside the target root.
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# wine64 itself, not the `wine` wrapper, which asks for the 32-bit wine too.
find_program(TECS_WINE64 NAMES wine64 PATHS /usr/lib/wine NO_DEFAULT_PATH)
if(NOT TECS_WINE64)
  find_program(TECS_WINE64 NAMES wine64 wine)
endif()
if(TECS_WINE64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${TECS_WINE64})
endif()
