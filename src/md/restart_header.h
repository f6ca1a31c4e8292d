/*
 * restart_header.h - the header of halox-md's restart files
 * (restart_header.c has the layout and the checks; restart.c writes and
 * reads the files). Not installed.
 */
#ifndef HALOX_MD_RESTART_HEADER_H
#define HALOX_MD_RESTART_HEADER_H

#include "md/restart.h"

#include <stddef.h>
#include <stdint.h>

enum { RST_HEADER = 256, RST_VERSION = 6 };
/* The largest block of cuts (version 6; restart_cuts.c) after the header. */
#define RST_CUTS_MAX (16 + 8 * 3 * (HX_MAX_CUT_DOMAINS + 1) + 8)
/* FNV-1a's start: every checksum of the file begins here. */
#define RST_FNV_START 0xcbf29ce484222325ull

/* FNV-1a over 64-bit words of data (n a multiple of 8), from h. */
uint64_t hxi_rst_fnv(uint64_t h, const void *data, size_t n);
/* The header of h into buf (RST_HEADER bytes), with the payload's sum. */
void hxi_rst_encode(unsigned char *buf, const hxi_md_restart *h, uint64_t payload_sum);
/* Bytes of the types block after the header (0 with one type). */
uint64_t hxi_rst_types_bytes(const hxi_md_restart *h);
/* Checks a header read from `path` (file length `fsize`) and decodes it
 * into h; *payload_sum is the records' checksum it holds. */
hx_status hxi_rst_decode(const unsigned char *buf, int64_t fsize, const char *path,
                         hxi_md_restart *h, uint64_t *payload_sum);

/* The cuts' block (restart_cuts.c): its bytes (0: no cuts), h's cuts
 * from d, encoded into b (hxi_rst_cuts_bytes of them), and decoded from
 * b's n bytes with its checksum and the cuts checked. */
uint64_t hxi_rst_cuts_bytes(const hxi_md_restart *h);
void hxi_rst_cuts_from(hxi_md_restart *h, const hx_decomp *d);
void hxi_rst_cuts_encode(unsigned char *b, const hxi_md_restart *h);
hx_status hxi_rst_cuts_decode(const unsigned char *b, uint64_t n, const char *path,
                              hxi_md_restart *h);

#endif /* HALOX_MD_RESTART_HEADER_H */
