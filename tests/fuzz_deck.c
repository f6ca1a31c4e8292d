/*
 * fuzz_deck.c - fuzz target of the deck reader: any bytes must give HX_OK
 * or an error with its message, never a crash, a leak, an out-of-bounds
 * read or a hang. Beyond what the sanitizers see, it checks the contract:
 * a failed parse leaves the config untouched and says "fuzz:LINE:" for a
 * parse error; a successful one gives a config hx_md_config_check accepts.
 *
 * Built with -fsanitize=fuzzer (HALOX_FUZZ=ON, clang) or driven by
 * fuzz_deck_main.c in any build.
 */
#include "md/deck.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fuzz_deck_one(const uint8_t *data, size_t size, hx_status *status);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Returns 0 when the contract held. An input that starts with 'V' is read
 * with three -var values, so that they are fuzzed too. */
int fuzz_deck_one(const uint8_t *data, size_t size, hx_status *status)
{
    static const char *const vars[] = {"x=2", "L=5", "s=3"};
    hx_md_config c, before;
    const char *msg;
    int nvars = 0;
    hx_status st;
    if (size > 0 && data[0] == 'V') {
        nvars = 3;
        data++;
        size--;
    }
    hx_md_config_defaults(&c);
    memcpy(&before, &c, sizeof c);
    st = hx_md_deck_parse((const char *) data, size, "fuzz", &c, vars, nvars);
    if (status)
        *status = st;
    msg = hx_last_error();
    if (st == HX_OK) {
        if (hx_md_config_check(&c) != HX_OK) {
            fprintf(stderr, "fuzz_deck: accepted deck gives a bad config: %s\n", hx_last_error());
            return 1;
        }
        return 0;
    }
    if (memcmp(&c, &before, sizeof c) != 0) {
        fprintf(stderr, "fuzz_deck: a failed parse changed the config (%s)\n", msg);
        return 1;
    }
    if (st != HX_ERR_PARSE || strncmp(msg, "fuzz:", 5) != 0 || msg[5] < '1' || msg[5] > '9') {
        fprintf(stderr, "fuzz_deck: error %d without \"fuzz:LINE:\": \"%s\"\n", (int) st, msg);
        return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_deck_one(data, size, NULL) != 0)
        abort();
    return 0;
}
