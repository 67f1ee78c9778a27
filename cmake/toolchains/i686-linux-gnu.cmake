# 32-bit x86 Linux with the i686 cross compiler (Debian: gcc-i686-linux-gnu,
# libc6-dev-i386-cross); tests run under qemu-user (Debian: qemu-user), as
# this kernel runs no 32-bit binaries itself. Used by `make test-cross`.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR i686)
set(CMAKE_C_COMPILER i686-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/i686-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# Config packages (an installed tinyecs) may live outside the target root.
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# The libraries of the target's root first: ld.so would otherwise take
# the host's /etc/ld.so.cache, which names the host's own i686 libraries
# when those are installed too (a libc of another version, under which a
# program that ran threads hangs at exit).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-i386 -L /usr/i686-linux-gnu
    -E LD_LIBRARY_PATH=/usr/i686-linux-gnu/lib)
