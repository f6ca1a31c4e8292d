/*
 * bench_options.c - halox-bench's command line (bench_options.h): every
 * value is read whole, a bad one refused with one line naming the option.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_options.h"

#include "core/hxi.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static void usage(void)
{
    printf("usage: halox-bench [exchange] [--atoms N] [--grid NXxNYxNZ] [--transport LIST|all]\n"
           "                   [--iters N] [--warmup N] [--cutoff RH] [--density RHO]\n"
           "                   [--lattice random|fcc] [--dtype float|double] [--seed S]\n"
           "                   [--csv FILE] [--no-put] [--floor] [--tilt T] [--field]\n"
           "                   [--newton on|off|on,off]\n"
           "       halox-bench pingpong [--bytes N,N,...] [--iters N]\n"
           "       halox-bench md ...   (whole MD steps; halox-bench md --help)\n"
           "       halox-bench --list   (every transport: built, or what a build needs)\n"
           "       halox-bench --version\n"
           "transports built:");
    for (int i = 0; i < hx_transport_count(); i++)
        printf(" %s", hx_transport_name_at(i));
    printf("\n");
}

/* A number > 0 from an option's text. */
static hx_status parse_positive(const char *opt, const char *text, double *out)
{
    double v;
    HXI_CHECK(hxi_parse_double(opt, text, &v));
    if (!(v > 0.0))
        return hxi_error(HX_ERR_INVALID, "%s: %s must be > 0", opt, text);
    *out = v;
    return HX_OK;
}

/* --transport: "all" or a comma-separated list of transports halox knows
 * (one not built here is said so after the run). */
static hx_status check_transports(const char *list)
{
    char known[512] = "";
    if (strcmp(list, "all") == 0)
        return HX_OK;
    for (const char *p = list;;) {
        const char *e = strchr(p, ',');
        const size_t len = e ? (size_t) (e - p) : strlen(p);
        int found = 0;
        for (int k = 0; k < hx_transport_known_count() && !found; k++)
            found = strlen(hx_transport_known_at(k)) == len &&
                    strncmp(hx_transport_known_at(k), p, len) == 0;
        if (!found) {
            for (int k = 0; k < hx_transport_known_count(); k++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k ? ", " : "",
                         hx_transport_known_at(k));
            return hxi_error(HX_ERR_INVALID,
                             "--transport: unknown transport '%.*s' (known: all, %s; "
                             "halox-bench --list says which are built)",
                             (int) len, p, known);
        }
        if (!e)
            return HX_OK;
        p = e + 1;
    }
}

/* --newton: "on", "off", or both in either order ("on,off"). */
static hx_status parse_newton(const char *v, bench_opts *o)
{
    o->nnewton = 0;
    for (const char *p = v;;) {
        const char *e = strchr(p, ',');
        const size_t len = e ? (size_t) (e - p) : strlen(p);
        int mode = len == 2 && strncmp(p, "on", 2) == 0    ? 1
                   : len == 3 && strncmp(p, "off", 3) == 0 ? 0
                                                           : -1;
        if (mode < 0 || o->nnewton == 2 || (o->nnewton == 1 && o->newton[0] == mode))
            return hxi_error(HX_ERR_INVALID, "--newton takes on, off or on,off, not %s", v);
        o->newton[o->nnewton++] = mode;
        if (!e)
            return HX_OK;
        p = e + 1;
    }
}

/* One option's value into o: HX_OK, or an error naming the option
 * (hx_last_error); *known 0 where `a` is no option of a value. */
