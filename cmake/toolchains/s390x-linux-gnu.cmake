# Big-endian 64-bit Linux (IBM Z) with the s390x cross compiler (Debian:
# gcc-s390x-linux-gnu, libc6-dev-s390x-cross); tests run under qemu-user
# (Debian: qemu-user). Used by `make test-cross`.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(CMAKE_C_COMPILER s390x-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/s390x-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# Config packages (an installed tinyecs) may live outside the target root.
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# The libraries of the target's root first: ld.so would otherwise take
# the host's /etc/ld.so.cache, which names the host's own s390x libraries
# when those are installed too (a libc of another version, under which a
# program that ran threads hangs at exit).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-s390x -L /usr/s390x-linux-gnu
    -E LD_LIBRARY_PATH=/usr/s390x-linux-gnu/lib)
