/*
** os.h — what the library asks of the platform (os.c): a monotonic clock.
** The rest of the library is plain C11 and includes no system header
** beyond the C library's; whatever differs between POSIX and Windows
** lives behind these functions. Included by private.h only.
*/
#ifndef TECS_OS_H
#define TECS_OS_H

/* Seconds on a clock that never goes back, from an arbitrary origin: for
** differences only. */
double tecs__os_now(void);

#endif
