/* fuzz_reader: the fuzzer's input read as a stream of bytes, for the
 * harnesses that build values from it; past the end every byte is 0. */
#ifndef SLURM_JOBTAP_FUZZ_READER_H
#define SLURM_JOBTAP_FUZZ_READER_H

#include <stddef.h>
#include <stdint.h>

struct reader {
    const uint8_t *p;
    size_t left;
};

static inline uint8_t take (struct reader *r)
{
    if (!r->left)
        return 0;
    r->left--;
    return *r->p++;
}

static inline uint64_t take64 (struct reader *r)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | take (r);
    return v;
}

#endif
