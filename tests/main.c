/* The runner: `tinyecs_tests` runs every case, `tinyecs_tests NAME` one,
** `tinyecs_tests --list` names them. */
#include "test.h"

#define X(name) void test_##name(void);
#include "test_list.h"
#undef X

static const struct { const char *name; void (*fn)(void); } cases[] = {
#define X(name) { #name, test_##name },
#include "test_list.h"
#undef X
};

int main(int argc, char **argv)
{
    size_t n = sizeof cases / sizeof cases[0];
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < n; i++)
            printf("%s\n", cases[i].name);
        return 0;
    }
    int ran = 0;
    for (size_t i = 0; i < n; i++) {
        if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
            continue;
        cases[i].fn();
        ran++;
    }
    if (ran == 0) {
        fprintf(stderr, "no test named %s\n", argc > 1 ? argv[1] : "(any)");
        return 2;
    }
    printf("%d passed, 0 failed\n", ran);
    return 0;
}
