/*
** fuzz_model — libFuzzer target: the input is a program for the model
** interpreter (tests/model.c), so every call is checked against the
** reference model, not only for crashes. An input starting with "OM" k0 k1
** also makes allocation 1 + k0 + 256 k1 fail (m_parse_input).
**
** A mismatch prints the shrunk program and aborts, so libFuzzer keeps the
** input as a crash; copy it to fuzz/regress/ and CTest replays it from then
** on (model_fuzz_findings_replay). TECS_MODEL_OFF switches features of the
** interpreter off (tests/model.h), as for the model test.
*/
#include "model.h"
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    m_prog p;
    m_opts o;
    m_parse_input(data, size, 256, &p, &o);
    o.check_every = 16;            /* and after every injected failure, and at the end */
    m_result r = m_run(&p, &o);
    if (r.failed) {
        m_explain(stderr, &p, &o, &r);
        abort();
    }
    m_prog_free(&p);
    return 0;
}