static hx_status parse_value(bench_opts *o, const char *a, const char *v, int *known)
{
    long n;
    *known = 1;
    if (strcmp(a, "--atoms") == 0) {
        HXI_CHECK(hxi_parse_long(a, v, 1, INT_MAX, &n));
        o->atoms = n;
    } else if (strcmp(a, "--grid") == 0) {
        HXI_CHECK(hx_grid_parse(v, o->grid));
    } else if (strcmp(a, "--transport") == 0) {
        HXI_CHECK(check_transports(v));
        o->transport = v;
    } else if (strcmp(a, "--iters") == 0) {
        HXI_CHECK(hxi_parse_long(a, v, 1, INT_MAX, &n));
        o->iters = (int) n;
    } else if (strcmp(a, "--warmup") == 0) {
        HXI_CHECK(hxi_parse_long(a, v, 0, INT_MAX, &n));
        o->warmup = (int) n;
    } else if (strcmp(a, "--cutoff") == 0) {
        HXI_CHECK(parse_positive(a, v, &o->cutoff));
    } else if (strcmp(a, "--density") == 0) {
        HXI_CHECK(parse_positive(a, v, &o->density));
    } else if (strcmp(a, "--dtype") == 0) {
        if (strcmp(v, "float") != 0 && strcmp(v, "double") != 0)
            return hxi_error(HX_ERR_INVALID, "--dtype takes float or double, not %s", v);
        o->dtype = v[0] == 'd' ? HX_DOUBLE : HX_FLOAT;
    } else if (strcmp(a, "--seed") == 0) {
        HXI_CHECK(hxi_parse_long(a, v, 0, LONG_MAX, &n));
        o->seed = (uint64_t) n;
    } else if (strcmp(a, "--csv") == 0) {
        o->csv = v;
    } else if (strcmp(a, "--tilt") == 0) {
        HXI_CHECK(hxi_parse_double(a, v, &o->tilt));
        if (!(o->tilt >= -0.5 && o->tilt <= 0.5))
            return hxi_error(HX_ERR_INVALID,
                             "--tilt: %s is beyond LAMMPS's limit: give a fraction of the box "
                             "length between -0.5 and 0.5",
                             v);
    } else if (strcmp(a, "--newton") == 0) {
        HXI_CHECK(parse_newton(v, o));
    } else if (strcmp(a, "--lattice") == 0) {
        if (strcmp(v, "fcc") != 0 && strcmp(v, "random") != 0)
            return hxi_error(HX_ERR_INVALID, "--lattice takes random or fcc, not %s", v);
        o->fcc = strcmp(v, "fcc") == 0;
    } else {
        *known = 0;
    }
    return HX_OK;
}

int parse_args(int argc, char **argv, bench_opts *o, int rank)
{
    memset(o, 0, sizeof *o);
    o->atoms = 32000;
    o->transport = "all";
    o->iters = 200;
    o->warmup = 20;
    o->cutoff = 2.8;
    o->density = 0.8442;
    o->dtype = HX_FLOAT;
    o->seed = 12345;
    o->newton[0] = 1;
    o->nnewton = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "exchange") == 0)
            continue;
        if (strcmp(a, "--no-put") == 0) {
            o->no_put = 1;
            continue;
        }
        if (strcmp(a, "--floor") == 0) {
            o->floor = 1;
            continue;
        }
        if (strcmp(a, "--field") == 0) {
            o->field = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (rank == 0)
                usage();
            return 1;
        }
        /* A value is the next word; an option that is not known is said
         * to be unknown, not short of a value. */
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        int known;
        hx_status st = parse_value(o, a, v, &known);
        if (!known) {
            if (rank == 0)
                fprintf(stderr, "halox-bench: unknown option %s (see --help)\n", a);
            return 2;
        }
        if (i + 1 >= argc) {
            if (rank == 0)
                fprintf(stderr, "halox-bench: option %s needs a value (see --help)\n", a);
            return 2;
        }
        if (st != HX_OK) {
            if (rank == 0)
                fprintf(stderr, "halox-bench: %s\n", hx_last_error());
            return 2;
        }
        i++;
    }
    return 0;
}

/* A list of sizes in bytes, N,N,...: each a whole number. */
static hx_status check_sizes(const char *list)
{
    char item[32];
    long n;
    for (const char *p = list;;) {
        const char *e = strchr(p, ',');
        const size_t len = e ? (size_t) (e - p) : strlen(p);
        snprintf(item, sizeof item, "%.*s", (int) (len < sizeof item ? len : sizeof item - 1), p);
        HXI_CHECK(hxi_parse_long("--bytes", item, 0, 1L << 34, &n));
        if (!e)
            return HX_OK;
        p = e + 1;
    }
}

int parse_pingpong(int argc, char **argv, const char **list, int *iters, int rank)
{
    for (int i = 2; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n = 0;
        hx_status st;
        if (strcmp(a, "--bytes") != 0 && strcmp(a, "--iters") != 0) {
            st = hxi_error(HX_ERR_INVALID, "unknown option %s (see halox-bench --help)", a);
        } else if (!v) {
            st = hxi_error(HX_ERR_INVALID, "option %s needs a value", a);
        } else if (strcmp(a, "--iters") == 0) {
            st = hxi_parse_long(a, v, 1, INT_MAX, &n);
            if (st == HX_OK)
                *iters = (int) n;
        } else {
            st = check_sizes(v); /* all of them, before any is measured */
            if (st == HX_OK)
                *list = v;
        }
        if (st != HX_OK) {
            if (rank == 0)
                fprintf(stderr, "halox-bench pingpong: %s\n", hx_last_error());
            return 2;
        }
    }
    return 0;
}
