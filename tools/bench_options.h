/*
 * bench_options.h - halox-bench's command line: the options of the
 * exchange benchmark and of `halox-bench pingpong`, each value read whole
 * (bench_options.c).
 */
#ifndef HALOX_BENCH_OPTIONS_H
#define HALOX_BENCH_OPTIONS_H

#include "halox.h"

#include <stdint.h>

typedef struct bench_opts {
    long atoms;
    int grid[3];
    const char *transport;
    int iters, warmup;
    double cutoff, density;
    hx_dtype dtype;
    uint64_t seed;
    const char *csv;
    int fcc;
    int no_put;
    int floor;   /* --floor: measure the ping-pong floor too */
    double tilt; /* --tilt T: triclinic box, xy = xz = yz = T times the box length */
    int field;   /* --field: time a forward with one 4-byte field too */
    /* --newton on|off|on,off: the modes timed, in order; 1 on (eighth-shell
     * plan, forward + reverse), 0 off (full-shell plan, forward alone). */
    int newton[2];
    int nnewton;
} bench_opts;

/* The exchange benchmark's options into o: 0, 1 after --help (printed),
 * 2 after a bad option or value (one line on stderr from rank 0). */
int parse_args(int argc, char **argv, bench_opts *o, int rank);

/* `halox-bench pingpong [--bytes N,N,...] [--iters N]` (argv[1] is
 * "pingpong"): *list and *iters keep their defaults where not given; 0, or
 * 2 after a bad option or value (one line on stderr from rank 0). Every
 * size in the list is a whole number of bytes. */
int parse_pingpong(int argc, char **argv, const char **list, int *iters, int rank);

#endif /* HALOX_BENCH_OPTIONS_H */
