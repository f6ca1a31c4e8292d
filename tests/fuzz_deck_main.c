/*
 * fuzz_deck_main.c - runs the deck fuzz target without libFuzzer, so every
 * build (gcc, and ASan in CI) exercises it: each corpus file as it is (all
 * must parse), then seeded random mutations of them.
 *
 * Usage: fuzz_deck_main MUTATIONS SEED FILE...
 */
#include "hxtest.h"
#include "md/deck.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fuzz_deck_one(const uint8_t *data, size_t size, hx_status *status);

enum { MAX_INPUT = 16384, MAX_FILES = 64 };

typedef struct input {
    uint8_t *data;
    size_t size;
} input;

/* Pieces of the deck language that random bytes rarely form. */
static const char *const tokens[] = {
    "$x",
    "${xx}",
    "${",
    "}",
    "$(",
    ")",
    "(",
    "v_x",
    "v_xx",
    "v_a",
    "&\n",
    "\n",
    "#",
    "\"",
    "'",
    " ",
    "\t",
    "\r\n",
    "*",
    "^",
    "/",
    "-",
    "+",
    "1e308",
    "1e-308",
    "0",
    "-0",
    ".5",
    "2147483648",
    "9e999",
    "run 1\n",
    "variable a equal v_a+1\n",
    "variable a index ${a}\n",
    "variable x index 1\n",
    "variable xx equal 20*$x\n",
    "thermo ${a}\n",
    "${a}${a}${a}${a}",
    "region box block 0 ${xx} 0 2 0 2\n",
    "lattice fcc 0.8442\n",
    "create_box 1 box\n",
    "create_atoms 1 box\n",
    "mass * 1\n",
    "pair_style lj/cut 2.5\n",
    "pair_coeff * * 1 1\n",
    "neigh_modify every 2 delay 4 check yes\n",
    "dump d all atom 5 f.xyz\n",
    "fix 1 all nve\n",
    "velocity all create 1.44 87287 loop geom\n",
    "$(1/0)",
    "$(((((",
    ")))))",
    "\0",
};

static uint64_t below(hxt_rng *r, uint64_t n)
{
    return n ? hxt_next(r) % n : 0;
}

/* One random edit of buf (size *n, room MAX_INPUT). */
static void mutate(hxt_rng *r, uint8_t *buf, size_t *n, const input *files, int nfiles)
{
    size_t len = *n;
    switch (below(r, 7)) {
    case 0: /* flip a bit */
        if (len)
            buf[below(r, len)] ^= (uint8_t) (1u << below(r, 8));
        break;
    case 1: /* a random byte */
        if (len)
            buf[below(r, len)] = (uint8_t) below(r, 256);
        break;
    case 2: { /* delete a range */
        size_t at, k;
        if (!len)
            break;
        at = below(r, len);
        k = 1 + below(r, len - at < 64 ? len - at : 64);
        memmove(buf + at, buf + at + k, len - at - k);
        len -= k;
        break;
    }
    case 3:
    case 4: { /* insert a token */
        size_t t = below(r, sizeof tokens / sizeof tokens[0]);
        size_t k = tokens[t][0] ? strlen(tokens[t]) : 1;
        size_t at = below(r, len + 1);
        if (len + k > MAX_INPUT)
            break;
        memmove(buf + at + k, buf + at, len - at);
        memcpy(buf + at, tokens[t], k);
        len += k;
        break;
    }
    case 5: { /* duplicate a range */
        static uint8_t tmp[MAX_INPUT];
        size_t from, k, at;
        if (!len)
            break;
        from = below(r, len);
        k = 1 + below(r, len - from);
        at = below(r, len + 1);
        if (len + k > MAX_INPUT)
            break;
        memcpy(tmp, buf + from, k);
        memmove(buf + at + k, buf + at, len - at);
        memcpy(buf + at, tmp, k);
        len += k;
        break;
    }
    default: { /* splice in part of another file */
        const input *f = &files[below(r, (uint64_t) nfiles)];
        size_t from, k, at;
        if (!f->size)
            break;
        from = below(r, f->size);
        k = 1 + below(r, f->size - from);
        at = below(r, len + 1);
        if (len + k > MAX_INPUT)
            break;
        memmove(buf + at + k, buf + at, len - at);
        memcpy(buf + at, f->data + from, k);
        len += k;
        break;
    }
    }
    *n = len;
}

static int read_file(const char *path, input *in)
{
    FILE *f = fopen(path, "rb");
    size_t n;
    if (!f)
        return 0;
    in->data = malloc(MAX_INPUT);
    n = in->data ? fread(in->data, 1, MAX_INPUT, f) : 0;
    fclose(f);
    in->size = n;
    return in->data != NULL;
}

int main(int argc, char **argv)
{
    input files[MAX_FILES];
    int nfiles = 0, failures = 0;
    long mutations, ok = 0, total = 0;
    hxt_rng rng;
    uint8_t *buf = malloc(MAX_INPUT);
    size_t n = 0;
    if (argc < 4 || !buf) {
        fprintf(stderr, "usage: %s MUTATIONS SEED FILE...\n", argv[0]);
        return 1;
    }
    mutations = strtol(argv[1], NULL, 10);
    rng.s = strtoull(argv[2], NULL, 10);
    for (int i = 3; i < argc && nfiles < MAX_FILES; i++) {
        hx_status st;
        if (!read_file(argv[i], &files[nfiles])) {
            fprintf(stderr, "fuzz_deck_main: cannot read %s\n", argv[i]);
            return 1;
        }
        /* The corpus is of valid decks: each must parse as it is. */
        failures += fuzz_deck_one(files[nfiles].data, files[nfiles].size, &st);
        if (st != HX_OK) {
            fprintf(stderr, "fuzz_deck_main: corpus deck %s fails: %s\n", argv[i], hx_last_error());
            failures++;
        }
        nfiles++;
    }
    for (long m = 0; m < mutations; m++) {
        hx_status st;
        /* Mostly a fresh copy of a corpus file, sometimes the last mutant
         * again, so that edits stack up. */
        if (m == 0 || below(&rng, 4) != 0) {
            const input *f = &files[below(&rng, (uint64_t) nfiles)];
            memcpy(buf, f->data, f->size);
            n = f->size;
        }
        for (uint64_t k = 1 + below(&rng, 4); k > 0; k--)
            mutate(&rng, buf, &n, files, nfiles);
        if (fuzz_deck_one(buf, n, &st) != 0) {
            fprintf(stderr, "fuzz_deck_main: contract broken by mutation %ld:\n%.*s\n", m, (int) n,
                    (const char *) buf);
            failures++;
        }
        ok += st == HX_OK;
        total++;
    }
    printf("fuzz_deck_main: %d corpus decks, %ld mutations (%ld accepted, %ld rejected), "
           "%d failures\n",
           nfiles, total, ok, total - ok, failures);
    for (int i = 0; i < nfiles; i++)
        free(files[i].data);
    free(buf);
    return failures == 0 && nfiles > 0 ? 0 : 1;
}
