/*
 * outfile.c - the files a user names for output (outfile.h).
 */
#define _XOPEN_SOURCE 700

#include "core/outfile.h"
#include "core/hxi.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Names whose meaning is the file as it is: /dev/stdout, /dev/null,
 * /proc/self/fd/N. */
static int system_name(const char *p)
{
    return strncmp(p, "/dev/", 5) == 0 || strncmp(p, "/proc/", 6) == 0;
}

/* Refuses a file type that is no place for output. */
static hx_status type_ok(const char *path, const char *what, mode_t m)
{
    if (S_ISDIR(m))
        return hxi_error(HX_ERR_IO, "%s \"%s\" is a directory: name a file in it", what, path);
    if (S_ISREG(m) || S_ISCHR(m) || S_ISFIFO(m))
        return HX_OK;
    return hxi_error(HX_ERR_IO,
                     "%s \"%s\" is %s, not a regular file, a character device or a FIFO: name "
                     "a file",
                     what, path, S_ISBLK(m) ? "a block device" : "a special file");
}

static hx_status copy_name(char *dest, size_t n, const char *src, const char *what)
{
    if (strlen(src) >= n)
        return hxi_error(HX_ERR_INVALID, "%s: the file name is too long (%zu bytes)", what,
                         strlen(src));
    memcpy(dest, src, strlen(src) + 1);
    return HX_OK;
}

hx_status hxi_out_target(const char *path, const char *what, char *dest, size_t n, int *in_place)
{
    struct stat sb;
    char real[PATH_MAX];
    *in_place = 0;
    if (!path || !path[0])
        return hxi_error(HX_ERR_INVALID, "%s: the file name is empty", what);
    if (lstat(path, &sb) != 0) {
        if (errno != ENOENT)
            return hxi_error(HX_ERR_IO, "%s \"%s\": %s", what, path, strerror(errno));
        return copy_name(dest, n, path, what); /* a new file */
    }
    if (S_ISLNK(sb.st_mode) || system_name(path)) {
        if (stat(path, &sb) != 0) {
            /* A link to nothing: opening the name creates its target. */
            *in_place = 1;
            return copy_name(dest, n, path, what);
        }
        HXI_CHECK(type_ok(path, what, sb.st_mode));
        if (!S_ISREG(sb.st_mode) || system_name(path) || !realpath(path, real)) {
            *in_place = 1;
            return copy_name(dest, n, path, what);
        }
        return copy_name(dest, n, real, what);
    }
    HXI_CHECK(type_ok(path, what, sb.st_mode));
    *in_place = !S_ISREG(sb.st_mode);
    return copy_name(dest, n, path, what);
}

hx_status hxi_out_open(hxi_outfile *o, const char *path, const char *what, hxi_out_mode mode)
{
    struct stat sb;
    int in_place;
    memset(o, 0, sizeof *o);
    snprintf(o->what, sizeof o->what, "%s", what);
    HXI_CHECK(copy_name(o->path, sizeof o->path, path ? path : "", what));
    HXI_CHECK(hxi_out_target(path, what, o->dest, sizeof o->dest, &in_place));
    if (in_place || mode != HXI_OUT_REPLACE) {
        o->fp = fopen(o->dest, mode == HXI_OUT_APPEND ? "a" : "w");
        if (!o->fp)
            return hxi_error(HX_ERR_IO, "%s: cannot write \"%s\": %s", what, path, strerror(errno));
        return HX_OK;
    }
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->dest, (long) getpid());
    o->fp = fopen(o->tmp, "w");
    if (!o->fp) {
        hx_status st = hxi_error(HX_ERR_IO,
                                 "%s: cannot write \"%s\": cannot create %s: %s (check the "
                                 "directory exists and is writable)",
                                 what, path, o->tmp, strerror(errno));
        o->tmp[0] = '\0';
        return st;
    }
    /* The new file keeps the permissions of the one it replaces. */
    if (stat(o->dest, &sb) == 0)
        (void) fchmod(fileno(o->fp), sb.st_mode & 07777);
    return HX_OK;
}

hx_status hxi_out_probe(const char *path, const char *what)
{
    hxi_outfile o;
    char dest[sizeof o.dest];
    int in_place;
    HXI_CHECK(hxi_out_target(path, what, dest, sizeof dest, &in_place));
    if (in_place)
        return HX_OK;
    HXI_CHECK(hxi_out_open(&o, path, what, HXI_OUT_REPLACE));
    hxi_out_abort(&o);
    return HX_OK;
}

hx_status hxi_out_check(hxi_outfile *o)
{
    if (!o->fp)
        return hxi_error(HX_ERR_IO, "%s \"%s\" is not open", o->what, o->path);
    errno = 0;
    if (fflush(o->fp) != 0 || ferror(o->fp))
        return hxi_error(HX_ERR_IO, "%s: writing \"%s\" failed: %s", o->what, o->path,
                         errno ? strerror(errno) : "a write error");
    return HX_OK;
}

hx_status hxi_out_commit(hxi_outfile *o)
{
    hx_status st = hxi_out_check(o);
    if (o->fp && fclose(o->fp) != 0 && st == HX_OK)
        st = hxi_error(HX_ERR_IO, "%s: writing \"%s\" failed: %s", o->what, o->path,
                       strerror(errno));
    o->fp = NULL;
    if (st == HX_OK && o->tmp[0] && rename(o->tmp, o->dest) != 0)
        st = hxi_error(HX_ERR_IO, "%s: cannot rename %s to %s: %s", o->what, o->tmp, o->dest,
                       strerror(errno));
    if (st != HX_OK && o->tmp[0])
        remove(o->tmp);
    o->tmp[0] = '\0';
    return st;
}

void hxi_out_abort(hxi_outfile *o)
{
    if (o->fp)
        fclose(o->fp);
    o->fp = NULL;
    if (o->tmp[0])
        remove(o->tmp);
    o->tmp[0] = '\0';
}
